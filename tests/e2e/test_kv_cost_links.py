"""In-app navigation to the cost page in Chromium: the overview's link opens its own scenario even after the reader
has used the cost page, and a page opened from the sidebar (no query) keeps the session's scenario."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from ui.elements.navigation import HOME, PAGES

KV = next(spec for spec in PAGES if spec.url_path == "kv_cost")


def heading(watch: object) -> str:
    """The memory calculator's scenario heading, under the plan ('Llama-3.1-70B on H100 SXM, 32,768 tokens per …')."""
    return watch.page.get_by_role("heading", level=3).filter(has_text="tokens per user").first.inner_text()


def test_case5_the_overviews_link_opens_its_scenario_after_a_visit(server, watch):
    watch.open(server.url(f"{KV.url_path}?calculator=open"), KV.landmark)  # the reader has been on the cost page
    assert heading(watch).startswith("Primer's modern 7B")
    watch.navigate(HOME)
    link = watch.page.get_by_role("link", name="Open KV-cache cost calculator")
    link.scroll_into_view_if_needed()
    asked = parse_qs(urlparse(link.get_attribute("href")).query)  # the overview's scenario, GPUs per copy included
    link.click()
    watch.page.get_by_role("heading", name=KV.landmark).first.wait_for()
    watch.settle()
    watch.page.wait_for_function("() => window.location.search.includes('model=Llama-3.1-70B')", timeout=30_000)
    assert heading(watch).startswith("Llama-3.1-70B on H100 SXM")
    opened = parse_qs(watch.page.evaluate("window.location.search").lstrip("?"))
    assert opened["tp"] == asked["tp"]
    watch.navigate(HOME)
    watch.navigate(KV)  # from the sidebar, no query: the session's scenario stays
    assert heading(watch).startswith("Llama-3.1-70B on H100 SXM")
    assert watch.exceptions_on_screen() == 0 and not watch.errors, watch.errors
