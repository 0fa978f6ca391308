"""The cost page's "Latency under load" section in Chromium (issue 26): opened by a link naming the engine and the
section, it draws both curves at 1440 × 900 and on a phone (390 × 844), the address keeps the engine and the section
(written the page's way), and the kept address opens the same section again."""

from __future__ import annotations

import urllib.parse

import pytest

from tests.e2e.conftest import PageWatch
from ui.elements.navigation import PAGES

KV = next(spec for spec in PAGES if spec.url_path == "kv_cost")
LINK = "?engine=trtllm&kv_section=Latency+under+load&model=llama-3.1-70b&tp=4"
HEADING = "Latency under load: first token and token gaps"


def _open_section(watch: PageWatch, url: str) -> dict[str, list[str]]:
    watch.open(url, KV.landmark, timeout=120_000)
    watch.page.get_by_role("heading", name=HEADING).first.wait_for(timeout=120_000)
    watch.settle(120_000)
    plots = watch.page.locator(".js-plotly-plot")
    watch.page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=60_000)
    assert plots.count() >= 2
    text = watch.page.get_by_text("The target breaks at about").first
    text.scroll_into_view_if_needed()
    assert "requests/s per copy" in text.inner_text()
    assert watch.exceptions_on_screen() == 0 and not watch.errors, watch.errors
    return urllib.parse.parse_qs(urllib.parse.urlparse(watch.page.url).query)


@pytest.mark.parametrize(("name", "viewport"), [("desktop", {"width": 1440, "height": 900}), ("phone", None)])
def test_the_section_by_link_at_both_sizes_and_the_link_keeps_it(server, browser, name, viewport):
    from tests.e2e.conftest import PHONE

    watch = PageWatch(browser, viewport or PHONE)
    try:
        query = _open_section(watch, server.url(KV.url_path) + LINK)
        assert query["engine"] == ["TensorRT-LLM"] and query["kv_section"] == ["Latency under load"]
        section = watch.page.get_by_role("heading", name=HEADING).first
        section.scroll_into_view_if_needed()
        watch.page.wait_for_timeout(500)
        watch.page.screenshot(path=f"test-artifacts/kv-latency-{name}-viewport.png")
        watch.screenshot(f"kv-latency-{name}")
        kept = watch.page.url  # the link as the page wrote it opens the same section in a fresh tab
    finally:
        watch.close()
    again = PageWatch(browser, viewport or PHONE)
    try:
        query = _open_section(again, kept)
        assert query["engine"] == ["TensorRT-LLM"] and query["kv_section"] == ["Latency under load"]
        assert "under TensorRT-LLM's rules" in again.page.get_by_text("under TensorRT-LLM's rules").first.inner_text()
    finally:
        again.close()
