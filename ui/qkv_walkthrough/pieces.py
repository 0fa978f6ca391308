"""Pieces every section of the QKV walkthrough shares: cached figures by small keys, a matrix with its shape and
reading, and the words that quote tokens, vectors and blends."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from ui.elements import comparisons, figures
from ui.elements.widgets import chart, download_matrix
from ui.qkv_walkthrough.state import EXAMPLE

MADE_UP_SEED = 0
WORDS = list(EXAMPLE.vocabulary)


# ---------------------------------------------------------------- shared pieces


def small(values: np.ndarray) -> tuple:
    """A small matrix or vector as nested tuples: a cheap, exact cache key."""
    return tuple(map(tuple, values.tolist())) if np.ndim(values) == 2 else tuple(np.asarray(values).tolist())


@lru_cache(maxsize=512)  # 512 × ~5 kB
def _built(builder: str, data: tuple | None, options: tuple) -> go.Figure:
    module = comparisons if hasattr(comparisons, builder) else figures
    fig = getattr(module, builder)(*([] if data is None else [np.array(data)]), **dict(options))
    if builder == "heatmap":  # title at the very top, the top axis's token labels below it, never overlapping
        title = {"y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 6}}
        fig.update_layout(title=title, margin={"t": 78}, height=fig.layout.height + 28)
    return fig


def figure(builder: str, data: tuple | None = None, **options: object) -> go.Figure:
    """A shared builder's figure (ui/elements/figures.py, comparisons.py) for small, hashable arguments, built once and
    shared (read-only by convention).

    Plotly's validation is most of a chart's cost: a cached figure goes to the browser without being validated again.
    """
    return _built(builder, data, tuple(options.items()))


def matrix(
    values: np.ndarray,
    rows: list[str],
    columns: list[str],
    title: str,
    key: str,
    shape: str,
    reading: str,
    *,
    signed: bool = True,
    decimals: int = 3,
    half_up: bool = False,
) -> None:
    """One heatmap with its shape, a one-line plain reading and a CSV download (half_up: labels rounded as printed)."""
    st.caption(f"{shape}. {reading}")
    options = {"half_up": True} if half_up else {}
    fig = figure(
        "heatmap",
        small(values),
        x=tuple(columns),
        y=tuple(rows),
        title=title,
        signed=signed,
        decimals=decimals,
        **options,
    )
    chart(fig, key=f"qkv-{key}", alt=f"{title}, {shape}")
    download_matrix(values, rows, columns, name=title.split(" =")[0], key=f"qkv-{key}")


def quoted(tokens: list[str]) -> list[str]:
    return [f"'{token}'" for token in tokens]


def vector(values: np.ndarray, decimals: int = 3) -> str:
    """'[-0.363, 0.011, …]': a row as the primer prints it."""
    return "[" + ", ".join(f"{v:.{decimals}f}" for v in values) + "]"


def blend(weights: np.ndarray, tokens: list[str], reader: str) -> str:
    """'sat' takes 42% of its information from itself, 30% from 'the' and 29% from 'cat'."""
    parts = [
        f"{w:.0%} from {'itself' if token == reader else repr(token)}"
        for w, token in sorted(zip(weights, tokens, strict=True), key=lambda pair: -pair[0])
        if w > 0
    ]
    parts[0] = parts[0].replace(" from ", " of its information from ", 1)
    joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"'{reader}' takes {joined}."
