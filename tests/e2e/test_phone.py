"""Every page at phone size (390 × 844): it draws with no error, nothing runs off the side, no two subplots or their
captions overlap, the answer comes before the inputs; a screenshot of each is kept in test-artifacts/."""

from __future__ import annotations

import pytest

from ui.elements.navigation import GLOSSARY, HOME, PAGES

ALL_PAGES = [HOME, *PAGES, GLOSSARY]

# Pairs of boxes inside one chart that intersect: plot areas of subplots (plotly's drag rectangles, one per subplot)
# and annotations (subplot captions). Boxes are [left, top, right, bottom] in CSS pixels.
OVERLAPS = """
() => {
  const boxes = (chart, selector) => [...chart.querySelectorAll(selector)].map(e => e.getBoundingClientRect())
    .filter(r => r.width > 0 && r.height > 0).map(r => [r.left, r.top, r.right, r.bottom]);
  const cross = (a, b) => a[0] < b[2] - 1 && b[0] < a[2] - 1 && a[1] < b[3] - 1 && b[1] < a[3] - 1;
  const found = [];
  document.querySelectorAll('.js-plotly-plot').forEach((chart, index) => {
    for (const selector of ['.draglayer .nsewdrag', '.annotation-text-g']) {
      const list = boxes(chart, selector);
      for (let i = 0; i < list.length; i++)
        for (let j = i + 1; j < list.length; j++)
          if (cross(list[i], list[j])) found.push(`chart ${index}: ${selector} ${i} overlaps ${j}`);
    }
  });
  return found;
}
"""
OVERFLOW = """
() => { const main = document.querySelector('[data-testid="stMain"]');
        return main.scrollWidth - main.clientWidth; }
"""


def top(watch, locator) -> float:
    locator.first.wait_for(timeout=30_000)
    return locator.first.bounding_box()["y"]


@pytest.mark.e2e
@pytest.mark.parametrize("spec", ALL_PAGES, ids=[spec.url_path or "home" for spec in ALL_PAGES])
def test_every_page_reads_on_a_phone(server, phone, spec):
    opened = "?calculator=open" if spec.url_path == "kv_cost" else ""  # the cost page's charts: in its calculator
    phone.open(server.url(spec.url_path + opened), spec.landmark)
    assert phone.exceptions_on_screen() == 0
    if spec in PAGES or spec is HOME:
        phone.page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
        phone.page.wait_for_timeout(500)  # the last charts finish their layout
    assert phone.page.evaluate(OVERFLOW) <= 1, "the page scrolls sideways on a phone"
    assert phone.page.evaluate(OVERLAPS) == []
    phone.screenshot(f"phone-{spec.url_path or 'home'}")
    assert phone.errors == [], phone.errors


@pytest.mark.e2e
def test_cost_page_shows_its_answer_before_its_inputs_on_a_phone(server, phone):
    spec = next(s for s in PAGES if s.url_path == "kv_cost")
    phone.open(server.url(f"{spec.url_path}?calculator=open"), spec.landmark)
    plan = top(phone, phone.page.locator('.metric-cards[aria-label="The plan"]'))
    assert plan < top(phone, phone.page.get_by_test_id("stSelectbox"))  # the plan before the workload's questions
    memory_answer = top(phone, phone.page.locator(".st-key-lead"))
    memory_inputs = top(phone, phone.page.get_by_test_id("stSelectbox").filter(has_text="KV cache number type"))
    assert memory_answer < memory_inputs  # the memory calculator's answer before its own inputs
    assert "GB of" in phone.page.locator(".st-key-lead").inner_text()
    assert top(phone, phone.page.locator('.metric-cards[aria-label="Headline numbers"]')) < memory_inputs


@pytest.mark.e2e
def test_a_tap_on_each_headline_help_shows_it_inside_the_screen(server, phone):
    spec = next(s for s in PAGES if s.url_path == "kv_cost")
    phone.open(server.url(f"{spec.url_path}?calculator=open"), spec.landmark)
    cards = phone.page.locator(".metric-card")
    cards.first.wait_for()
    groups = phone.page.locator(".metric-cards")
    assert groups.count() == 2  # the plan's cards, then the memory calculator's headline numbers
    for index in range(cards.count()):
        card = cards.nth(index)
        card.get_by_role("button").tap()
        tip = card.locator(".metric-help-text")
        tip.wait_for(state="visible", timeout=5_000)
        box = tip.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (index, box)
        phone.page.locator("h1").first.tap()  # a tap elsewhere closes it
        tip.wait_for(state="hidden", timeout=5_000)


@pytest.mark.e2e
def test_trace_shows_the_matrix_before_the_step_list_on_a_phone(server, phone):
    spec = next(s for s in PAGES if s.url_path == "two_layer_trace")
    phone.open(server.url(spec.url_path), spec.landmark)
    steps = phone.page.locator(".st-key-answer-first").get_by_test_id("stRadio")
    matrix = phone.page.locator(".st-key-answer-first .js-plotly-plot")
    assert top(phone, matrix) < top(phone, steps)


@pytest.mark.e2e
def test_cnn_window_grids_stay_apart_on_a_phone(server, phone):
    spec = next(s for s in PAGES if s.url_path == "cnn_vs_head")
    phone.open(server.url(spec.url_path), spec.landmark)
    chart = phone.page.locator(".js-plotly-plot").first
    chart.locator(".nsewdrag").first.wait_for(timeout=30_000)
    grids = chart.locator(".draglayer .nsewdrag")
    assert grids.count() == 4
    widths = [grids.nth(i).bounding_box()["width"] for i in range(4)]
    assert min(widths) >= 120, widths  # five cells of 24 px or more: values and axis numbers do not collide
    assert phone.page.evaluate(OVERLAPS) == []
