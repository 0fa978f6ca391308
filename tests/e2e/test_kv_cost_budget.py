"""The cost page's budget by month in a real browser, at desktop and phone sizes: the section's charts and tables
drawn, a scenario kept by its button goes into the link, scenarios in a shared link are compared, and both downloads
work: the workbook (an xlsx whose sheets and named cells are there) and the briefing with the budget and the
scenarios, its charts whole at A4 width."""

from __future__ import annotations

import zipfile
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from tests.e2e.conftest import ARTIFACTS, PageWatch
from tests.e2e.test_kv_cost_plan import A4, DESKTOP, SPEC, TASK, read_offline
from ui.kv_cost.budget import compare
from ui.kv_cost.budget import scenarios as sc

SECTION = "kv_section=Budget+by+month"
PILOT = urlencode([("scenario", "name=Pilot&model=Llama-3.1-70B&rpm=300&prompt=1500&answer=400")])
KEPT = f"{SPEC.url_path}?{TASK}&{SECTION}&rpm=900&{PILOT}"


def _budget_screen(watch: PageWatch, server: object, name: str) -> None:
    watch.open(server.url(KEPT), "Budget by month")
    assert watch.exceptions_on_screen() == 0
    table = watch.page.get_by_role("region", name="Scenarios side by side")
    table.scroll_into_view_if_needed()
    rows = [r.inner_text().split("\t")[0].strip() for r in table.locator("tbody tr").all()]
    assert rows == [compare.NOW, "Pilot"]
    for title in ("Monthly cost of each way to pay", "Monthly cost of each scenario"):
        chart = watch.page.locator(".primer-chart").filter(has_text=title).first
        chart.scroll_into_view_if_needed()
        chart.locator("svg.main-svg").first.wait_for(timeout=30_000)
    width = watch.page.viewport_size["width"]
    assert watch.page.evaluate("() => document.documentElement.scrollWidth") <= width
    watch.screenshot(name)
    assert not watch.errors, watch.errors


@pytest.mark.e2e
def test_the_budget_and_the_scenarios_at_desktop_size(server, browser):
    watch = PageWatch(browser, DESKTOP)
    try:
        _budget_screen(watch, server, "kv-cost-budget-desktop")
        field = watch.page.get_by_label("Name for this scenario", exact=True)
        field.scroll_into_view_if_needed()
        field.fill("Rollout")
        field.press("Enter")
        watch.settle()
        watch.page.get_by_role("button", name="Keep this scenario").click()
        watch.settle()
        watch.page.wait_for_function("() => window.location.search.split('scenario=').length === 3", timeout=30_000)
        kept = parse_qs(urlparse(watch.page.url).query)[sc.SCENARIO]
        assert [parse_qs(v)["name"] for v in kept] == [["Pilot"], ["Rollout"]]
        with watch.page.expect_download(timeout=60_000) as caught:
            watch.page.get_by_role("button", name="Download the workbook (xlsx)").click()
        saved = ARTIFACTS / "kv-budget.xlsx"
        caught.value.save_as(saved)
        with zipfile.ZipFile(saved) as book:
            listing = book.read("xl/workbook.xml").decode("utf-8")
        assert all(f'name="{sheet}' in listing for sheet in ("Assumptions", "Plan", "Sources"))
        assert "<definedName" in listing
    finally:
        watch.close()


@pytest.mark.e2e
def test_the_budget_and_the_scenarios_on_a_phone(server, phone):
    _budget_screen(phone, server, "kv-cost-budget-phone")


@pytest.mark.e2e
def test_the_briefing_carries_the_budget_and_fits_its_charts_at_a4(server, browser):
    watch = PageWatch(browser, DESKTOP)
    try:
        watch.open(server.url(KEPT), "Budget by month")
        with watch.page.expect_download(timeout=60_000) as caught:
            watch.page.get_by_role("button", name="Download briefing").first.click()
        saved = ARTIFACTS / "kv-cost-budget-briefing.html"
        caught.value.save_as(saved)
    finally:
        watch.close()
    text = saved.read_text(encoding="utf-8")
    assert "Each way to pay, by month and in all" in text and "Scenarios side by side" in text and "Pilot" in text
    read_offline(browser, saved, A4, "a4")
