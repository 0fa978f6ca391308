"""The 'QKV walkthrough' page in Chromium: a shared link restores section, temperature, step and an edited weight
matrix; the reader's choices go into the URL and survive a visit to another page."""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from ui.elements.navigation import GLOSSARY, PAGES

SPEC = next(spec for spec in PAGES if spec.script == "pages/qkv_walkthrough.py")
DOUBLED_FIRST_ROW = "2,0,0,0,0;0,1,0,0,0;0,0,1,0,0;0,0,0,1,0;0,0,0,0,1"  # W_O with its first entry doubled


def selected_tab(watch) -> str:
    return watch.page.get_by_role("tab", selected=True).first.inner_text()


@pytest.mark.e2e
def test_shared_link_restores_the_scenario(warm, watch):
    query = {"qkv_section": "Read-out", "qkv_temp": "0.5", "qkv_step": "· W_O", "qkv_W_O": DOUBLED_FIRST_ROW}
    watch.open(warm.url(f"{SPEC.url_path}?{urlencode(query)}"), SPEC.landmark)
    assert selected_tab(watch) == "Read-out"
    watch.page.get_by_text("At τ = 0.50 the softmax gives 'mat'", exact=False).first.wait_for(timeout=30_000)
    watch.page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    watch.screenshot("qkv-shared-link-readout")
    watch.page.get_by_role("tab", name="Step by step").click()
    watch.settle()
    watch.page.get_by_text("Your W_O changes the write-back", exact=False).first.wait_for(timeout=30_000)
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_choices_go_into_the_url_and_survive_another_page(warm, watch):
    watch.open(warm.url(SPEC.url_path), SPEC.landmark)
    watch.page.get_by_role("tab", name="KV cache").click()
    watch.settle()
    watch.page.wait_for_function("() => window.location.search.includes('qkv_section=')", timeout=10_000)
    assert parse_qs(urlparse(watch.page.url).query)["qkv_section"] == ["KV cache"]
    watch.page.get_by_text("The cache is KV, not QKV.", exact=False).first.wait_for(timeout=30_000)
    watch.page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    watch.screenshot("qkv-kv-cache")
    watch.navigate(GLOSSARY)
    watch.navigate(SPEC)
    assert selected_tab(watch) == "KV cache"
    watch.page.get_by_text("The cache is KV, not QKV.", exact=False).first.wait_for(timeout=30_000)
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_a_number_outside_a_fields_bounds_is_named_under_it_and_the_last_value_kept(warm, watch):
    # A bounded field marks such a value with an icon whose message needs a hover; the page names it in a line.
    watch.open(warm.url(f"{SPEC.url_path}?qkv_section=KV+cache&qkv_size_L=12"), SPEC.landmark)
    box = watch.page.get_by_role("spinbutton", name="layers L")
    box.wait_for(timeout=30_000)
    note = watch.page.locator("[data-testid='stNumberInput']").filter(has=box).locator(".number-note")
    sent = watch.messages_for(lambda: (box.fill("5000"), box.press("Enter")))
    assert sent == 0 and box.input_value() == "12"
    assert note.inner_text() == "⚠ layers L: “5000” cannot be used: it is outside 1 … 1,000; the field keeps 12."
    box.fill("16")
    box.press("Enter")
    watch.settle()
    assert note.count() == 0 and "qkv_size_L=16" in watch.page.url
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors
