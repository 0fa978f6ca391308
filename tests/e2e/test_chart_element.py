"""The chart element in Chromium: a control's change redraws its chart in place (the same plot, not a new one), the
figure's own height is honoured, the toolbar keeps the PNG download and a full-screen view and offers no upload to
Plotly's cloud."""

from __future__ import annotations

import pytest

from ui.elements.navigation import PAGES

SPEC = next(spec for spec in PAGES if spec.script == "pages/cnn_vs_head.py")
CHART = ".primer-chart[data-chart=window]"
COST = next(spec for spec in PAGES if spec.script == "pages/kv_cost.py")
KV_CHART = ".primer-chart[data-chart=kv-context]"
BUTTONS = "charts => [...charts[0].querySelectorAll('.modebar-btn')].map(b => b.dataset.title)"


def open_window(watch, server) -> None:
    watch.open(server.url(SPEC.url_path), SPEC.landmark)
    watch.page.locator(f"{CHART} .main-svg").first.wait_for(timeout=30_000)


@pytest.mark.e2e
def test_moving_the_window_redraws_the_same_plot_in_place(server, watch):
    open_window(watch, server)
    watch.page.evaluate(f"() => (document.querySelector('{CHART}').marked = true)")
    before = watch.page.locator(f"{CHART} .gtitle").text_content()
    thumb = watch.page.locator(".st-key-win input[type='range']").first
    thumb.focus()
    thumb.press("ArrowRight")
    watch.page.wait_for_function(
        f"t => document.querySelector('{CHART} .gtitle').textContent !== t", arg=before, timeout=30_000
    )
    watch.settle()
    assert "Window 2" in watch.page.locator(f"{CHART} .gtitle").text_content()
    assert watch.page.evaluate(f"() => document.querySelector('{CHART}').marked === true"), "the plot was rebuilt"
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_the_figures_height_and_the_toolbar(server, watch):
    open_window(watch, server)
    chart = watch.page.locator(CHART)
    assert chart.evaluate("c => c._fullLayout.height") == 560  # the sliding-window figure's own height
    titles = chart.evaluate_all(BUTTONS)
    assert "Download plot as a PNG" in titles and "Full screen" in titles
    assert not any("Share" in title for title in titles), titles
    assert len(chart.get_attribute("aria-label")) > 10


@pytest.mark.e2e
def test_full_screen_fills_the_screen_and_comes_back(server, watch):
    open_window(watch, server)
    chart = watch.page.locator(CHART)
    chart.hover()
    chart.locator(".modebar-btn[data-title='Full screen']").click()
    watch.page.wait_for_function(f"() => document.fullscreenElement === document.querySelector('{CHART}')")
    watch.page.wait_for_function(f"() => document.querySelector('{CHART}')._fullLayout.height === window.innerHeight")
    watch.page.evaluate("() => document.exitFullscreen()")
    watch.page.wait_for_function(f"() => document.querySelector('{CHART}')._fullLayout.height === 560")
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_a_redrawn_chart_starts_from_the_margins_plotly_settled_on(server, watch):
    """The cost page's chart grows its left and bottom margins to fit its labels (the figure asks for 10 px); the
    next draw starts from those, so plotly draws it once instead of twice."""
    watch.open(server.url(f"{COST.url_path}?calculator=open"), COST.landmark)
    chart = watch.page.locator(KV_CHART)
    chart.locator(".main-svg").first.wait_for(timeout=30_000)
    settled = chart.evaluate("c => ({l: c._fullLayout._size.l, b: c._fullLayout._size.b})")
    assert settled["l"] > 10 and settled["b"] > 10
    watch.page.locator(".st-key-context [data-testid='stNumberInputStepUp']").click()
    watch.page.wait_for_function(  # the context marker moves to the new T
        f"() => document.querySelector('{KV_CHART}').layout.annotations.some(a => a.text === 'T = 33,792')",
        timeout=30_000,
    )
    watch.settle()
    margin = chart.evaluate("c => c.layout.margin")
    assert margin["l"] == settled["l"] and margin["b"] == settled["b"]
    assert watch.errors == [], watch.errors


REVISION = f"() => document.querySelector('{KV_CHART}').layout.datarevision"
LINE = f"() => JSON.stringify(document.querySelector('{KV_CHART}').data[0].y)"  # the first line's values
MARKER = f"() => document.querySelector('{KV_CHART}').layout.shapes[0].x0"


@pytest.mark.e2e
def test_a_redraw_with_the_same_data_keeps_its_data_revision_and_new_data_gets_a_new_one(server, watch):
    # The context moves only the chart's T marker: its lines are the same data, which plotly then does not recompute.
    watch.open(server.url(f"{COST.url_path}?calculator=open"), COST.landmark)
    watch.page.locator(f"{KV_CHART} .main-svg").first.wait_for(timeout=30_000)
    watch.settle()  # the page's whole first screen drawn: the chart's width no longer moves
    watch.page.wait_for_timeout(500)
    revision, line = watch.page.evaluate(REVISION), watch.page.evaluate(LINE)
    assert isinstance(revision, int), revision
    watch.page.locator(".st-key-context [data-testid='stNumberInputStepUp']").click()
    watch.page.wait_for_function(f"() => {MARKER[6:]} === 33792", timeout=30_000)
    watch.settle()
    assert watch.page.evaluate(REVISION) == revision and watch.page.evaluate(LINE) == line
    # Past 512K tokens the sweep runs to twice the context: new data in the same plot, a new revision, new lines.
    context = watch.page.get_by_label("Context per user T (tokens)", exact=True)
    context.fill("600000")
    context.press("Enter")
    watch.page.wait_for_function(f"() => {MARKER[6:]} === 600000", timeout=30_000)
    watch.settle()
    assert watch.page.evaluate(REVISION) == revision + 1 and watch.page.evaluate(LINE) != line
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_a_chart_is_drawn_again_when_its_tab_comes_back(server, watch):
    """A tab's chart leaves the page while another tab is open (its plot is freed) and is drawn anew on return."""
    watch.open(server.url(f"{COST.url_path}?calculator=open"), COST.landmark)
    watch.page.locator(f"{KV_CHART} .main-svg").first.wait_for(timeout=30_000)
    for tab, chart in (("Memory per GPU", ".primer-chart[data-chart=kv-memory]"), ("KV vs context", KV_CHART)):
        watch.page.get_by_role("tab", name=tab).click()
        watch.page.locator(f"{chart} .main-svg").first.wait_for(timeout=30_000)
        watch.settle()
        assert watch.page.locator(".primer-chart").count() == 1  # the open tab's chart alone
    assert watch.errors == [], watch.errors
