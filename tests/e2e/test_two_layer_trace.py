"""The two-layer trace page in Chromium: a shared link restores the prompt, layer and step; a typed unknown word gives
a message and keeps the last valid trace; the chosen step survives a visit to another tab."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pytest
from playwright.sync_api import expect

from core.explain.transformer import forward
from core.explain.weights import trained_model
from ui.elements.navigation import PAGES

SPEC = next(spec for spec in PAGES if spec.script == "pages/two_layer_trace.py")


def _link(server, **params: str) -> str:
    return server.url(f"{SPEC.url_path}?{urlencode(params)}")


@pytest.mark.e2e
def test_a_shared_link_restores_prompt_layer_and_step(server, watch):
    watch.open(
        _link(server, trace_prompt="<BOS> the mat is", trace_layer="Layer 2", trace_step="weights"), SPEC.landmark
    )
    page = watch.page
    expect(page.locator(".st-key-trace_prompt input")).to_have_value("<BOS> the mat is", timeout=30_000)
    page.get_by_text("weights · layer 2: mask + softmax", exact=False).first.wait_for(timeout=30_000)
    headline = page.get_by_text("next token", exact=False).first.inner_text()
    assert "<BOS> the mat is" in headline and "T = 4 tokens" in headline
    expect(page.locator(".js-plotly-plot")).to_have_count(4, timeout=30_000)  # masked scores, weights; two heads
    watch.screenshot("two-layer-trace-shared-link")
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_an_unknown_word_keeps_the_last_valid_trace(server, watch):
    watch.open(_link(server, trace_step="h⁰"), SPEC.landmark)
    page = watch.page
    prompt = page.locator(".st-key-trace_prompt input")
    prompt.fill("<BOS> the zebra is")
    prompt.press("Enter")
    watch.settle()
    alert = page.locator('[data-testid="stAlertContentError"]').first
    alert.wait_for(timeout=30_000)
    assert "'zebra'" in alert.inner_text() and "<BOS> the cat sat" in alert.inner_text()
    expect(page.locator(".js-plotly-plot")).to_have_count(3, timeout=30_000)  # still the last valid E rows, PE, h⁰
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_the_chosen_step_survives_another_tab(server, watch):
    watch.open(server.url(SPEC.url_path), SPEC.landmark)
    page = watch.page
    page.get_by_test_id("stRadioOption").filter(has_text=re.compile(r"^concat ·")).click()
    watch.settle()
    page.get_by_text("concat · layer 1: join 2 heads", exact=False).first.wait_for(timeout=30_000)
    assert "trace_step=concat" in page.url
    page.get_by_role("tab", name="Four heads").click()
    watch.settle()
    expect(page.locator(".js-plotly-plot")).to_have_count(4, timeout=30_000)
    page.get_by_role("tab", name="Step by step").click()
    watch.settle()
    page.get_by_text("concat · layer 1: join 2 heads", exact=False).first.wait_for(timeout=30_000)
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_prompt_and_step_survive_switching_pages(server, watch):
    watch.open(server.url(SPEC.url_path), SPEC.landmark)
    page = watch.page
    box = page.locator(".st-key-trace_prompt input")
    box.fill("<BOS> the dog was")
    box.press("Enter")
    watch.settle()
    page.get_by_test_id("stRadioOption").filter(has_text=re.compile(r"^concat ·")).click()
    watch.settle()
    page.get_by_role("link", name="Glossary").click()
    page.get_by_text("Glossary").first.wait_for(timeout=30_000)
    watch.settle()
    page.get_by_role("link", name=SPEC.title).click()
    page.get_by_text(SPEC.landmark).first.wait_for(timeout=30_000)
    watch.settle()
    assert page.locator(".st-key-trace_prompt input").input_value() == "<BOS> the dog was"
    page.get_by_text("concat · layer 1: join 2 heads", exact=False).first.wait_for(timeout=30_000)
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_a_matrix_downloads_as_csv_with_the_engines_numbers(server, watch):
    watch.open(server.url(SPEC.url_path), SPEC.landmark)
    with watch.page.expect_download(timeout=30_000) as download:
        watch.page.get_by_role("button", name="Download E[ids]", exact=False).first.click()
    lines = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == ",c1,c2,c3,c4,c5,c6"
    assert [line.split(",")[0] for line in lines[1:]] == ["1 <BOS>", "2 the", "3 cat", "4 sat"]
    model = trained_model()
    expected = forward(model, model.encode(["<BOS>", "the", "cat", "sat"]))["hook_embed"]
    assert np.array([[float(x) for x in line.split(",")[1:]] for line in lines[1:]]) == pytest.approx(expected)
    assert watch.errors == [], watch.errors
