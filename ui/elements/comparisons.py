"""Plotly builders for comparisons shared by the pages: grouped, paired and panelled bars, lines over a grid and
trajectories, in the same colour rule and layout as ui/elements/figures.py."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ui.elements.figures import FONT, layout


def grouped_bars(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    markers: Sequence[tuple[str, Sequence[float]]] = (),
    value_format: str = ".2f",
    y_title: str = "",
    y_range: tuple[float, float] | None = (0.0, 1.1),
    height: int = 360,
    show_values: bool = True,
) -> go.Figure:
    """Side-by-side bars per category (one colour per series, values printed unless show_values is False), with
    optional reference markers (e.g. a publication's printed values; NaN where it printed none) over the bars."""
    palette = ["#1f5f99", "#d9822b", "#4d8f3a", "#7b4f9d"]
    data: list[dict] = [
        {
            "type": "bar",
            "name": name,
            "x": list(categories),
            "y": list(values),
            "marker": {"color": palette[i % len(palette)]},
            "text": [format(v, value_format) for v in values] if show_values else None,
            "textposition": "outside",
            "cliponaxis": False,
            "offsetgroup": str(i),
            "hovertemplate": f"%{{x}}<br>{name}: %{{y:{value_format}}}<extra></extra>",
        }
        for i, (name, values) in enumerate(series)
    ]
    for i, (name, values) in enumerate(markers):
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": name,
                "x": list(categories),
                "y": [None if v is None or not np.isfinite(v) else v for v in values],
                "offsetgroup": str(i),
                "marker": {"symbol": "diamond-open", "size": 13, "color": "#1f1f1f", "line": {"width": 2}},
                "hovertemplate": f"%{{x}}<br>{name}: %{{y:{value_format}}}<extra></extra>",
            }
        )
    legend_rows = -(-(len(series) + len(markers)) // 2)  # the legend sits above the bars, two entries a row at most
    layout = {
        "title": {
            "text": title,
            "x": 0,
            "xanchor": "left",
            "y": 1.0,
            "yref": "container",
            "yanchor": "top",
            "pad": {"t": 10},
            "font": {"size": 16},
        },
        "height": height + 24 * legend_rows,
        "margin": {"l": 10, "r": 10, "t": 50 + 24 * legend_rows, "b": 10},
        "font": FONT,
        "paper_bgcolor": "rgba(0,0,0,0)",
        "barmode": "group",
        "scattermode": "group",
        "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0, "xanchor": "left"},
        "xaxis": {"type": "category"},
        "yaxis": {"title": y_title, "range": list(y_range) if y_range else None},
    }
    return go.Figure(data=data, layout=layout)


def paired_bars(
    labels: Sequence[str],
    left: tuple[str, Sequence[float]],
    right: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    left_title: str,
    right_title: str,
    highlight: Sequence[bool] | None = None,
    value_format: str = ".2f",
    height: int = 340,
) -> go.Figure:
    """Two horizontal bar panels sharing one row per label: a quantity on the left (e.g. what a head looks at) next
    to one or more on the right (e.g. what breaks without it). Highlighted rows' labels are bold."""
    rows = [f"<b>{label}</b>" if highlight and highlight[i] else label for i, label in enumerate(labels)]
    palette = ["#b35900", "#a9b4c2", "#4d8f3a"]
    name, values = left
    data: list[dict] = [
        {
            "type": "bar",
            "orientation": "h",
            "name": name,
            "y": rows,
            "x": list(values),
            "marker": {"color": "#1f5f99"},
            "text": [format(v, value_format) for v in values],
            "textposition": "outside",
            "cliponaxis": False,
            "xaxis": "x",
            "yaxis": "y",
            "hovertemplate": f"%{{y}}<br>{name}: %{{x:{value_format}}}<extra></extra>",
        }
    ]
    for i, (series_name, series) in enumerate(right):
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": series_name,
                "y": rows,
                "x": list(series),
                "marker": {"color": palette[i % len(palette)]},
                "text": [format(v, value_format) for v in series],
                "textposition": "outside",
                "cliponaxis": False,
                "xaxis": "x2",
                "yaxis": "y2",
                "hovertemplate": f"%{{y}}<br>{series_name}: %{{x:{value_format}}}<extra></extra>",
            }
        )
    category = {"type": "category", "autorange": "reversed"}
    subtitle = {
        "xref": "paper",
        "yref": "paper",
        "y": 1.0,
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": 13},
    }
    layout = {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 16}},
        "height": height,
        "margin": {"l": 10, "r": 30, "t": 80, "b": 10},
        "font": FONT,
        "paper_bgcolor": "rgba(0,0,0,0)",
        "barmode": "group",
        "legend": {"orientation": "h", "y": -0.1, "yanchor": "top", "x": 0.0, "xanchor": "left"},
        "xaxis": {"domain": [0.0, 0.42], "range": [0, 1.2], "dtick": 0.5},
        "xaxis2": {"domain": [0.55, 1.0], "range": [0, 1.2], "dtick": 0.5, "anchor": "y2"},
        "yaxis": {**category, "anchor": "x"},
        "yaxis2": {**category, "anchor": "x2", "showticklabels": False},
        "annotations": [
            {**subtitle, "text": f"<b>{left_title}</b>", "x": 0.0, "xanchor": "left"},
            {**subtitle, "text": f"<b>{right_title}</b>", "x": 0.55, "xanchor": "left"},
        ],
    }
    return go.Figure(data=data, layout=layout)


