"""How the two-layer trace draws a matrix: token rows, named columns, heatmap panels in a grid, chart slots that
let a step change reuse the plots on screen, and tables with their downloads."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from ui.elements.comparisons import block_lines
from ui.elements.figures import heatmap
from ui.elements.widgets import OnFirstUse, chart, download_matrix, download_table

pd = OnFirstUse("pandas")


# ---------------------------------------------------------------- small helpers


def token_rows(tokens: tuple[str, ...]) -> list[str]:
    """Row labels: position and token, unique even when a word repeats."""
    return [f"{i + 1} {token}" for i, token in enumerate(tokens)]


def column_names(n: int, prefix: str = "c") -> list[str]:
    return [f"{prefix}{j + 1}" for j in range(n)]


def head_columns(config_heads: int, d_head: int) -> list[str]:
    return [f"h{h + 1}·{j + 1}" for h in range(config_heads) for j in range(d_head)]


def matrix(
    matrix: np.ndarray,
    *,
    title: str,
    rows: list[str],
    columns: list[str],
    key: str,
    alt: str,
    signed: bool = True,
    column_breaks: tuple[int, ...] = (),
    row_breaks: tuple[int, ...] = (),
) -> None:
    """An annotated heatmap with its shape in the title and a CSV download under it."""
    values = np.ascontiguousarray(matrix, dtype=np.float64)
    fig = _heatmap(
        values.tobytes(), values.shape, title, tuple(rows), tuple(columns), signed, column_breaks, row_breaks
    )
    slot = _slot()
    chart(fig, key=key, alt=alt, slot=slot)
    download_matrix(values, rows, columns, name=title, key=slot or key)


@lru_cache(maxsize=1024)  # 1,024 × ~2 kB
def _heatmap(
    data: bytes,
    shape: tuple[int, ...],
    title: str,
    rows: tuple[str, ...],
    columns: tuple[str, ...],
    signed: bool,
    column_breaks: tuple[int, ...],
    row_breaks: tuple[int, ...],
) -> go.Figure:
    """Build a heatmap once per distinct matrix and labels (figures are never mutated after this)."""
    matrix = np.frombuffer(data, dtype=np.float64).reshape(shape)
    label = " × ".join(str(n) for n in shape)
    fig = heatmap(matrix, x=columns, y=rows, title=f"{title}  ({label})", signed=signed)
    room = 80 if len(columns) <= 8 else 115  # room for the title above the top axis (labels rotate when many)
    fig.update_layout(margin={"t": room}, height=fig.layout.height + room - 50, template="none")
    fig.update_traces(textfont_size=12)
    return block_lines(fig, column_breaks=column_breaks, row_breaks=row_breaks)


def panel(values: np.ndarray, title: str, rows: list[str], columns: list[str], key: str, **extra: object) -> dict:
    """Keyword arguments of one matrix call (alt text = title unless given)."""
    return {"matrix": values, "title": title, "rows": rows, "columns": columns, "key": key, "alt": title, **extra}


def panel_grid(panels: Sequence[dict], per_row: int = 2, proportional: bool = False) -> None:
    """Draw matrices per_row to a row, one per row once a matrix is wider than 6 or taller than 8 columns, so cells
    stay legible. `proportional` stacks them with widths proportional to their columns: equal cells, so a 6 → 8
    widening is seen as a wider matrix."""
    widest, tallest = (max(len(p[axis]) for p in panels) for axis in ("columns", "rows"))
    if proportional:
        for panel in panels:
            width = len(panel["columns"]) + 2  # + room for the row labels
            slot = st.columns([width, widest + 2 - width])[0] if width < widest + 2 else st.container()
            with slot:
                matrix(**panel)
        return
    if tallest > 8 or widest > 6:
        per_row = 1
    for start in range(0, len(panels), per_row):
        for column, panel in zip(st.columns(per_row), panels[start : start + per_row], strict=False):
            with column:
                matrix(**panel)


def did(text: str) -> None:
    st.markdown(f"**What this step did.** {text}")


def spaced(tokens: tuple[str, ...]) -> str:
    return " ".join(tokens)


def frame_table(frame: pd.DataFrame, *, key: str, name: str, height: int | None = None) -> None:
    """A table with its CSV download; probabilities and masses at 3 decimals, logits at 2, as the primer prints."""
    config = {
        column: st.column_config.NumberColumn(format="%.2f" if "logit" in column else "%.3f")
        for column in frame.columns
        if frame[column].dtype.kind == "f"
    }
    st.dataframe(frame, hide_index=True, key=key, column_config=config, height=height or "auto")
    download_table(frame, name=name, key=key)


def top_table(rows: list, key: str) -> None:
    """A top-k table (rank, token, logit, probability) with its CSV download."""
    frame = pd.DataFrame(
        [
            {"rank": r.rank, "token": r.token, "logit": round(r.logit, 2), "probability": round(r.probability, 3)}
            for r in rows
        ]
    )
    frame_table(frame, key=key, name="top 5")


_SLOTS: ContextVar[Iterator[int] | None] = ContextVar("trace_chart_slots", default=None)


@contextmanager
def chart_slots() -> Iterator[None]:
    """Inside, the matrices take the keys tr-step-0, tr-step-1, … in drawing order instead of their own: picking
    another step hands the charts already on screen the new step's figures (Plotly.react) instead of removing them
    and building new plots."""
    token = _SLOTS.set(itertools.count())
    try:
        yield
    finally:
        _SLOTS.reset(token)


def _slot() -> str | None:
    """The next chart slot's key inside `chart_slots`, else None (the matrix keeps its own key)."""
    slots = _SLOTS.get()
    return None if slots is None else f"tr-step-{next(slots)}"
