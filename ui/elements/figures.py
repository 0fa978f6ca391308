"""Plotly figure builders shared by the pages (graph_objects, not express: ~20× faster to build a heatmap): the colour
rule, the layout, heatmaps, panels of heatmaps, the flow diagram, status grids and simple bars."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from core.explain.primer import printed

# One colour rule for every chart (ColorBrewer scales, safe for the common colour-vision deficiencies):
# - signed values: diverging RdBu centred at 0 (red below 0, near-white at 0, blue above);
# - probabilities and attention weights: sequential Blues, 0 = lightest, 1 = darkest (the positive half of RdBu, so
#   dark blue means "large" everywhere);
# - masked cells (a token may not read a later one): neutral grey, labelled in the cell and under the chart.
SIGNED_SCALE = "RdBu"
BLUES = (
    (0.0, "rgb(247,251,255)"),
    (0.125, "rgb(222,235,247)"),
    (0.25, "rgb(198,219,239)"),
    (0.375, "rgb(158,202,225)"),
    (0.5, "rgb(107,174,214)"),
    (0.625, "rgb(66,146,198)"),
    (0.75, "rgb(33,113,181)"),
    (0.875, "rgb(8,81,156)"),
    (1.0, "rgb(8,48,107)"),
)  # ColorBrewer Blues, as plotly names it
PROBABILITY_SCALE = [list(stop) for stop in BLUES]
MASKED_COLOUR = "#9a9a9a"
MASKED_NOTE = "grey = masked (a later word)"
# Blues with an exact 0 in grey, for causal weights (a softmax gives exactly 0 only where the mask put −∞).
MASKED_ZERO_SCALE = [[0.0, MASKED_COLOUR], *([max(at, 1e-9), colour] for at, colour in BLUES)]
FONT = {"family": "sans-serif", "size": 14}


def layout(title: str, height: int, **extra: object) -> dict:
    """The shared layout as a plain dict, so a figure is built in one constructor call (each update_* call costs ms)."""
    return {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 16}},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "font": FONT,
        "paper_bgcolor": "rgba(0,0,0,0)",
        **extra,
    }


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(layout(title, height))
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
    half_up: bool = False,
) -> go.Figure:
    """Annotated heatmap with labelled axes: RdBu centred at 0 for signed values, Blues (0 = lightest) for
    probabilities and weights.

    Masked cells are grey and labelled: −∞ cells (masked scores, drawn empty over a grey rectangle) say "−∞"; in a
    square weights matrix over the same tokens whose whole upper triangle is exactly 0 (a causal softmax), those
    cells keep their value 0 in the data, are coloured grey by the scale (only an exact 0 is) and say "masked".
    half_up labels cells as a person prints them (decimal, half up: 0.10275 → 0.1028) instead of float
    rounding.
    """
    values = np.asarray(matrix, dtype=np.float64)
    causal = _causal_zeros(values, x, y) if not signed else np.zeros(values.shape, dtype=bool)
    masked = np.isneginf(values) | causal
    finite = np.where(np.isfinite(values), values, np.nan)
    label = (lambda v: printed(v, decimals)) if half_up else (lambda v: f"{v:.{decimals}f}")
    formatted = np.array([label(v) for v in np.nan_to_num(values).ravel()]).reshape(values.shape)
    text = np.where(np.isneginf(values), "−∞", np.where(masked, "masked" if len(x) <= 8 else "×", formatted))
    if zrange is None:
        if signed:
            bound = float(np.nanmax(np.abs(finite))) if np.isfinite(finite).any() else 1.0
            zrange = (-(bound or 1.0), bound or 1.0)
        else:
            zrange = (0.0, 1.0)
    trace = {
        "type": "heatmap",
        "z": finite,
        "x": list(x),
        "y": list(y),
        "text": text,
        "texttemplate": "%{text}",
        "textfont": {"size": 13},
        "colorscale": SIGNED_SCALE if signed else MASKED_ZERO_SCALE if causal.any() else PROBABILITY_SCALE,
        "zmin": zrange[0],
        "zmax": zrange[1],
        "zmid": 0.0 if signed else None,
        "showscale": colorbar,
        "hovertemplate": "row %{y}<br>column %{x}<br>value %{text}<extra></extra>",
        "xgap": 1,
        "ygap": 1,
    }
    axes = {
        "yaxis": {"autorange": "reversed", "type": "category"},
        "xaxis": {"type": "category", "side": "top"},
    }
    if masked.any():
        axes |= {"shapes": _masked_cells(np.isneginf(values)), "annotations": [_masked_note()]}
        axes["margin"] = {"l": 10, "r": 10, "t": 50, "b": 34}
    return go.Figure(data=[trace], layout=layout(title, (height or 90 + 34 * len(y)) + 24 * masked.any(), **axes))


def _causal_zeros(values: np.ndarray, x: Sequence[str], y: Sequence[str]) -> np.ndarray:
    """The cells a causal mask zeroed, if this is a square weights matrix over the same tokens with an all-zero strict
    upper triangle; no cells otherwise."""
    n = values.shape[0]
    if values.ndim != 2 or n < 2 or values.shape[1] != n or list(x) != list(y):
        return np.zeros(values.shape, dtype=bool)
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    return upper if not values[upper].any() else np.zeros(values.shape, dtype=bool)


def _masked_cells(masked: np.ndarray) -> list[dict]:
    """Grey rectangles under the heatmap (its masked cells are empty), one per run of masked cells in a row."""
    shapes = []
    for row, flags in enumerate(masked):
        columns = np.flatnonzero(flags)
        runs = np.split(columns, np.flatnonzero(np.diff(columns) > 1) + 1) if columns.size else []
        shapes += [
            {
                "type": "rect",
                "layer": "between",  # above the grid lines, under the cells' labels
                "xref": "x",
                "yref": "y",
                "x0": run[0] - 0.5,
                "x1": run[-1] + 0.5,
                "y0": row - 0.5,
                "y1": row + 0.5,
                "fillcolor": MASKED_COLOUR,
                "line": {"width": 0},
            }
            for run in runs
        ]
    return shapes


def _masked_note() -> dict:
    return {
        "text": f"<span style='color:{MASKED_COLOUR}'>■</span> {MASKED_NOTE}",
        "xref": "paper",
        "yref": "paper",
        "x": 0,
        "y": 0,
        "xanchor": "left",
        "yanchor": "top",
        "yshift": -6,
        "showarrow": False,
        "font": {"size": 12},
    }


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
    trace = {
        "type": "bar",
        "x": list(labels),
        "y": list(values),
        "marker": {"color": colours},
        "text": [format(v, value_format) for v in values],
        "textposition": "outside",
        "cliponaxis": False,
        "hovertemplate": "%{x}: %{y}<extra></extra>",
    }
    axes = {
        "xaxis": {"type": "category"},
        "yaxis": {"title": {"text": y_title}, "range": list(y_range) if y_range else None},
    }
    return go.Figure(data=[trace], layout=layout(title, height, **axes))


def heatmap_panels(
    panels: Sequence[tuple[str, np.ndarray]],
    *,
    title: str,
    outlines: Sequence[tuple[int, int, int, int] | None] | None = None,
    zrange: tuple[float, float] | None = None,
    value_format: str = ".3g",
    height: int = 300,
    per_row: int | None = None,
) -> go.Figure:
    """Small annotated grids side by side in ONE figure (one chart to send, not several), each under its subtitle;
    `per_row` wraps them into rows (2 × 2 for four grids keeps each legible on a phone's 390 px).

    Signed RdBu colours centred at 0, one scale per panel unless `zrange` is given. Cells are addressed (row, column)
    from the top-left as the primer prints grids; `outlines[i] = (row, column, rows, columns)` draws a box around a
    block of cells in panel i (a sliding window, the cell it produces). The figure is built in one constructor call:
    plotly validates once, ~8× faster than adding traces, axes and shapes one by one.
    """
    gap, n = 0.1, len(panels)  # room for the y-axis numbers of the panel to the right
    n_columns = min(per_row or n, n)
    rows_n = -(-n // n_columns)
    width = (1 - gap * (n_columns - 1)) / n_columns
    row_gap = 0.2 if rows_n > 1 else 0.0
    cell = (1 - row_gap * (rows_n - 1)) / rows_n
    data: list[dict] = []
    layout: dict = {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 16}},
        "height": height,
        # The panels' column numbers sit above them: each extra title line needs room for itself and for plotly's
        # centring of the title in the margin, or its last line runs into those numbers.
        "margin": {"l": 10, "r": 10, "t": 70 + 40 * title.count("<br>"), "b": 40},
        "font": FONT,
        "paper_bgcolor": "rgba(0,0,0,0)",
        "annotations": [],
        "shapes": [],
    }
    for index, (subtitle, matrix) in enumerate(panels):
        values = np.asarray(matrix, dtype=np.float64) + 0.0  # + 0.0 turns −0.0 into 0.0 for the labels
        peak = float(np.max(np.abs(values))) or 1.0
        low, high = zrange or (-peak, peak)
        x, y = f"x{index + 1 if index else ''}", f"y{index + 1 if index else ''}"
        data.append(
            {
                "type": "heatmap",
                "z": values,
                "text": [[format(v, value_format) for v in row] for row in values],
                "texttemplate": "%{text}",
                "textfont": {"size": 13},
                "colorscale": SIGNED_SCALE,
                "zmin": low,
                "zmax": high,
                "zmid": 0.0,
                "showscale": False,
                "xgap": 1,
                "ygap": 1,
                "xaxis": x,
                "yaxis": y,
                "hovertemplate": f"{subtitle}<br>row %{{y}}, column %{{x}}<br>value %{{text}}<extra></extra>",
            }
        )
        panel_row, panel_column = divmod(index, n_columns)
        left, top = panel_column * (width + gap), 1 - panel_row * (cell + row_gap)
        axis = {"dtick": 1, "showgrid": False, "zeroline": False, "constrain": "domain"}
        layout[f"xaxis{x[1:]}"] = {**axis, "domain": [left, min(1.0, left + width)], "side": "top", "anchor": y}
        layout[f"yaxis{y[1:]}"] = {
            **axis,
            "autorange": "reversed",
            "scaleanchor": x,
            "anchor": x,
            "domain": [max(0.0, top - cell), min(1.0, top)],
        }
        layout["annotations"].append(
            {
                "text": subtitle,
                "x": 0.5,
                "y": -0.03,
                "xref": f"{x} domain",
                "yref": f"{y} domain",
                "yanchor": "top",
                "showarrow": False,
            }
        )
        box = outlines[index] if outlines else None
        if box is not None:
            row, column, rows, columns = box
            layout["shapes"].append(
                {
                    "type": "rect",
                    "x0": column - 0.5,
                    "x1": column + columns - 0.5,
                    "y0": row - 0.5,
                    "y1": row + rows - 0.5,
                    "xref": x,
                    "yref": y,
                    "line": {"color": "#e08a00", "width": 4},
                }
            )
    return go.Figure(data=data, layout=layout)


def flow(
    weights: np.ndarray,
    *,
    sources: Sequence[str],
    targets: Sequence[str],
    title: str,
    height: int = 300,
) -> go.Figure:
    """Sankey of a weight matrix: row i of `weights` is how target i draws on each source (link width = weight).

    For attention: sources are the tokens' values (the payload), targets the reading tokens, weights the pattern.
    """
    values = np.asarray(weights, dtype=np.float64)
    n_targets, n_sources = values.shape
    palette = ["#1f5f99", "#b35900", "#4d8f3a", "#7b4f9d", "#a23b3b", "#3b8ea2", "#8c7a2e", "#555555"]
    links = [(j, i, values[i, j]) for i in range(n_targets) for j in range(n_sources) if values[i, j] > 0]
    heights = [(j + 0.5) / n_sources for j in range(n_sources)] + [(i + 0.5) / n_targets for i in range(n_targets)]
    fig = go.Figure(
        go.Sankey(
            arrangement="fixed",
            node={
                "label": list(sources) + list(targets),
                "color": [palette[j % len(palette)] for j in range(n_sources)] + ["#a9b4c2"] * n_targets,
                "pad": 18,
                "thickness": 16,
                "x": [0.01] * n_sources + [0.99] * n_targets,
                "y": heights,
            },
            link={
                "source": [j for j, _, _ in links],
                "target": [n_sources + i for _, i, _ in links],
                "value": [w for _, _, w in links],
                "color": [_rgba(palette[j % len(palette)], 0.45) for j, _, _ in links],
                "customdata": [f"{w:.0%}" for _, _, w in links],
                "hovertemplate": "%{target.label} takes %{customdata} from %{source.label}<extra></extra>",
            },
            valueformat=".3f",
            textfont={"color": "#1f1f1f", "size": 13, "shadow": "none"},
        )
    )
    return _layout(fig, title, height)


def _rgba(hex_colour: str, alpha: float) -> str:
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def status_grid(
    status: np.ndarray,
    *,
    x: Sequence[str],
    y: Sequence[str],
    labels: Sequence[str],
    title: str,
    highlight_column: int | None = None,
    height: int | None = None,
) -> go.Figure:
    """A grid of categories 0 … n−1 (e.g. absent / reused / fresh), each cell coloured and labelled by category."""
    codes = np.asarray(status, dtype=int)
    colours = ["#f0f2f6", "#9ecae1", "#e6550d", "#4d8f3a"][: len(labels)]
    n = len(labels)
    scale = []
    for index, colour in enumerate(colours):
        scale += [[index / n, colour], [(index + 1) / n, colour]]
    fig = go.Figure(
        go.Heatmap(
            z=codes + 0.5,
            x=list(x),
            y=list(y),
            text=np.asarray(labels, dtype=object)[codes],
            texttemplate="%{text}",
            textfont={"size": 13},
            colorscale=scale,
            zmin=0,
            zmax=n,
            showscale=False,
            hovertemplate="%{y}<br>%{x}: %{text}<extra></extra>",
            xgap=2,
            ygap=2,
        )
    )
    if highlight_column is not None:
        fig.add_shape(
            type="rect",
            xref="x",
            yref="paper",
            x0=highlight_column - 0.5,
            x1=highlight_column + 0.5,
            y0=0,
            y1=1,
            line={"color": "#1f1f1f", "width": 3},
        )
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category", side="top")
    _layout(fig, title, height or 130 + 34 * len(y))
    fig.update_layout(title={"y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 6}}, margin={"t": 78})
    return fig
