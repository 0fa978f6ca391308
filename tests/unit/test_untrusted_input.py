"""Untrusted input reaching the engine and the shared readers: hostile config files, the cost arithmetic's edge cases,
the bounded parameter-count cache, the safe-text helper and the link reader."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.plan import kv_cache as kv
from core.plan.model_config import param_count, parse_config_text, presets
from ui.elements import link_reader as lr
from ui.elements.safe_text import SHORT, plain

ROOT = Path(__file__).resolve().parents[2]
GOOD = json.loads((ROOT / "tests" / "data" / "good_configs" / "qwen2_7b_text.json").read_text())
MARKDOWN = ("[click](https://example.invalid/x)", "![p](https://example.invalid/p.png)", "`x`[c](www.example.invalid)")
LIVE = re.compile(r"\]\(|!\[|`|https?:|(^|[\s*_~(])www\.", re.IGNORECASE)  # GitHub autolinks www. at a word start


def unescaped(text: str) -> str:
    return re.sub(r"\\.", "", text)


# ----------------------------------------------------------------------------------- config.json parser
@pytest.mark.parametrize("digits", [20, 400, 4300, 5000, 50_000])
def test_huge_integers_are_refused_with_a_message(digits):
    for field in ("num_hidden_layers", "hidden_size", "vocab_size", "max_position_embeddings"):
        text = json.dumps(GOOD | {field: 0}).replace(f'"{field}": 0', f'"{field}": {"9" * digits}')
        report = parse_config_text(text)
        assert report.config is None and report.errors
        assert all(len(message) < 300 for message in report.errors)  # the number is not echoed whole


@pytest.mark.parametrize("payload", MARKDOWN)
def test_markdown_in_every_string_field_never_raises(payload):
    for field in [*GOOD, "_name_or_path", "architectures", "torch_dtype", "hidden_act"]:
        report = parse_config_text(json.dumps(GOOD | {field: payload}))
        if report.config is not None:
            assert not LIVE.search(report.config.name), report.config.name
        else:
            assert any(field in message for message in report.errors), (field, report.errors)


@pytest.mark.parametrize("payload", MARKDOWN)
def test_a_config_name_is_kept_plain_and_short(payload):
    report = parse_config_text(json.dumps(GOOD | {"_name_or_path": payload * 20}))
    assert report.config is not None
    assert not LIVE.search(report.config.name) and len(report.config.name) <= 60
    assert parse_config_text(json.dumps(GOOD | {"_name_or_path": "Qwen/Qwen2.5-7B"})).config.name == "Qwen/Qwen2.5-7B"


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(), lambda inner: st.lists(inner)))
def test_any_value_in_any_field_gives_a_report(value):
    for field in ("num_hidden_layers", "_name_or_path", "model_type", "num_key_value_heads"):
        report = parse_config_text(json.dumps(GOOD | {field: value}))
        assert (report.config is None) == bool(report.errors)


# ----------------------------------------------------------------------------------- cost arithmetic edges
BASE = kv.Deployment(gpu=kv.gpus()[kv.defaults()["gpu"]])


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"prefix": 32768, "context": 32768}, "fills the whole context"),
        ({"prefix": 10**7, "context": 32768}, "fills the whole context"),
        ({"users": 0}, "at least 1"),
    ],
)
def test_edge_scenarios_are_named_not_divided_by_zero(change, words):
    dep = replace(BASE, **change)
    assert words in kv.scenario_problem(dep)
    with pytest.raises(ValueError, match=words):
        kv.plan(presets()["primer-7b"], dep)


def test_a_prefix_shorter_than_the_context_still_plans():
    dep = replace(BASE, prefix=32768 - 16, context=32768)
    assert kv.scenario_problem(dep) is None and kv.plan(presets()["primer-7b"], dep).max_users > 0


def test_halving_the_context_keeps_a_token_of_each_users_own():
    dep = replace(BASE, prefix=20_000, context=32768)
    half = kv.at_context(dep, 0.5)
    assert half.prefix < half.context and kv.plan(presets()["primer-7b"], half).max_users > 0


def test_users_vs_context_is_finite_where_the_prefix_fills_the_context():
    dep = replace(BASE, prefix=8192, context=32768)
    users = kv.users_vs_context(presets()["primer-7b"], dep, np.array([1024, 4096, 8192, 16384, 32768]))
    assert np.isfinite(users).all() and users[-1] > 0


def test_the_parameter_count_cache_is_bounded():
    base = presets()["primer-7b"]
    for vocab in range(1000, 1000 + 3 * param_count.cache_info().maxsize):
        param_count(replace(base, vocab_size=vocab))
    assert param_count.cache_info().currsize <= param_count.cache_info().maxsize <= 4096


# ----------------------------------------------------------------------------------- safe text and the link reader
@settings(max_examples=200, deadline=None)
@given(st.text() | st.sampled_from(["see https://example.invalid/x", "www.example.invalid", "a@example.invalid"]))
def test_plain_text_carries_no_live_markdown(text):
    out = plain(text)
    seen = re.sub(r"\\(.)", r"\1", out)  # as rendered: escapes gone, so what an autolink would see
    assert not LIVE.search(unescaped(out)) and "\n" not in out
    assert not re.search(r"://|(^|[\s*_~(])www\.|@\w", seen, re.IGNORECASE), seen
    assert len(re.sub(r"\\(.)", r"\1", out)) <= SHORT + 30


@pytest.mark.parametrize("raw", ["²", "٣", "inf", "-inf", "nan", "1e308", "12345678901234567890", "", "x" * 10_000])
def test_link_numbers_refuse_hostile_values(raw):
    with pytest.raises(lr.Refused):
        lr.read_number(raw, 0, 10**7, whole=True)


def test_the_reader_names_refusals_and_too_many_items():
    params = {"n": lr.number(1, 9, whole=True), "pick": lr.choice(["a", "b", "c"], many=2)}
    cleaned, notes = lr.clean(params, {"n": ["10"], "pick": ["a", "zzz", "b", "c"], "other": ["kept"]})
    assert cleaned == {"pick": ["a", "b"], "other": ["kept"]}
    assert len(notes) == 3 and "zzz" in notes[1] and "at most 2" in notes[2]
