"""The budget's charts: monthly cost of every way to pay over the horizon (the cheapest overall drawn thickest), and
one day's requests and the copies that carry them."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.plan import budget as bu
from core.plan import daily
from ui.elements.figures import layout

COLOURS = {  # one colour per way to pay, the same in every chart and the briefing
    "on-demand": "#1f5f99",
    "reserved-1y": "#4b8bbe",
    "reserved-3y": "#7fb3d5",
    "own": "#d9822b",
    "api": "#6c3483",
}


def frame() -> dict:
    """The budget charts' shared frame: small margins, the theme from the chart element, the legend below."""
    return {
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "template": "none",
        "legend": {"orientation": "h", "y": -0.25},
    }


def monthly_figure(b: bu.Budget) -> go.Figure:
    """Monthly cost of each way to pay, month 1 to the horizon; the cheapest over the horizon drawn thickest."""
    months = np.arange(1, b.months + 1)
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers" if b.months <= 12 else "lines",
            "name": label + (" (cheapest in all)" if way == b.cheapest else ""),
            "x": months,
            "y": b.monthly[way],
            "line": {"color": COLOURS[way], "width": 4 if way == b.cheapest else 2},
            "hovertemplate": f"{label}<br>month %{{x}}: $%{{y:,.0f}}<extra></extra>",
        }
        for way, label in bu.WAYS.items()
    ]
    return go.Figure(
        data=data,
        layout=layout(
            "Monthly cost of each way to pay",
            400,
            xaxis={"title": {"text": "month"}, "dtick": 1 if b.months <= 12 else 3, "automargin": True},
            yaxis={"title": {"text": "$ a month"}, "tickprefix": "$", "rangemode": "tozero", "automargin": True},
            **frame(),
        ),
    )


def day_figure(d: daily.Day, per_copy_rpm: float) -> go.Figure:
    """One day at month 1: requests a minute each hour (bars) and what the copies running that hour can carry."""
    hours = np.arange(daily.HOURS)
    data = [
        {
            "type": "bar",
            "name": "requests a minute",
            "x": hours,
            "y": d.hourly_rpm,
            "marker": {"color": "#a9c4de"},
            "hovertemplate": "hour %{x}: %{y:,.0f} requests a minute<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "lines",
            "line": {"shape": "hv", "color": "#d9822b", "width": 3},
            "name": "what the copies running carry",
            "x": hours,
            "y": d.hourly_copies * per_copy_rpm,
            "text": [f"{c:,} cop{'y' if c == 1 else 'ies'}" for c in d.hourly_copies],
            "hovertemplate": "hour %{x}: %{text}, up to %{y:,.0f} a minute<extra></extra>",
        },
    ]
    return go.Figure(
        data=data,
        layout=layout(
            "A day in the first month: traffic and the copies carrying it",
            340,
            xaxis={"title": {"text": "hour of the day"}, "dtick": 3, "automargin": True},
            yaxis={"title": {"text": "requests a minute"}, "rangemode": "tozero", "automargin": True},
            **frame(),
        ),
    )
