"""The cost page's workload-first screen in a real browser, at desktop (1440 × 900) and phone (390 × 844) sizes: the
plan answers first, the search's table shows its runners-up, a pin goes into the link; and both briefings (the
overview's and the cost page's), downloaded and opened offline at A4 width (794 px) and on a phone, show every chart
label whole and need no sideways scroll."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from core.plan import search
from core.plan import serving as sv
from core.plan.model_config import presets
from tests.e2e.conftest import ARTIFACTS, PHONE, PageWatch
from ui.elements.navigation import HOME, PAGES

SPEC = next(spec for spec in PAGES if spec.script == "pages/kv_cost.py")
TASK = "model=Llama-3.1-70B&rpm=300&prompt=1500&answer=400&ttft=2"
LOAD = sv.Workload(requests_per_minute=300, prompt_tokens=1500, output_tokens=400, ttft_s=2.0)
DESKTOP = {"width": 1440, "height": 900}
A4 = {"width": 794, "height": 1123}

# Every chart's SVG, and each label in it (ticks, axis titles, bar texts, legend) whose box leaves the SVG's box, or
# axis titles whose boxes overlap each other or the tick labels of the other axis.
CLIPPED = """() => {
  const out = [];
  document.querySelectorAll('.chart').forEach((chart, index) => {
    const svg = chart.querySelector('svg.main-svg');
    if (!svg) { out.push(`chart ${index}: not drawn`); return; }
    const box = svg.getBoundingClientRect();
    const labels = chart.querySelectorAll('.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, .bartext, '
      + '.legendtext');
    labels.forEach(label => {
      const r = label.getBoundingClientRect();
      if (!label.textContent.trim() || r.width === 0) return;
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        out.push(`chart ${index}: "${label.textContent}" leaves the chart`);
    });
    const titles = [...chart.querySelectorAll('.g-xtitle text, .g-ytitle text, .legendtext')]
      .map(t => [t.textContent, t.getBoundingClientRect()]).filter(([, r]) => r.width > 0);
    for (let i = 0; i < titles.length; i++) for (let j = i + 1; j < titles.length; j++) {
      const [a, ra] = titles[i], [b, rb] = titles[j];
      if (ra.left < rb.right && rb.left < ra.right && ra.top < rb.bottom && rb.top < ra.bottom)
        out.push(`chart ${index}: "${a}" overlaps "${b}"`);
    }
  });
  return out;
}"""


def _plan() -> search.Candidate:
    return search.search(presets()["llama-3.1-70b"], LOAD).plan


def _workload_first(watch: PageWatch, server: object, name: str) -> None:
    watch.open(server.url(f"{SPEC.url_path}?{TASK}"), "Plan a deployment")
    assert watch.exceptions_on_screen() == 0
    plan = _plan()
    card = watch.page.locator(".metric-card").filter(has_text="Configuration").first
    assert card.locator(".metric-value").inner_text().strip() == f"{plan.tp} × {plan.gpu.name}"
    answer_top = card.bounding_box()["y"]
    rpm_top = watch.page.get_by_label("Peak requests per minute", exact=True).bounding_box()["y"]
    assert answer_top < rpm_top  # the answer first, above the inputs
    table = watch.page.get_by_role("region", name="The plan and its runners-up")
    table.scroll_into_view_if_needed()
    assert table.is_visible()
    assert "(the plan)" in table.locator("tbody tr").first.inner_text()
    width = watch.page.viewport_size["width"]
    assert watch.page.evaluate("() => document.documentElement.scrollWidth") <= width  # no sideways scroll
    watch.screenshot(name)
    assert not watch.errors, watch.errors


@pytest.mark.e2e
def test_the_workload_first_screen_at_desktop_size(server, browser):
    watch = PageWatch(browser, DESKTOP)
    try:
        _workload_first(watch, server, "kv-cost-plan-desktop")
        watch.page.get_by_text("Search settings: GPU types allowed", exact=False).first.click()
        watch.settle()
        pin = watch.page.get_by_label("GPUs per model copy", exact=True)
        pin.scroll_into_view_if_needed()
        pin.click()
        watch.page.get_by_role("option", name="8", exact=True).click()
        watch.settle()
        watch.page.wait_for_function("() => window.location.search.includes('pin_tp=8')", timeout=30_000)
        card = watch.page.locator(".metric-card").filter(has_text="Configuration").first
        assert "the answer is yours, not the search's" in card.inner_text()
        assert parse_qs(urlparse(watch.page.url).query)["pin_tp"] == ["8"]
    finally:
        watch.close()


@pytest.mark.e2e
def test_the_workload_first_screen_on_a_phone(server, phone):
    _workload_first(phone, server, "kv-cost-plan-phone")


def read_offline(browser: object, saved: Path, viewport: dict[str, int], shot: str) -> None:
    """Open a downloaded briefing from disk at a width: every chart drawn, no label clipped, no sideways scroll."""
    reader = PageWatch(browser, viewport)
    try:
        reader.page.goto(saved.as_uri(), wait_until="load")
        reader.page.wait_for_function(
            "() => [...document.querySelectorAll('.chart')].every(c => c.querySelector('svg.main-svg'))",
            timeout=30_000,
        )
        reader.page.wait_for_timeout(500)
        assert reader.page.evaluate(CLIPPED) == []
        assert reader.page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
        reader.page.screenshot(path=str(ARTIFACTS / f"{saved.stem}-{shot}.png"), full_page=True)
        assert not reader.errors, reader.errors
    finally:
        reader.close()


def _download(watch: PageWatch, server: object, path: str, landmark: str, name: str) -> Path:
    watch.open(server.url(path), landmark)
    with watch.page.expect_download(timeout=60_000) as caught:
        watch.page.get_by_role("button", name="Download briefing").first.click()
    saved = ARTIFACTS / name
    caught.value.save_as(saved)
    return saved


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("path", "landmark", "name"),
    [
        (HOME.url_path, HOME.landmark, "overview-briefing.html"),
        (f"{SPEC.url_path}?{TASK}", "Plan a deployment", "kv-cost-briefing.html"),
    ],
)
def test_a_downloaded_briefing_fits_its_labels_at_a4_width_and_on_a_phone(server, browser, path, landmark, name):
    watch = PageWatch(browser, DESKTOP)
    try:
        saved = _download(watch, server, path, landmark, name)
    finally:
        watch.close()
    text = saved.read_text(encoding="utf-8")
    assert "localhost" not in text and "127.0.0.1" not in text  # the reopen link: the real address, or none
    if name.startswith("kv-cost"):
        plan = _plan()
        assert plan.label in text and "The plan and its runners-up" in text and "Build vs buy" in text
    for viewport, shot in ((A4, "a4"), (PHONE, "phone")):
        read_offline(browser, saved, viewport, shot)
