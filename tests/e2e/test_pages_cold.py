"""Every page, opened by a deep link as the very first request to a freshly started server, shows itself cleanly."""

from __future__ import annotations

import pytest

from ui.elements.navigation import GLOSSARY, HOME, PAGES

ALL_PAGES = [HOME, *PAGES, GLOSSARY]


@pytest.mark.e2e
@pytest.mark.parametrize("spec", ALL_PAGES, ids=[spec.url_path or "home" for spec in ALL_PAGES])
def test_cold_deep_link(cold_server, watch, spec):
    watch.open(cold_server.url(spec.url_path), spec.landmark)
    heading = watch.page.locator("h1").first.inner_text()
    assert spec.landmark in heading, f"deep link to /{spec.url_path} showed '{heading}' instead"
    assert watch.exceptions_on_screen() == 0
    # The app's own navigation, not Streamlit's file-name fallback ("cnn vs head", "overview", …).
    sidebar = watch.page.locator('[data-testid="stSidebarNav"]').inner_text()
    assert [line.strip() for line in sidebar.splitlines() if line.strip()] == [s.title for s in ALL_PAGES]
    if spec.url_path == "kv_cost":  # its first screen is the plan (the charts are in its calculator, opened on demand)
        watch.page.locator('.metric-cards[aria-label="The plan"]').wait_for(timeout=30_000)
    elif spec in PAGES:
        charts = watch.page.locator(".js-plotly-plot")
        charts.first.wait_for(timeout=30_000)
        assert charts.count() >= 1
    watch.screenshot(f"cold-{spec.url_path or 'home'}")
    assert watch.errors == [], watch.errors
