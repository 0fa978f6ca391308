"""The chart element as app-built HTML: its figure travels as inert JSON that no text in a figure can turn into
markup, and every script the page installs survives the sanitiser Streamlit runs over st.html before it runs it."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import plotly.graph_objects as go

from tests.app.helpers import CHART_DATA
from ui.elements import browser, chart_element

HOSTILE = "</script><script>alert(1)</script><!-- & <b>"
# DOMPurify (Streamlit's sanitiser for st.html) removes a script whose text holds "<" before a letter, "/" or "!",
# so a script with such text would silently never run.
MARKUP_START = re.compile(r"<[/\w!]")


class _Scripts(HTMLParser):
    """The script elements of an HTML text, as a browser parses it: (attributes, text) each."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict, str]] = []
        self.others: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "script":
            self.scripts.append((dict(attrs), ""))
        else:
            self.others.append(tag)

    def handle_data(self, data: str) -> None:
        if self.scripts and self.lasttag == "script":
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)


def element(title: str = HOSTILE, slot: str | None = None) -> str:
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name=title), layout={"title": title})
    return chart_element.element_html(fig, key="k", alt=f"alt {title}", config={"displaylogo": False}, slot=slot)


def test_text_in_a_figure_stays_inside_its_json():
    parsed = _Scripts()
    parsed.feed(element())
    assert parsed.others == []  # no element but the two scripts
    (data_attrs, data), (hand_attrs, hand) = parsed.scripts
    assert data_attrs == {"type": "application/json", "class": "primer-chart-data"}
    assert not MARKUP_START.search(data) and "&" not in data
    sent = json.loads(data)
    assert sent["figure"]["layout"]["title"]["text"] == HOSTILE and sent["alt"] == f"alt {HOSTILE}"
    assert sent["figure"]["data"][0]["name"] == HOSTILE
    assert hand_attrs == {"data-slot": "k"} and not MARKUP_START.search(hand)


def test_the_slot_names_the_plot_and_is_quoted():
    parsed = _Scripts()
    parsed.feed(element(slot='a" onload="x'))
    assert parsed.scripts[1][0] == {"data-slot": 'a" onload="x'}


def test_the_test_helpers_read_the_figure_the_browser_reads():
    assert json.loads(CHART_DATA.findall(element())[0])["key"] == "k"


def test_no_installed_script_would_be_dropped_by_the_sanitiser():
    parsed = _Scripts()
    parsed.feed(browser._INSTALLED)
    assert parsed.scripts, "the page installs its scripts"
    for _, text in parsed.scripts:
        assert not MARKUP_START.search(text), MARKUP_START.search(text)
    assert "window.primerChart =" in browser._INSTALLED  # the chart script is installed with the others
