"""Accessibility in the browser: axe-core (axe-playwright-python) finds no critical or serious violation on any page,
at its default state and after one interaction; every control is reachable with the Tab key; every chart keeps its
text alternative; in-app links (glossary terms, the overview's picture) open in the same tab and session."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from axe_playwright_python.sync_playwright import Axe

from ui.elements.navigation import GLOSSARY, HOME, PAGES

ALL_PAGES = [HOME, *PAGES, GLOSSARY]
STEP_WEIGHTS = re.compile(r"^weights ·")  # the shape table's row: its step name, then its operation and shape
BLOCKING = ("critical", "serious")
FOCUSABLE = r"""
() => [...document.querySelectorAll('[data-testid="stMain"] :is(a[href], button, input, textarea, select, '
  + '[role="tab"], [role="radio"], [role="switch"], [role="slider"], [tabindex])')]
  .filter(e => e.tabIndex >= 0 && !e.disabled && !e.closest('[aria-hidden="true"]')
    && !e.closest('.modebar') && e.getClientRects().length > 0)
  .map(e => e.outerHTML.replace(/ aria-describedby="[^"]*"/g, "").slice(0, 120))
"""
# An element's identity for the walk: its start tag without aria-describedby, whose ids React renumbers (and joins)
# when it draws an element again.
ACTIVE = '() => document.activeElement.outerHTML.replace(/ aria-describedby="[^"]*"/g, "").slice(0, 120)'


def _tab(page: object, name: str) -> None:
    page.get_by_role("tab", name=name).click()


INTERACTIONS: dict[str, Callable[[object], None]] = {
    "": lambda page: page.locator('a[href^="glossary?term=residual-stream"]').first.click(),
    "cnn_vs_head": lambda page: _tab(page, "② Feature maps"),
    "qkv_walkthrough": lambda page: _tab(page, "Read-out"),
    "two_layer_trace": lambda page: page.get_by_test_id("stRadioOption").filter(has_text=STEP_WEIGHTS).click(),
    "how_it_learned": lambda page: _tab(page, "③ The rule it could not learn"),
    "ablation_lab": lambda page: _tab(page, "③ All 16 subsets"),
    "kv_cost": lambda page: _tab(page, "Memory per GPU"),
    "glossary": lambda page: page.get_by_label("Find a term").fill("cache") or page.keyboard.press("Enter"),
}


OPENED = {"kv_cost": "?calculator=open"}  # the cost page opens its calculator closed; checked open too


def blocking_violations(page: object) -> list[str]:
    """axe-core's critical and serious findings on the page as it is now, one line each."""
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {[node['target'] for node in v['nodes'][:3]]}"
        for v in results.response["violations"]
        if v["impact"] in BLOCKING
    ]


def wait_for_charts(watch: object, spec: object) -> None:
    if spec in PAGES or spec is HOME:
        watch.page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)


@pytest.mark.e2e
@pytest.mark.parametrize("spec", ALL_PAGES, ids=[spec.url_path or "home" for spec in ALL_PAGES])
def test_no_serious_axe_violation_at_default_and_after_one_interaction(server, watch, spec):
    watch.open(server.url(spec.url_path), spec.landmark)
    if spec.url_path in OPENED:  # its first screen has no chart: check it as it opens, then with the calculator open
        watch.settle()
        assert blocking_violations(watch.page) == []
        watch.open(server.url(spec.url_path + OPENED[spec.url_path]), spec.landmark)
    wait_for_charts(watch, spec)
    assert blocking_violations(watch.page) == []
    INTERACTIONS[spec.url_path](watch.page)
    watch.settle()
    watch.page.wait_for_timeout(300)
    assert watch.exceptions_on_screen() == 0
    assert blocking_violations(watch.page) == []
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
@pytest.mark.parametrize("spec", ALL_PAGES, ids=[spec.url_path or "home" for spec in ALL_PAGES])
def test_every_control_is_reachable_by_keyboard_and_every_chart_has_a_text_alternative(server, watch, spec):
    watch.open(server.url(spec.url_path + OPENED.get(spec.url_path, "")), spec.landmark)
    wait_for_charts(watch, spec)
    wanted = watch.page.evaluate(FOCUSABLE)
    assert wanted, "a page with nothing to reach"
    reached: set[str] = set()
    watch.page.locator("h1").first.click()  # start from the top of the page
    for _ in range(len(wanted) + 40):
        watch.page.keyboard.press("Tab")
        reached.add(watch.page.evaluate(ACTIVE))
        if set(wanted) <= reached:
            break
    assert set(wanted) - reached == set()
    for label in watch.page.locator(".primer-chart").evaluate_all(
        "charts => charts.map(c => c.getAttribute('aria-label') || '')"
    ):
        assert len(label) > 10, "a chart without a text alternative"


@pytest.mark.e2e
def test_a_glossary_link_opens_its_term_in_the_same_tab_and_session(server, watch):
    watch.open(server.url(HOME.url_path), HOME.landmark)
    watch.page.evaluate("() => { window.__sameDocument = true; }")
    watch.page.locator('a[href^="glossary?term=residual-stream"]').first.click()
    watch.page.get_by_role("heading", name=GLOSSARY.landmark, exact=True).wait_for()
    watch.settle()
    assert len(watch.context.pages) == 1
    assert watch.page.url.endswith("/glossary?term=residual-stream")
    assert watch.page.evaluate("() => window.__sameDocument === true"), "the link reloaded the app"
    asked = watch.page.locator(".st-key-asked-term")
    assert "Residual stream" in asked.inner_text()


@pytest.mark.e2e
def test_the_pictures_blocks_are_keyboard_links_into_the_trace(server, watch):
    watch.open(server.url(HOME.url_path), HOME.landmark)
    watch.page.evaluate("() => { window.__sameDocument = true; }")
    watch.page.locator("h1").first.click()
    for _ in range(40):
        watch.page.keyboard.press("Tab")
        if watch.page.evaluate("() => document.activeElement.classList.contains('pf-box')"):
            break
    else:
        pytest.fail("no block of the picture is reachable with Tab")
    watch.page.keyboard.press("Tab")  # the second block: embeddings + positions
    watch.page.keyboard.press("Enter")
    trace = next(s for s in PAGES if s.url_path == "two_layer_trace")
    watch.page.get_by_role("heading", name=trace.landmark).first.wait_for()
    watch.settle()
    assert watch.page.evaluate("() => window.__sameDocument === true"), "the block reloaded the app"
    checked = watch.page.get_by_test_id("stRadio").locator("input:checked")
    assert checked.evaluate("input => input.closest('label').innerText").startswith("h⁰")
