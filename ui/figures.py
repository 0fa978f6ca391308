"""Plotly figure builders shared by the pages (graph_objects, not express: ~20× faster to build a heatmap)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

SIGNED_SCALE = "RdBu"  # diverging, centred at 0, for signed values
PROBABILITY_SCALE = "Cividis"  # sequential, colour-blind safe, for weights and probabilities
FONT = {"family": "sans-serif", "size": 14}


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left", "font": {"size": 16}},
        height=height,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        font=FONT,
        paper_bgcolor="rgba(0,0,0,0)",
    )
    return fig


def heatmap(
    matrix: np.ndarray,
    *,
    x: Sequence[str],
    y: Sequence[str],
    title: str,
    signed: bool = True,
    decimals: int = 3,
    zrange: tuple[float, float] | None = None,
    height: int | None = None,
    colorbar: bool = False,
) -> go.Figure:
    """Annotated heatmap with labelled axes: RdBu centred at 0 for signed values, Cividis for probabilities.

    -inf cells (masked scores) are left uncoloured and labelled "−∞".
    """
    values = np.asarray(matrix, dtype=np.float64)
    finite = np.where(np.isfinite(values), values, np.nan)
    text = np.where(np.isneginf(values), "−∞", np.vectorize(lambda v: f"{v:.{decimals}f}")(np.nan_to_num(values)))
    if zrange is None:
        if signed:
            bound = float(np.nanmax(np.abs(finite))) if np.isfinite(finite).any() else 1.0
            zrange = (-(bound or 1.0), bound or 1.0)
        else:
            zrange = (0.0, 1.0)
    fig = go.Figure(
        go.Heatmap(
            z=finite,
            x=list(x),
            y=list(y),
            text=text,
            texttemplate="%{text}",
            textfont={"size": 13},
            colorscale=SIGNED_SCALE if signed else PROBABILITY_SCALE,
            zmin=zrange[0],
            zmax=zrange[1],
            zmid=0.0 if signed else None,
            showscale=colorbar,
            hovertemplate="row %{y}<br>column %{x}<br>value %{text}<extra></extra>",
            xgap=1,
            ygap=1,
        )
    )
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category", side="top")
    return _layout(fig, title, height or 90 + 34 * len(y))


def bars(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    highlight: Sequence[bool] | None = None,
    value_format: str = ".3f",
    y_title: str = "",
    y_range: tuple[float, float] | None = None,
    height: int = 320,
) -> go.Figure:
    """Vertical bar chart with values printed on the bars; highlighted bars in the primary colour, the rest grey."""
    flags = list(highlight) if highlight is not None else [True] * len(labels)
    colours = ["#1f5f99" if flag else "#a9b4c2" for flag in flags]
    fig = go.Figure(
        go.Bar(
            x=list(labels),
            y=list(values),
            marker_color=colours,
            text=[format(v, value_format) for v in values],
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{x}: %{y}<extra></extra>",
        )
    )
    fig.update_xaxes(type="category")
    fig.update_yaxes(title=y_title, range=list(y_range) if y_range else None)
    return _layout(fig, title, height)
