"""Streamlit helpers every page uses: the "what you see / why it matters" box, charts, downloads, shapes."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from ui.elements import browser, chart_element
from ui.elements.inert import frame_csv
from ui.elements.navigation import PageSpec
from ui.elements.shell import ensure_navigation
from ui.elements.static_table import csv_bytes

if TYPE_CHECKING:  # pandas costs a third of a second to import: only pages that show a table load it
    import pandas as pd


class OnFirstUse(ModuleType):
    """A module imported when one of its names is first read: pandas and pyarrow cost a third of a second of a cold
    start, and most first screens show no table. `pd = OnFirstUse("pandas")` then `pd.DataFrame(...)` as usual."""

    def __getattr__(self, name: str) -> object:
        return getattr(importlib.import_module(self.__name__), name)


# plotly's toolbar without its logo, the selection tools (nothing here reads a selection) and "Share chart", which
# would upload the figure to Plotly's cloud.
CHART_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d", "select2d", "sendChartToCloud"]}


LAST_PAGE = "primer_last_page"  # the page the session ran last: a run of another page is a page being opened


def setup_page(spec: PageSpec) -> bool:
    """Route a cold deep link through the app's navigation, then the page's title and one-line summary. True when this
    run opens the page (a new session, or arriving from another page), False for a rerun of the page itself."""
    ensure_navigation()
    opened = st.session_state.get(LAST_PAGE) != spec.url_path
    st.session_state[LAST_PAGE] = spec.url_path
    browser.install()
    st.title(spec.landmark)
    st.caption(spec.summary)
    return opened


def open_tab(labels: Sequence[str], views: Sequence[Callable[..., None]], *args: object) -> None:
    """Tabs whose open one alone is drawn (`views[i](*args)`); the link holds the open one (`view=`), and picking
    another reruns the page or its fragment, which then draws only that tab."""
    tabs = st.tabs(labels, key="view", on_change="rerun", bind="query-params")
    for tab, view in zip(tabs, views, strict=True):
        if tab.open:
            with tab:
                view(*args)


def explain(what: str, why: str) -> None:
    """The annotation under every chart: what the reader sees (from live numbers) and why a manager should care.
    One box, one text element (two paragraphs): each element a rerun sends costs the browser time to apply."""
    st.container(border=True).markdown(f"**What you see.** {what}\n\n**Why it matters.** {why}")


def chart(fig: go.Figure, *, key: str, alt: str, slot: str | None = None) -> None:
    """Draw a plotly figure full-width with the PNG download button kept and an accessible description; `slot` (see
    chart_element.draw) lets figures that take turns in one place share a plot."""
    chart_element.draw(fig, key=key, config=CHART_CONFIG, alt=alt, slot=slot)


def matrix_frame(matrix: np.ndarray, rows: Sequence[str], columns: Sequence[str]) -> pd.DataFrame:
    """A labelled DataFrame of a matrix (duplicate row labels such as two 'the' tokens are kept, numbered)."""
    import pandas as pd

    return pd.DataFrame(np.asarray(matrix), index=_unique(rows), columns=_unique(columns))


def download_matrix(matrix: np.ndarray, rows: Sequence[str], columns: Sequence[str], *, name: str, key: str) -> None:
    """A CSV download of a matrix with its row and column labels, built only when clicked (reruns stay cheap)."""
    values, labels = np.array(matrix, dtype=np.float64), (list(rows), list(columns))
    download_csv(lambda: frame_csv(matrix_frame(values, *labels), index=True), name=name, key=key)


def download_rows(rows: Sequence[Sequence[object]], columns: Sequence[str], *, name: str, key: str) -> None:
    """A CSV download of rows under column names, written only when clicked (no pandas)."""
    download_csv(lambda: csv_bytes(columns, rows), name=name, key=key)


def download_table(frame: pd.DataFrame, *, name: str, key: str) -> None:
    """A CSV download of a table, built only when clicked."""
    download_csv(lambda: frame_csv(frame, index=False), name=name, key=key)


def download_csv(data: Callable[[], bytes], *, name: str, key: str) -> None:
    """A CSV download button, `key`.csv, whose bytes are made by `data` only when the reader clicks (no rerun on
    click). It keeps no state, so it has no widget key: every keyed entry in the session is read again by each
    selector and number field on every run."""
    st.download_button(f"Download {name} (CSV)", data, file_name=f"{key}.csv", mime="text/csv", on_click="ignore")


def shape_label(rows: int, columns: int, rows_name: str = "T", columns_name: str = "d_model") -> str:
    """Shape caption in the primer's style, e.g. 'shape T × d_model = 3 × 5'."""
    return f"shape {rows_name} × {columns_name} = {rows} × {columns}"


def _unique(labels: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out
