"""What every page adds to the browser once: in-app links that stay in the same tab and session, a note under a
number field naming a typed value the browser refused, a static table's CSV download, the script that draws the
charts (ui/chart_element.py), readable captions and phone layout.

Streamlit opens every markdown link in a new tab, which starts a whole new app session (seconds on a cold server).
The script below catches a plain click on a link to one of the app's own pages (glossary terms, the overview's
pipeline blocks) and lets Streamlit's own router switch pages in place, keeping the session; the link's query
(`?term=kv-cache`, `?trace_step=qkv`) travels with it. Ctrl/⌘-click still opens a new tab.
"""

from __future__ import annotations

from ui import chart_element
from ui.html_element import draw_html
from ui.inert import script_json
from ui.navigation import GLOSSARY, PAGES

# Captions in a solid darker grey: Streamlit fades them to #76797c on white, 4.4:1, under WCAG AA's 4.5:1.
# Phones (Streamlit stacks columns below 640 px): the element a reader came for goes before the list that picks it,
# and chart titles (plotly never wraps them) shrink so that a long one still fits 390 px.
# Static tables (ui/static_table.py): Streamlit's own table look, scrolling sideways with the first column kept in view;
# their CSV download button in the look of Streamlit's secondary button.
# Formulas as text (ui/plain_math.py): centred serif lines, as KaTeX draws them, that wrap on a narrow screen.
# Metric cards (ui/metric_cards.py): st.metric's look, three to a row (two on a phone); the "?" shows its help text on
# hover, focus and tap.
PAGE_CSS = """
[data-testid="stCaptionContainer"] { color: #51565c; opacity: 1; }
.static-table { overflow-x: auto; border: 1px solid rgba(49, 51, 63, 0.2); border-radius: 0.5rem; }
.static-table table { border-collapse: separate; border-spacing: 0; width: max-content; min-width: 100%;
  font-size: 0.875rem; color: #31333f; }
.static-table th, .static-table td { padding: 0.35rem 0.6rem; border-bottom: 1px solid rgba(49, 51, 63, 0.12);
  text-align: left; vertical-align: top; font-weight: 400; max-width: 22rem; }
.static-table thead th { max-width: 9rem; color: #51565c; background: #f7f8fa; }
.static-table tbody tr:last-child > * { border-bottom: none; }
.static-table .num { text-align: right; font-variant-numeric: tabular-nums; }
.static-table td.num { white-space: nowrap; }
.static-table tbody th { position: sticky; left: 0; background: #fff; }
.static-table thead th:first-child { position: sticky; left: 0; }
.formula { margin: 0.5rem 0 1rem; text-align: center; font-family: "Source Serif", "Times New Roman", serif;
  font-size: 1.2rem; line-height: 1.5; color: #1b1f24; }
.formula p { margin: 0.2rem 0; }
.metric-cards { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 1rem; }
.metric-cards p { margin: 0; }
.metric-label { position: relative; display: flex; align-items: center; gap: 0.4rem; font-size: 0.875rem; }
.metric-help { all: unset; box-sizing: border-box; display: inline-flex; align-items: center; justify-content: center;
  width: 1.1rem; height: 1.1rem; border: 1.5px solid #51565c; border-radius: 50%; color: #51565c;
  font-size: 0.7rem; font-weight: 600; cursor: help; }
.metric-help:focus-visible { outline: 2px solid #1f5f99; outline-offset: 2px; }
.metric-help-text { display: none; position: absolute; z-index: 10; top: 100%; left: 0; margin-top: 0.4rem;
  width: max-content; max-width: min(20rem, 85vw); padding: 0.5rem 0.75rem; border-radius: 0.5rem;
  background: #1b1f24; color: #ffffff; font-size: 0.8rem; line-height: 1.4; }
.metric-help:hover + .metric-help-text, .metric-help:focus + .metric-help-text { display: block; }
.metric-card:nth-child(3n) .metric-help-text { left: auto; right: 0; }  /* the last column's opens leftwards */
.metric-value { padding: 0.2rem 0; font-size: 2.25rem; line-height: 1.3; color: #1b1f24; }
.metric-note, .metric-footnote, .table-footnote { font-size: 0.875rem; color: #51565c; }
.metric-footnote { margin: 0.75rem 0 0; }
.table-footnote { margin: 0.5rem 0 0; }
.number-note { margin: 0.35rem 0 0; font-size: 0.875rem; color: #7a4f01; }
.table-download { display: inline-flex; align-items: center; min-height: 2.5rem; margin: 1rem 0 0;
  padding: 0.25rem 0.75rem; border: 1px solid rgba(27, 31, 36, 0.2); border-radius: 0.5rem; background: #ffffff;
  color: #1b1f24; font: inherit; cursor: pointer; }
.table-download:hover { background: rgba(157, 173, 190, 0.15); }
.table-download:focus-visible { outline: none; box-shadow: 0 0 0 0.2rem rgba(31, 95, 153, 0.5); }
@media (max-width: 640px) {
  .js-plotly-plot .gtitle { font-size: 13px !important; }
  .metric-cards { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .metric-card:nth-child(3n) .metric-help-text { left: 0; right: auto; }
  .metric-card:nth-child(2n) .metric-help-text { left: auto; right: 0; }
  .metric-value { font-size: 1.6rem; }
  .static-table th, .static-table td { max-width: 11rem; }
  .st-key-answer-first > [data-testid="stLayoutWrapper"] > [data-testid="stHorizontalBlock"] {
    flex-direction: column-reverse; }
}
"""

