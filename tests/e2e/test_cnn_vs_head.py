"""The 'CNN vs head' page in Chromium: a shared link restores an edited scenario, a pixel edit lands in the URL, and
the scenario survives a visit to another page."""

from __future__ import annotations

import contextlib
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from ui.elements.navigation import GLOSSARY, PAGES

SPEC = next(spec for spec in PAGES if spec.script == "pages/cnn_vs_head.py")
EDITED_T = "11111-00100-00100-00100-10101"  # not a preset: the corners of the last row are inked


def pixel(watch, row: int, column: int):
    return watch.page.get_by_label(f"pixel row {row}, column {column}", exact=True)


def edit_pixels(watch) -> None:
    """Switch the pixel editor on (the tick boxes are drawn only while it is on) and wait for its boxes."""
    watch.page.locator("label").filter(has_text="Edit pixels").click()
    pixel(watch, 4, 4).wait_for(state="attached", timeout=30_000)
    watch.settle()


def inked(watch) -> list[list[bool]]:
    return [[pixel(watch, r, c).is_checked() for c in range(5)] for r in range(5)]


@pytest.mark.e2e
def test_shared_link_restores_an_edited_scenario(warm, watch):
    query = {"preset": "T", "img": EDITED_T, "custom": "true", "k1": "1 1 1", "win": "5", "view": "③ Read-out"}
    watch.open(warm.url(f"{SPEC.url_path}?{urlencode(query)}"), SPEC.landmark)
    expected = [[ch == "1" for ch in row] for row in EDITED_T.split("-")]
    edit_pixels(watch)
    assert inked(watch) == expected
    assert watch.page.get_by_label("Row 1 of my filter").input_value() == "1 1 1"
    assert watch.page.get_by_role("tab", name="③ Read-out").get_attribute("aria-selected") == "true"
    assert watch.page.get_by_text("custom:", exact=False).count() >= 1  # a third class in the read-out box
    watch.page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    assert watch.exceptions_on_screen() == 0
    watch.screenshot("cnn-shared-link")
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_pixel_edit_goes_into_the_url_and_survives_another_page(warm, watch):
    watch.open(warm.url(SPEC.url_path), SPEC.landmark)
    edit_pixels(watch)
    watch.page.locator("label").filter(has=pixel(watch, 0, 0)).click()  # the visible box is the input's label
    watch.settle()
    watch.page.wait_for_function("() => window.location.search.includes('img=')", timeout=10_000)
    assert parse_qs(urlparse(watch.page.url).query)["img"] == ["10100-00100-00100-00100-00100"]
    watch.page.get_by_text("Edited from the preset", exact=False).wait_for(timeout=10_000)  # the whole page reran
    watch.navigate(GLOSSARY)
    watch.navigate(SPEC)
    edit_pixels(watch)
    assert pixel(watch, 0, 0).is_checked() and pixel(watch, 1, 2).is_checked()
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_my_filter_rows_hide_while_off_and_come_back_with_their_text(warm, watch):
    watch.open(warm.url(f"{SPEC.url_path}?{urlencode({'custom': 'true', 'k1': '1 1 1'})}"), SPEC.landmark)
    switch = watch.page.locator("label").filter(has_text="Add my own filter")
    row = watch.page.get_by_label("Row 1 of my filter")
    switch.click()
    row.wait_for(state="detached", timeout=10_000)  # the rerun may start after settle() looked: wait for the result
    watch.settle()
    assert row.count() == 0
    switch.click()
    row.wait_for(state="visible", timeout=10_000)
    watch.settle()
    assert row.input_value() == "1 1 1"
    assert parse_qs(urlparse(watch.page.url).query)["k1"] == ["1 1 1"]
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_ten_quick_pixel_clicks_make_ten_flips(warm, watch):
    """Ten clicks on ten pixels with no pause between them: every one flips its pixel (none is lost to a rerun)."""
    watch.open(warm.url(SPEC.url_path), SPEC.landmark)
    edit_pixels(watch)
    before = inked(watch)
    clicked = [(4, c) for c in range(5)] + [(3, c) for c in range(5)]
    for row, column in clicked:
        watch.page.locator("label").filter(has=pixel(watch, row, column)).click(delay=0, no_wait_after=True)
    expected = [[before[r][c] != ((r, c) in clicked) for c in range(5)] for r in range(5)]
    wanted = "-".join("".join("1" if ink else "0" for ink in row) for row in expected)
    with contextlib.suppress(PlaywrightTimeout):  # a lost flip never reaches it: the asserts below then say what came
        watch.page.wait_for_function(f"() => window.location.search.includes('img={wanted}')", timeout=30_000)
    watch.settle()
    assert parse_qs(urlparse(watch.page.url).query).get("img") == [wanted]
    assert inked(watch) == expected
    assert watch.errors == [], watch.errors
