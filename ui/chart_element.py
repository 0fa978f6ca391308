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

from ui.html_element import draw_html
from ui.inert import script_text
from ui.navigation import ROOT

THEME = json.loads((ROOT / "assets" / "chart_theme.json").read_text(encoding="utf-8"))
PLOTLY_JS = ROOT / "static" / "plotly-primer.min.js"  # built by js/plotly-bundle (only the traces drawn here)
KEPT = 128  # figures whose JSON form is kept (a page draws a few at a time; an evicted one is redone)
_PLACEHOLDER = re.compile("|".join(re.escape(colour) for colour in THEME["placeholders"]))

# One plot per chart slot, kept across reruns: each chart element is app-built HTML (st.html) holding the figure as
# JSON and a one-line script that hands it here. When a figure changes, Streamlit empties the element and fills it
# anew; the plot already drawn in that slot is moved into it and given the new figure (Plotly.react), so it is
# redrawn in place rather than built again. Figures that arrive while plotly.js is still loading are drawn once it has
# (only the latest). The plot follows its column's width. A plot whose element has left the page is freed.
JS = """
(() => {
if (window.primerChart) return;
const SOURCE = new URL("app/static/plotly-primer.min.js", document.baseURI).href;
let loading = null;

function plotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = SOURCE;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => { loading = null; reject(new Error("plotly.js did not load from " + SOURCE)); };
      document.head.appendChild(script);
    });
  }
  return loading;
}

// Streamlit's element offers a full-screen view of a chart; this one keeps it as a button on plotly's toolbar.
const FULL_SCREEN = {
  name: "fullscreen",
  title: "Full screen",
  icon: { width: 1000, height: 1000,
    path: "M0 0h380v100H100v280H0zM620 0h380v380H900V100H620zM0 620h100v280h280v100H0zM900 620h100v380H620V900h280z" },
  click: (chart) => (document.fullscreenElement === chart ? document.exitFullscreen() : chart.requestFullscreen()),
};

// The margins plotly settled on when it last drew each chart (by key), kept while the tab is open. Streamlit's theme
// lets every axis grow its margin to fit its labels (automargin); plotly then draws a chart a second time with the
// grown margins. Starting a chart from the margins it settled on before, it draws once.
const SETTLED = new Map();

function startingMargins(key, margin) {
  const settled = SETTLED.get(key);
  if (!settled) return margin;
  const grown = { ...margin };
  for (const side of ["l", "r", "t", "b"]) grown[side] = Math.max(margin[side] ?? 0, settled[side]);
  return grown;
}

// The charts one rerun changes are drawn one at a time with a paint between them: the first changed chart shows as
// soon as it is drawn instead of when the last one is. A chart with none in progress draws at once.
const afterPaint = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
let turn = null;

function inTurn(draw) {
  const run = turn ? turn.then(afterPaint).then(draw) : Promise.resolve().then(draw);
  const mine = run.catch(() => {}).then(() => { if (turn === mine) turn = null; });
  turn = mine;
  return run;
}

function height(chart) {
  return document.fullscreenElement === chart ? window.innerHeight : chart.height;
}

const PLOTS = new Map();  // slot -> its plot

function plotFor(slot) {
  let chart = PLOTS.get(slot);
  if (!chart) {
    chart = document.createElement("div");
    chart.className = "primer-chart";
    chart.dataset.chart = slot;
    chart.setAttribute("role", "figure");
    chart.resizer = new ResizeObserver(() => {  // a plot that left the page has no size to follow
      if (window.Plotly && chart.drawn && chart.isConnected) window.Plotly.Plots.resize(chart);
    });
    chart.resizer.observe(chart);
    chart.addEventListener("fullscreenchange", () => {
      if (window.Plotly && chart.drawn) window.Plotly.relayout(chart, { height: height(chart) });
    });
    PLOTS.set(slot, chart);
  }
  return chart;
}

// Run after the elements of one rerun are in place (a chart's element is emptied before it is filled again).
function freeDetached() {
  for (const [slot, chart] of PLOTS) {
    if (chart.isConnected) continue;
    chart.resizer.disconnect();
    if (window.Plotly && chart.drawn) window.Plotly.purge(chart);
    PLOTS.delete(slot);
  }
}

window.primerChart = (script) => {
  const text = script.previousElementSibling.textContent;
  const slot = script.dataset.slot;
  const chart = plotFor(slot);
  script.parentElement.prepend(chart);
  setTimeout(freeDetached, 0);
  if (chart.sent === text) return;
  chart.sent = text;
  const { alt, config, key, figure } = JSON.parse(text);
  chart.setAttribute("aria-label", alt);
  const title = figure.layout.title;
  if (title && title.text) title.text = "\\x3cb>" + title.text + "\\x3c/b>";
  chart.height = figure.layout.height || 450;
  chart.style.minHeight = chart.height + "px";
  // plotly takes every data array it is handed anew as changed and recomputes the whole chart, unless the layout
  // carries a data revision: a figure whose data is the same as the last one's (only a marker, a line or a title
  // moved) keeps the revision, and plotly redraws only what changed in the layout.
  const dataText = JSON.stringify(figure.data);
  if (dataText !== chart.dataText) {
    chart.dataText = dataText;
    chart.revision = (chart.revision || 0) + 1;
  }
  const revision = chart.revision;
  plotly().then((Plotly) => inTurn(() => {
    if (chart.sent !== text) return;  // a newer figure came while this one waited: draw that one
    chart.drawn = true;
    const margin = startingMargins(key, figure.layout.margin || {});
    const layout = { ...figure.layout, margin, height: height(chart), datarevision: revision };
    return Plotly.react(chart, figure.data, layout, { ...config, modeBarButtonsToAdd: [FULL_SCREEN] }).then(() => {
      const { l, r, t, b } = chart._fullLayout._size;
      SETTLED.set(key, { l, r, t, b });
    });
  })).catch((error) => { chart.textContent = String(error); });
};
for (const script of window.primerChartQueue || []) window.primerChart(script);
delete window.primerChartQueue;
})();
"""
CSS = ".primer-chart { width: 100%; } .primer-chart:fullscreen { background: #ffffff; }"
# What a chart element's script runs: the chart script above, or a queue it drains when it runs later.
_HAND_OVER = "(window.primerChart || ((s) => (window.primerChartQueue ||= []).push(s)))(document.currentScript)"
# JSON inside a script element: no character that could end the element or open markup.
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
