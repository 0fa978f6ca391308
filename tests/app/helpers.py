"""What the page tests share: reading the plotly figures a page sent, as the browser would receive them."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
from streamlit.testing.v1 import AppTest


def run_page(script: str, **query: str) -> AppTest:
    """Run a page script with the given URL query, as a shared link would open it; it must not raise."""
    at = AppTest.from_file(script, default_timeout=30)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def chart_specs(at: AppTest) -> list[dict]:
    """The page's plotly figures, in page order, as the JSON sent to the browser."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def numbers(data: object) -> np.ndarray:
    """A plotly data array as floats: a plain or nested list (None → NaN), or plotly's typed-array form
    {'dtype', 'bdata' (base64), optional 'shape'}."""
    if isinstance(data, dict):
        flat = np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"])).astype(np.float64)
        return flat.reshape([int(n) for n in str(data["shape"]).split(",")]) if "shape" in data else flat
    if isinstance(data, list) and data and isinstance(data[0], (list, dict)):
        return np.array([numbers(row) for row in data])
    return np.asarray([np.nan if v is None else v for v in data], dtype=np.float64)


def shown(markdown: str) -> str:
    """Markdown text as the reader sees it: backslash escapes (how user-derived text is made inert) removed."""
    return re.sub(r"\\(.)", r"\1", markdown)
