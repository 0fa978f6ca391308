"""The 'How it learned' page in Chromium, at desktop (1440 × 900) and phone (390 × 844) sizes: it draws its charts with
no console error and no serious axe finding, every checkpoint of the replay renders from the slider (keyboard), play
moves the slider on its own and pause stops it, and the discarded world's section ends with the primer's lesson."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from core.explain.checkpoints import shipped_replay
from core.explain.discarded_world import LESSON
from tests.e2e.conftest import PHONE, PageWatch
from tests.e2e.test_accessibility import blocking_violations
from ui.elements.navigation import PAGES

SPEC = next(spec for spec in PAGES if spec.script == "pages/how_it_learned.py")
DESKTOP = {"width": 1440, "height": 900}
SIZES = {"desktop": DESKTOP, "phone": PHONE}
REPLAY = shipped_replay()
STEP = re.compile(r"At step ([\d,]+): P\(on")


def shown_step(watch: PageWatch) -> int:
    lead = watch.page.locator("[data-testid='stMarkdownContainer']", has_text="Training is the search for weights")
    text = lead.first.inner_text()
    return int(STEP.search(text).group(1).replace(",", ""))


def slider(watch: PageWatch) -> object:
    return watch.page.locator(".st-key-learned_step input[type='range']").first


@pytest.fixture(params=list(SIZES), ids=list(SIZES))
def viewed(request, browser) -> PageWatch:
    watch = PageWatch(browser, SIZES[request.param])
    watch.size = request.param
    yield watch
    watch.close()


@pytest.mark.e2e
def test_the_page_draws_its_sections_with_no_error_and_no_serious_axe_finding(server, viewed):
    viewed.open(server.url(SPEC.url_path), SPEC.landmark)
    page = viewed.page
    page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
    expect(page.locator(".js-plotly-plot")).to_have_count(8, timeout=30_000)  # 4 curves/maps + 4 heads
    assert shown_step(viewed) == int(REPLAY.steps[-1])
    assert blocking_violations(page) == []
    viewed.screenshot(f"how-it-learned-{viewed.size}")
    page.get_by_role("tab", name="③ The rule it could not learn").click()
    viewed.settle()
    page.get_by_text(LESSON, exact=False).first.wait_for(timeout=30_000)
    expect(page.locator(".js-plotly-plot")).to_have_count(1, timeout=30_000)
    assert blocking_violations(page) == []
    viewed.screenshot(f"how-it-learned-discarded-{viewed.size}")
    assert viewed.exceptions_on_screen() == 0
    assert viewed.errors == [], viewed.errors


@pytest.mark.e2e
def test_every_checkpoint_renders_from_the_slider(server, watch):
    watch.open(server.url(f"{SPEC.url_path}?learned_step=0"), SPEC.landmark)
    assert shown_step(watch) == 0
    for step in REPLAY.steps.tolist()[1:]:
        slider(watch).press("ArrowRight")
        watch.settle()
        watch.page.wait_for_function(
            "(step) => [...document.querySelectorAll('[data-testid=\"stMarkdownContainer\"]')]"
            ".some(e => e.innerText.includes(`At step ${step}: P(on`))",
            arg=f"{step:,}",
            timeout=30_000,
        )
    assert shown_step(watch) == int(REPLAY.steps[-1])
    assert "learned_step=2000" in watch.page.url
    expect(watch.page.locator(".js-plotly-plot")).to_have_count(8)
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_play_moves_the_slider_and_pause_stops_it(server, watch):
    watch.open(server.url(SPEC.url_path), SPEC.landmark)
    watch.page.get_by_role("button", name="Play the training").click()
    watch.page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stMarkdownContainer\"]')]"
        ".some(e => /At step ([2-9]|[1-9]\\d+): P\\(on/.test(e.innerText))",
        timeout=30_000,
    )
    watch.page.get_by_role("button", name="Pause").click()
    watch.settle()
    watch.page.wait_for_timeout(1_000)  # a tick already on its way may land
    held = shown_step(watch)
    watch.page.wait_for_timeout(2_500)
    assert shown_step(watch) == held < int(REPLAY.steps[-1])
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_a_hostile_step_in_a_shared_link_is_named_and_clamped(server, watch):
    watch.open(server.url(f"{SPEC.url_path}?learned_step=150"), SPEC.landmark)
    alert = watch.page.get_by_text("no checkpoint was kept at step 150", exact=False).first
    alert.wait_for(timeout=30_000)
    assert shown_step(watch) == 141
    assert watch.errors == [], watch.errors