ROUTER_JS = """
(() => {
  if (window.__appLinks) return;
  window.__appLinks = true;
  const pages = new Set(%s);
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey
        || event.altKey) return;
    const anchor = event.target.closest ? event.target.closest("a") : null;
    // Only links written in the pages' text (markdown, the overview's picture); Streamlit routes its own.
    if (!anchor || anchor.hasAttribute("download")
        || !anchor.closest('[data-testid="stMarkdownContainer"], [data-testid="stCaptionContainer"], '
          + '[data-testid="stHtml"]')) return;
    const raw = anchor.getAttribute("href") || anchor.getAttribute("xlink:href");
    if (!raw || raw.startsWith("#")) return;
    const url = new URL(raw, window.location.href);
    const page = url.pathname.split("/").filter(Boolean).pop() || "";
    if (url.origin !== window.location.origin || !pages.has(page)) return;
    event.preventDefault();
    event.stopPropagation();
    window.history.pushState({}, "", url.pathname + url.search + url.hash);
    window.dispatchEvent(new PopStateEvent("popstate"));
  }, true);
})();
"""


# A number field refuses some typed values in the browser without a word reaching the page: an empty field, or one
# beyond the float range, is sent as "no value", which Streamlit's number input turns into its default, so the
# reader's last value is silently replaced; a bounded field (min/max) marks a value outside its bounds with an icon
# whose message needs a hover. When such a value is committed (Enter, or leaving the field), the field is given back
# the last value it took (when the reader entered it, stepped it or committed one), before Streamlit reads it, and a
# line under the field names what was refused and what is kept, as the page names the values it refuses itself; the
# line goes once a value the field takes is committed. The text is set as text, never as markup.
NUMBER_NOTES_JS = """
(() => {
  if (window.__numberNotes) return;
  window.__numberNotes = true;
  const shown = (n) => n.toLocaleString("en-US", { maximumFractionDigits: 6 });
  const isNumberField = (node) => node instanceof HTMLInputElement && node.dataset.testid === "stNumberInputField";
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
  // Why the field cannot take what was typed, worded as the page words the values it refuses; null if it can.
  function refusal(input) {
    const typed = input.value.trim();
    if (input.validity.badInput) return "what was typed cannot be used: it is not a number this field can hold";
    if (typed === "") return "an empty field cannot be used: it holds no number";
    const low = input.min === "" ? -Infinity : Number(input.min);
    const high = input.max === "" ? Infinity : Number(input.max);
    const value = Number(typed);
    if (value < low || value > high) return `“${typed}” cannot be used: it is outside ${shown(low)} … ${shown(high)}`;
    return null;
  }
  function commit(event) {
    const input = event.target;
    if (!isNumberField(input) || (event.type === "keydown" && event.key !== "Enter")) return;
    const field = input.closest('[data-testid="stNumberInput"]');
    const reason = refusal(input);
    let note = field && field.querySelector(":scope > .number-note");
    if (!reason) {  // a value the field takes: it is the one to keep from now on
      input.dataset.held = input.value;
      if (note) note.remove();
      return;
    }
    if (!field || input.dataset.held === undefined) return;
    setValue.call(input, input.dataset.held);  // the held value goes back before Streamlit reads the field
    input.dispatchEvent(new Event("input", { bubbles: true }));
    if (!note) {
      note = document.createElement("p");
      note.className = "number-note";
      note.setAttribute("role", "status");
      field.appendChild(note);
    }
    const label = input.getAttribute("aria-label") || "This field";
    note.textContent = `⚠ ${label}: ${reason}; the field keeps ${shown(Number(input.dataset.held))}.`;
  }
  document.addEventListener("focusin", (event) => {
    if (isNumberField(event.target) && refusal(event.target) === null) event.target.dataset.held = event.target.value;
  }, true);
  document.addEventListener("click", (event) => {  // a step (−/+) changes the value the field holds
    const step = event.target.closest && event.target.closest(
      '[data-testid="stNumberInputStepUp"], [data-testid="stNumberInputStepDown"]');
    const input = step && step.closest('[data-testid="stNumberInput"]').querySelector("input");
    if (input) setTimeout(() => { if (refusal(input) === null) input.dataset.held = input.value; }, 0);
  }, true);
  document.addEventListener("keydown", commit, true);
  document.addEventListener("focusout", commit, true);
})();
"""


# A static table's CSV download (ui/static_table.py): the button holds the CSV; a click saves it under its file name.
TABLE_DOWNLOADS_JS = """
(() => {
  if (window.__tableDownloads) return;
  window.__tableDownloads = true;
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("button.table-download[data-csv]");
    if (!button) return;
    const url = URL.createObjectURL(new Blob([button.dataset.csv], { type: "text/csv" }));
    const save = document.createElement("a");
    save.href = url;
    save.download = button.dataset.file;
    document.body.appendChild(save);
    save.click();
    save.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  });
})();
"""


_ROUTED = script_json([spec.url_path for spec in (*PAGES, GLOSSARY)])
_INSTALLED = (
    f"<style>{PAGE_CSS}{chart_element.CSS}</style>"
    f"<script>{ROUTER_JS % _ROUTED}{NUMBER_NOTES_JS}{TABLE_DOWNLOADS_JS}{chart_element.JS}</script>"
)


def install() -> None:
    """Add the link router, the number-field notes, the table downloads, the chart script and the page CSS to the
    page (about thirteen kilobytes, idempotent in the browser)."""
    draw_html(_INSTALLED, scripts=True)
