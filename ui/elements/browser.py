"""What every page adds to the browser once: in-app links that stay in the same tab and session, a note under a
number field naming a typed value the browser refused, a static table's CSV download, the script that draws the
charts (ui/elements/chart_element.py), readable captions and phone layout.

Streamlit opens every markdown link in a new tab, which starts a whole new app session (seconds on a cold server).
The script below catches a plain click on a link to one of the app's own pages (glossary terms, the overview's
pipeline blocks) and lets Streamlit's own router switch pages in place, keeping the session; the link's query
(`?term=kv-cache`, `?trace_step=qkv`) travels with it. Ctrl/⌘-click still opens a new tab.
"""

from __future__ import annotations

from ui.elements import chart_element
from ui.elements.html_element import draw_html
from ui.elements.inert import script_json
from ui.elements.navigation import GLOSSARY, PAGES
from ui.elements.web import web_file

PAGE_CSS = web_file("page.css")

ROUTER_JS = web_file("router.js")


NUMBER_NOTES_JS = web_file("number_notes.js")


TABLE_DOWNLOADS_JS = web_file("table_downloads.js")


_ROUTED = script_json([spec.url_path for spec in (*PAGES, GLOSSARY)])
_ROUTER = ROUTER_JS.replace("/*APP_PAGES*/[]", _ROUTED)
_INSTALLED = (
    f"<style>{PAGE_CSS}{chart_element.CSS}</style>"
    f"<script>{_ROUTER}{NUMBER_NOTES_JS}{TABLE_DOWNLOADS_JS}{chart_element.JS}</script>"
)


def install() -> None:
    """Add the link router, the number-field notes, the table downloads, the chart script and the page CSS to the
    page (about thirteen kilobytes, idempotent in the browser)."""
    draw_html(_INSTALLED, scripts=True)