def bar_panels(
    panels: Sequence[tuple[str, Sequence[str], Sequence[float], Sequence[bool]]],
    *,
    title: str,
    columns: int = 3,
    y_range: tuple[float, float] = (0.0, 1.25),
    value_format: str = ".1f",
    panel_height: int = 190,
) -> go.Figure:
    """Small multiples: one small bar chart per panel (subtitle, labels, values, highlight), in a grid with shared
    scales, built in one constructor call. Highlighted bars in the primary colour, the rest grey."""
    rows_n = -(-len(panels) // columns)
    gap_x, gap_y = 0.05, 0.45 / max(rows_n, 1)
    width = (1 - gap_x * (columns - 1)) / columns
    cell = (1 - gap_y * (rows_n - 1)) / rows_n
    data: list[dict] = []
    layout: dict = {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 16}},
        "height": 70 + panel_height * rows_n,
        "margin": {"l": 10, "r": 10, "t": 70, "b": 10},
        "font": FONT,
        "paper_bgcolor": "rgba(0,0,0,0)",
        "showlegend": False,
        "annotations": [],
    }
    for index, (subtitle, labels, values, highlight) in enumerate(panels):
        row, column = divmod(index, columns)
        suffix = str(index + 1) if index else ""
        left, top = column * (width + gap_x), 1 - row * (cell + gap_y)
        data.append(
            {
                "type": "bar",
                "x": list(labels),
                "y": list(values),
                "marker": {"color": ["#1f5f99" if h else "#a9b4c2" for h in highlight]},
                "text": [format(v, value_format) for v in values],
                "textposition": "outside",
                "cliponaxis": False,
                "xaxis": f"x{suffix}",
                "yaxis": f"y{suffix}",
                "hovertemplate": f"{subtitle}<br>%{{x}}: %{{y:{value_format}}}<extra></extra>",
            }
        )
        layout[f"xaxis{suffix}"] = {"domain": [left, left + width], "anchor": f"y{suffix}", "type": "category"}
        layout[f"yaxis{suffix}"] = {
            "domain": [top - cell, top],
            "anchor": f"x{suffix}",
            "range": list(y_range),
            "showticklabels": column == 0,
        }
        layout["annotations"].append(
            {
                "text": subtitle,
                "x": left + width / 2,
                "y": top,
                "xref": "paper",
                "yref": "paper",
                "yanchor": "bottom",
                "xanchor": "center",
                "showarrow": False,
                "font": {"size": 13},
            }
        )
    return go.Figure(data=data, layout=layout)


LINE_COLOURS = ("#1f5f99", "#b35900", "#4d8f3a", "#7a4a9c", "#a9b4c2", "#c23b3b", "#2a9d8f", "#6b6b6b")


def _plain_layout(title: str, height: int, **extra: object) -> dict:
    """layout() with the legend under the plot and no plotly template (Streamlit themes charts in the browser, and
    plotly's default template is ~6 kB of every chart's JSON)."""
    return layout(
        title, height, legend={"orientation": "h", "y": -0.3, "x": 0, "yanchor": "top"}, template="none", **extra
    )


def block_lines(fig: go.Figure, *, column_breaks: Sequence[int] = (), row_breaks: Sequence[int] = ()) -> go.Figure:
    """Thick dividers on a category-axis heatmap before the given column / row indices (e.g. a head boundary)."""
    line = {"color": "#1b1f24", "width": 4}
    shapes = [
        {"type": "line", "xref": "x", "yref": "paper", "x0": i - 0.5, "x1": i - 0.5, "y0": 0, "y1": 1, "line": line}
        for i in column_breaks
    ] + [
        {"type": "line", "xref": "paper", "yref": "y", "y0": i - 0.5, "y1": i - 0.5, "x0": 0, "x1": 1, "line": line}
        for i in row_breaks
    ]
    if shapes:
        fig.update_layout(shapes=[*fig.layout.shapes, *shapes])
    return fig


def line_chart(
    x: Sequence[object],
    series: dict[str, Sequence[float]],
    *,
    title: str,
    x_title: str = "",
    y_title: str = "",
    marker: tuple[object, str] | None = None,
    marker_low: bool = False,
    y_range: tuple[float, float] | None = None,
    height: int = 360,
) -> go.Figure:
    """Lines with markers, one per named series (solid, dotted, dashed … so overlapping lines stay visible);
    `marker=(x, label)` draws a labelled dashed vertical line there, its label at the top (or bottom if marker_low).
    """
    data = [
        {
            "type": "scatter",
            "x": list(x),
            "y": list(values),
            "mode": "lines+markers",
            "name": name,
            "line": {"color": LINE_COLOURS[i % len(LINE_COLOURS)], "dash": ("solid", "dot", "dash", "dashdot")[i % 4]},
            "hovertemplate": f"{name}<br>%{{x}}: %{{y:.3f}}<extra></extra>",
        }
        for i, (name, values) in enumerate(series.items())
    ]
    spec = _plain_layout(
        title,
        height,
        xaxis={"title": {"text": x_title}},
        yaxis={"title": {"text": y_title}, **({"range": list(y_range)} if y_range else {})},
    )
    if marker is not None:
        spec["shapes"] = [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": marker[0],
                "x1": marker[0],
                "y0": 0,
                "y1": 1,
                "line": {"color": "#b35900", "width": 2, "dash": "dash"},
            }
        ]
        spec["annotations"] = [
            {
                "x": marker[0],
                "y": 0.04 if marker_low else 0.98,
                "xref": "x",
                "yref": "paper",
                "text": marker[1],
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "bottom" if marker_low else "top",
                "xshift": 4,
                "bgcolor": "rgba(255,255,255,0.85)",
                "font": {"color": "#b35900"},
            }
        ]
    return go.Figure({"data": data, "layout": spec})


def trajectories(
    paths: dict[str, np.ndarray],
    stage_labels: Sequence[str],
    *,
    title: str,
    x_title: str = "",
    y_title: str = "",
    height: int = 420,
) -> go.Figure:
    """One 2-D path per named item (stages × 2 points): a filled circle at the start, a triangle at the end."""
    data = []
    for i, (name, points) in enumerate(paths.items()):
        points = np.asarray(points, dtype=np.float64)
        symbols = ["circle"] + ["circle-open"] * (len(points) - 2) + ["triangle-up"]
        data.append(
            {
                "type": "scatter",
                "x": points[:, 0],
                "y": points[:, 1],
                "mode": "lines+markers",
                "name": name,
                "line": {"color": LINE_COLOURS[i % len(LINE_COLOURS)]},
                "marker": {"size": 11, "symbol": symbols[: len(points)]},
                "customdata": list(stage_labels),
                "hovertemplate": f"{name}<br>%{{customdata}}<br>(%{{x:.2f}}, %{{y:.2f}})<extra></extra>",
            }
        )
    spec = _plain_layout(
        title,
        height,
        xaxis={"title": {"text": x_title}, "zeroline": False},
        yaxis={"title": {"text": y_title}, "zeroline": False, "scaleanchor": "x", "scaleratio": 1},
    )
    return go.Figure({"data": data, "layout": spec})
