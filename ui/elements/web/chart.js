// One plot per chart slot, kept across reruns: each chart element is app-built HTML (st.html) holding the figure as
// JSON and a one-line script that hands it here. When a figure changes, Streamlit empties the element and fills it
// anew; the plot already drawn in that slot is moved into it and given the new figure (Plotly.react), so it is
// redrawn in place rather than built again. Figures that arrive while plotly.js is still loading are drawn once it has
// (only the latest). The plot follows its column's width. A plot whose element has left the page is freed.
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
  if (title && title.text) title.text = "\x3cb>" + title.text + "\x3c/b>";
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
