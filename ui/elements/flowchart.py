"""A top-to-bottom flowchart as a plotly figure: boxes joined by labelled arrows (the primer's §1 OCR picture).

Drawn top to bottom rather than left to right so that it reads on a phone as well as on a laptop; every label is
on the figure itself, nothing needs hover.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

LINE_HEIGHT, PADDING, GAP = 0.62, 0.7, 2.6  # data units: one text line, a box's padding, the arrow's space
BOX_LEFT, BOX_RIGHT, LABEL_X = 0.2, 5.0, 5.35
BOX_FILL, LAST_FILL, LINE, TEXT = "#eef3fa", "#dcefd8", "#4c78a8", "#1f2430"


def _html(text: str) -> str:
    return text.replace("\n", "<br>")


def flowchart(nodes: Sequence[str], edges: Sequence[str], *, title: str, px_per_unit: int = 30) -> go.Figure:
    """Boxes from top to bottom, one arrow between consecutive boxes labelled to its right; the last box, the
    answer, is filled green. `edges[i]` labels the arrow from `nodes[i]` to `nodes[i + 1]` ('' for none)."""
    fig = go.Figure()
    heights = [text.count("\n") * LINE_HEIGHT + LINE_HEIGHT + PADDING for text in nodes]
    tops = [-(sum(heights[:i]) + GAP * i) for i in range(len(nodes))]
    for i, (top, height, text) in enumerate(zip(tops, heights, nodes, strict=True)):
        fill = LAST_FILL if i == len(nodes) - 1 else BOX_FILL
        fig.add_shape(
            type="rect",
            x0=BOX_LEFT,
            x1=BOX_RIGHT,
            y0=top - height,
            y1=top,
            line={"color": LINE, "width": 1.5},
            fillcolor=fill,
            layer="below",
        )
        fig.add_annotation(
            x=(BOX_LEFT + BOX_RIGHT) / 2,
            y=top - height / 2,
            text=_html(text),
            showarrow=False,
            font={"size": 14, "color": TEXT},
        )
    for i, label in enumerate(edges[: len(nodes) - 1]):
        start, end = tops[i] - heights[i], tops[i + 1]
        middle = (BOX_LEFT + BOX_RIGHT) / 2
        fig.add_annotation(
            x=middle,
            y=end,
            ax=middle,
            ay=start,
            xref="x",
            yref="y",
            axref="x",
            ayref="y",
            showarrow=True,
            arrowhead=3,
            arrowsize=1.2,
            arrowwidth=1.6,
            arrowcolor=LINE,
            text="",
        )
        if label:
            fig.add_annotation(
                x=LABEL_X,
                y=(start + end) / 2,
                text=_html(label),
                showarrow=False,
                xanchor="left",
                align="left",
                font={"size": 13, "color": TEXT},
            )
    bottom = tops[-1] - heights[-1]
    fig.update_xaxes(visible=False, range=[0, 10], fixedrange=True)
    fig.update_yaxes(visible=False, range=[bottom - 0.2, 0.2], fixedrange=True)
    fig.update_layout(
        title={"text": title, "font": {"size": 15}},
        height=int((0.4 - bottom) * px_per_unit) + 60,
        margin={"l": 4, "r": 4, "t": 46, "b": 4},
        template="none",
        showlegend=False,
    )
    return fig
