"""The Ablation lab in Chromium: a shared link restores the head selection and the tab, a click on a head goes into
the URL and changes the metrics, and the selection survives a visit to another page."""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from core.explain import experiments as ex
from core.explain.analysis import ablation_sweep, head_label
from core.explain.weights import trained_model
from ui.elements.navigation import GLOSSARY, PAGES

SPEC = next(spec for spec in PAGES if spec.script == "pages/ablation_lab.py")
SWEEP = ablation_sweep(trained_model())
RULE = "Rule accuracy (held-out)"


def rule_shown(watch) -> str:
    """The rule-accuracy metric's value as the reader sees it."""
    metric = watch.page.get_by_test_id("stMetric").filter(has_text=RULE).first
    return metric.get_by_test_id("stMetricValue").inner_text().strip()


def rule_expected(*removed) -> str:
    return f"{SWEEP.rule_accuracy[ex.sweep_index(SWEEP, removed)]:.2f}"


def pill(watch, head):
    return watch.page.get_by_role("button", name=head_label(head), exact=True)


@pytest.mark.e2e
def test_shared_link_restores_the_head_selection(warm, watch):
    removed = [(0, 1), (1, 0)]
    query = [("heads", head_label(h)) for h in removed] + [("view", "③ All 16 subsets")]
    watch.open(warm.url(f"{SPEC.url_path}?{urlencode(query)}"), SPEC.landmark)
    assert rule_shown(watch) == rule_expected(*removed)
    assert watch.page.get_by_role("tab", name="③ All 16 subsets").get_attribute("aria-selected") == "true"
    watch.page.get_by_text("The least damaging is", exact=False).first.wait_for(timeout=10_000)  # the tab drew
    assert watch.exceptions_on_screen() == 0
    watch.screenshot("ablation-shared-link")
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_a_clicked_head_goes_into_the_url_and_survives_another_page(warm, watch):
    watch.open(warm.url(SPEC.url_path), SPEC.landmark)
    assert rule_shown(watch) == rule_expected((0, 0))  # the primer's example: layer 1, head 1 removed
    pill(watch, (1, 1)).click()
    watch.settle()
    watch.page.wait_for_function("() => window.location.search.includes('heads=')", timeout=10_000)
    heads = parse_qs(urlparse(watch.page.url).query)["heads"]
    assert sorted(heads) == sorted(head_label(h) for h in [(0, 0), (1, 1)])
    assert rule_shown(watch) == rule_expected((0, 0), (1, 1))
    shared = watch.page.url
    watch.navigate(GLOSSARY)
    watch.navigate(SPEC)
    assert rule_shown(watch) == rule_expected((0, 0), (1, 1))
    watch.open(shared, SPEC.landmark)  # the link a reader would send
    assert rule_shown(watch) == rule_expected((0, 0), (1, 1))
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_a_link_with_short_head_keys_restores_the_selection(warm, watch):
    removed = [(0, 1), (1, 1)]
    query = [("heads", f"L{layer + 1}H{head + 1}") for layer, head in removed]
    watch.open(warm.url(f"{SPEC.url_path}?{urlencode(query)}"), SPEC.landmark)
    watch.page.wait_for_function("() => window.location.search.includes('layer')", timeout=10_000)
    assert rule_shown(watch) == rule_expected(*removed)
    assert sorted(parse_qs(urlparse(watch.page.url).query)["heads"]) == sorted(head_label(h) for h in removed)
    pressed = {h: pill(watch, h).get_attribute("aria-pressed") for h in [(0, 0), (0, 1), (1, 0), (1, 1)]}
    assert pressed == {h: "true" if h in removed else "false" for h in pressed}
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors
