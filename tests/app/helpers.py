"""What the page tests share: reading the plotly figures and static tables a page sent, as the browser receives them."""

from __future__ import annotations

import base64
import html
import json
import re
from html.parser import HTMLParser

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


CHART_DATA = re.compile(r'<script type="application/json" class="primer-chart-data">(.*?)</script>', re.DOTALL)


def charts(at: AppTest) -> list[dict]:
    """The page's charts, in page order, as the chart script reads them: `figure`, `alt`, `key` and plotly's
    `config`."""
    return [json.loads(data) for element in at.get("html") for data in CHART_DATA.findall(element.proto.body)]


def chart_specs(at: AppTest) -> list[dict]:
    """The page's plotly figures, in page order, as the JSON sent to the browser."""
    return [chart["figure"] for chart in charts(at)]


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


class _Cells(HTMLParser):
    """Collects a static table's rows of cell texts (header row first)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("th", "td"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def static_tables(at: AppTest) -> dict[str, list[list[str]]]:
    """The page's static tables (ui/elements/static_table.py) by their label: rows of cell texts as shown, header row
    first."""
    tables = {}
    for element in at.get("html"):
        heading = r"(?:<h3>[^<]*</h3>)?"  # a table may carry its section heading in the same element
        found = re.match(heading + r'<div class="static-table" role="region" aria-label="([^"]*)"', element.proto.body)
        if found:
            cells = _Cells()
            cells.feed(element.proto.body)
            tables[found.group(1)] = cells.rows
    return tables


def table_footnote(at: AppTest, label: str) -> str:
    """The footnote under the static table named `label`, as shown (unescaped)."""
    for element in at.get("html"):
        if f'aria-label="{html.escape(label, quote=True)}"' in element.proto.body:
            found = re.search(r'<p class="table-footnote">(.*?)</p>', element.proto.body)
            return html.unescape(found.group(1)) if found else ""
    raise AssertionError(f"no table named {label}")


class _Cards(HTMLParser):
    """Collects metric cards' texts by class (ui/elements/metric_cards.py): one dict per card, text as shown
    (unescaped)."""

    PARTS = ("metric-label", "metric-help", "metric-help-text", "metric-value", "metric-note")

    def __init__(self) -> None:
        super().__init__()
        self.cards: list[dict[str, str]] = []
        self._part: list[tuple[str, int]] = []  # (part, depth) of open parts; text goes to the innermost one
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._depth += 1
        classes = dict(attrs).get("class", "")
        if classes == "metric-card":
            self.cards.append(dict.fromkeys(self.PARTS, ""))
        elif classes in self.PARTS:
            self._part.append((classes, self._depth))

    def handle_endtag(self, tag: str) -> None:
        if self._part and self._part[-1][1] == self._depth:
            self._part.pop()
        self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._part and self.cards:
            self.cards[-1][self._part[-1][0]] += data


def metric_cards(at: AppTest) -> list[dict[str, str]]:
    """Every metric card on the page (ui/elements/metric_cards.py), in page order: its label, value, note and help text
    (`metric-help` is the "?" button's own text)."""
    cards = []
    for element in at.get("html"):
        if 'class="metric-cards"' in element.proto.body:
            parser = _Cards()
            parser.feed(element.proto.body)
            cards += parser.cards
    return cards


TABLE_DOWNLOAD = re.compile(
    r'<button type="button" class="table-download" data-file="([^"]*)" data-csv="([^"]*)">(.*?)</button>'
)


def table_downloads(at: AppTest) -> dict[str, tuple[str, str]]:
    """The CSV downloads inside the page's static tables: button text -> (file name, CSV), as the browser saves them."""
    return {
        html.unescape(label): (html.unescape(file), html.unescape(data))
        for element in at.get("html")
        for file, data, label in TABLE_DOWNLOAD.findall(element.proto.body)
    }
