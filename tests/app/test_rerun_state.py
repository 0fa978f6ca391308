"""What a rerun carries: charts are app-built HTML that keeps no session state. (A chart drawn as a custom component
is two widget states, and Streamlit rebuilds the session's visible state, presenting every widget value, for each
selector and number field on every run.) Each chart on screen has a plot slot of its own: the browser keeps one plot
per slot, so two charts in one slot would take turns in one plot."""

from __future__ import annotations

import re

import pytest

from tests.app.helpers import charts, run_page
from ui.elements.navigation import PAGES

OPEN = {"kv_cost": {"calculator": "open"}}  # the cost page's charts are in its memory calculator, opened by the link


@pytest.mark.parametrize("spec", PAGES, ids=lambda spec: spec.url_path)
def test_a_pages_charts_keep_no_session_state(spec):
    at = run_page(str(spec.path), **OPEN.get(spec.url_path, {}))
    drawn = charts(at)
    assert drawn, "every page draws a chart on its first screen"
    assert not at.get("bidi_component")
    held = [chart["key"] for chart in drawn if chart["key"] in at.session_state]
    assert held == [], held


@pytest.mark.parametrize("spec", PAGES, ids=lambda spec: spec.url_path)
def test_every_chart_on_screen_has_a_slot_of_its_own(spec):
    at = run_page(str(spec.path), **OPEN.get(spec.url_path, {}))
    slots = [
        slot for element in at.get("html") for slot in re.findall(r'<script data-slot="([^"]*)">', element.proto.body)
    ]
    assert len(slots) == len(charts(at)) and len(set(slots)) == len(slots), slots
