"""The briefing to take away: "Download briefing" on the overview and on the cost page gives one HTML file that opens in
Chromium with the network off and draws its charts (plotly.js is inside the file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import ARTIFACTS
from ui.elements.navigation import HOME, PAGES

KV = next(spec for spec in PAGES if spec.url_path == "kv_cost")


def download_briefing(watch: object, name: str) -> Path:
    with watch.page.expect_download(timeout=60_000) as waiting:
        watch.page.get_by_role("button", name="Download briefing").click()
    path = ARTIFACTS / name
    waiting.value.save_as(path)
    return path


def open_offline(browser: object, path: Path) -> tuple[object, list[str], list[str]]:
    """The file in a fresh context with the network switched off; every request leaving the machine is refused and
    recorded."""
    context = browser.new_context(offline=True)
    page = context.new_page()
    requests: list[str] = []
    errors: list[str] = []

    def refuse(route: object) -> None:
        requests.append(route.request.url)
        route.abort()

    page.route("http*://**", refuse)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    return page, requests, errors


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("spec", "charts", "query"),
    [(HOME, 2, ""), (KV, 5, "?model=llama-3.1-70b&tp=4&context=65536")],  # the plan's and the budget's, the memory's 3
    ids=["overview", "kv_cost"],
)
def test_the_briefing_opens_offline_with_its_charts(server, watch, browser, spec, charts, query):
    watch.open(server.url(spec.url_path + query), spec.landmark)
    path = download_briefing(watch, f"briefing-{spec.url_path or 'home'}.html")
    page, requests, errors = open_offline(browser, path)
    try:
        page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
        assert page.locator(".js-plotly-plot").count() == charts
        assert page.locator(".js-plotly-plot .main-svg").count() >= charts
        assert requests == [] and errors == []
        links = page.locator("a[href^='http']").evaluate_all("links => links.map(a => a.href)")
        # the way back into the app is written only for the page's real address: this server's is local, so none
        assert not any(link.startswith(server.url("")) or "localhost" in link for link in links), links
        assert "Reopen this scenario" not in page.content()
        for aria in page.locator("[role=img]").evaluate_all("els => els.map(e => e.getAttribute('aria-label'))"):
            assert aria and len(aria) > 10
        page.locator(".js-plotly-plot").first.hover()  # still interactive: plotly answers the pointer
        assert page.locator(".js-plotly-plot .nsewdrag").count() >= 1
    finally:
        page.context.close()
