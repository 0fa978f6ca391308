"""The element every chart is drawn with: plotly.js driven by the page's chart script, which updates a plot in place.

Streamlit's own plotly element gives a chart a new identity whenever its figure changes, so every click that moves a
chart throws the old plot away and builds a new one (Plotly.newPlot), which costs the browser more than the rest of
the rerun. Here a chart is app-built HTML (its figure as JSON) and the script every page installs keeps one plot per
chart slot, handing a changed figure to Plotly.react, which redraws only what changed. (A custom component does the
same in the browser, but is two widget states per chart that Streamlit reads for every selector and number field on
every run.) plotly.js loads once per browser tab, from static/: the plotly package's plotly.js version, bundled with
only the trace types these charts use (js/plotly-bundle): 30% of the full file, parsed in about a fifth of the time.

The figures keep Streamlit's look: the theme Streamlit's element applies in the browser (assets/chart_theme.json,
read from that element under this app's config.toml) is applied here on the server.
"""

from __future__ import annotations

import html
import json
import re
import threading
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

from ui.elements.html_element import draw_html
from ui.elements.inert import script_text
from ui.elements.navigation import ROOT
from ui.elements.web import web_file

THEME = json.loads((ROOT / "assets" / "chart_theme.json").read_text(encoding="utf-8"))
PLOTLY_JS = ROOT / "static" / "plotly-primer.min.js"  # built by js/plotly-bundle (only the traces drawn here)
KEPT = 128  # figures whose JSON form is kept (a page draws a few at a time; an evicted one is redone)
_PLACEHOLDER = re.compile("|".join(re.escape(colour) for colour in THEME["placeholders"]))

JS = web_file("chart.js")
CSS = web_file("chart.css")
# What a chart element's script runs: the chart script above, or a queue it drains when it runs later.
_HAND_OVER = "(window.primerChart || ((s) => (window.primerChartQueue ||= []).push(s)))(document.currentScript)"
_themed: dict[int, tuple[go.Figure, str]] = {}
_themed_lock = threading.Lock()


def _merged(base: dict, over: dict) -> dict:
    """`base` with `over` merged in, nested dicts key by key and `over` winning (how Streamlit merges its theme)."""
    merged = dict(base)
    for key, value in over.items():
        kept = merged.get(key)
        merged[key] = _merged(kept, value) if isinstance(kept, dict) and isinstance(value, dict) else value
    return merged


def themed_spec(fig: go.Figure) -> str:
    """The figure as the JSON plotly.js draws, themed as Streamlit themes its charts: the theme's layout merged over
    the figure's template and the colours of Streamlit's default template filled in (the browser sets the title in bold,
    as Streamlit's element does). Made once per figure object (builders cache figures by content and never change one
    after building it; sessions share the cache)."""
    with _themed_lock:
        kept = _themed.get(id(fig))
        if kept is not None and kept[0] is fig:
            return kept[1]
    spec = fig.to_dict()
    template = spec["layout"].get("template") or {}
    themed = {"data": template.get("data", {}), "layout": _merged(template.get("layout", {}), THEME["layout"])}
    text = pio.to_json({**spec, "layout": {**spec["layout"], "template": themed}}, validate=False)
    text = _PLACEHOLDER.sub(lambda match: THEME["placeholders"][match.group(0)], text)
    with _themed_lock:
        while len(_themed) >= KEPT:
            del _themed[next(iter(_themed))]
        _themed[id(fig)] = (fig, text)  # the figure is held, so its id cannot be reused while it is kept
    return text


def payload(fig: go.Figure, *, key: str, alt: str, config: dict[str, Any]) -> str:
    """What the chart's script reads: one JSON object holding the figure, the chart's key, its accessible name and
    plotly's config."""
    head = json.dumps({"alt": alt, "config": config, "key": key})[:-1]
    return f'{head}, "figure": {themed_spec(fig)}}}'


def element_html(fig: go.Figure, *, key: str, alt: str, config: dict[str, Any], slot: str | None = None) -> str:
    """The chart's element: its payload as inert JSON (every character that could end the script escaped, so no text
    in a figure can become markup) and the script that hands it to the page's chart script."""
    data = script_text(payload(fig, key=key, alt=alt, config=config))
    slot_attr = html.escape(slot or key, quote=True)
    return (
        f'<script type="application/json" class="primer-chart-data">{data}</script>'
        f'<script data-slot="{slot_attr}">{_HAND_OVER}</script>'
    )


def draw(fig: go.Figure, *, key: str, alt: str, config: dict[str, Any], slot: str | None = None) -> None:
    """Draw a figure full-width under a stable key, with `alt` as the chart's accessible name.

    `slot`, when given, names the plot instead: figures that take turns in one place on the page (one step's
    matrices, then another's) then update the plot already there (Plotly.react) rather than remove it and build a new
    one; `key` still names the figure, whose settled margins the browser keeps."""
    draw_html(element_html(fig, key=key, alt=alt, config=config, slot=slot), scripts=True)
