"""Scenarios side by side: up to four named scenarios kept in the link, each the page's own query (model, workload,
search pins and prices, engine settings, traffic, growth and way to pay) read back through the same rules as a shared
link, then planned and budgeted by the engine over 36 months so they compare like for like.

A scenario in the link is one `scenario` value: its name and its settings as a query string. Every value in it is
checked as the page checks a link; a scenario that cannot be read is named with the reason and left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from urllib.parse import parse_qs, urlencode

import streamlit as st

from core.plan import budget as bu
from core.plan import search
from core.plan import serving as sv
from core.plan.model_config import ModelConfig, presets
from ui.elements import link_reader as lr
from ui.elements.safe_text import shorten
from ui.kv_cost import plan_view
from ui.kv_cost import scenario as kv_scenario
from ui.kv_cost.budget import inputs as budget_inputs
from ui.kv_cost.budget.view import Computed, compute
from ui.kv_cost.link import match_choice, read_prices
from ui.kv_cost.own_model import CUSTOM
from ui.kv_cost.settings import (
    ALLOWED_GPUS,
    BUDGET_KEYS,
    CURVE,
    DEFAULTS,
    ENGINE_DEFAULTS,
    FLEET,
    LOAD_AS,
    MAX_SCENARIOS,
    MONTHS,
    NUMBERS,
    PAY_KEYS,
    PIN_TP,
    PRICE_KEYS,
    SAME_MODEL,
    SCENARIO,
    SCENARIO_NAME_CHARS,
    SEARCH,
    SHAPE,
    WAY,
    WORKLOAD_KEYS,
    choices,
)

COMPARE_MONTHS = max(bu.HORIZONS)  # every scenario is budgeted over the longest horizon, so they compare
CHOSEN = ("model", "kv_dtype", "w_bits", "engine", "block", "api", LOAD_AS, SHAPE, FLEET, MONTHS, WAY, PIN_TP)
NUMBER_KEYS = (*WORKLOAD_KEYS, *PRICE_KEYS, *BUDGET_KEYS, *PAY_KEYS, "util", "eff", "mfu", "overhead")
KEPT_KEYS = (*CHOSEN, *NUMBER_KEYS, ALLOWED_GPUS, "price", CURVE)  # what a scenario keeps of the page's link
FIRSTS = {"kv_dtype": "fp16", "api": SAME_MODEL, PIN_TP: SEARCH, "block": ENGINE_DEFAULTS["block"]}


@dataclass(frozen=True)
class Resolved:
    """One scenario planned and budgeted: its name, model, plan, and the budget over the comparison's horizon."""

    name: str
    config: ModelConfig
    model_id: str
    plan: search.Candidate
    made: budget_inputs.Inputs
    computed: Computed
    engine: str
    load: sv.Workload
    args: tuple
    own_api: bool  # the reader's own API prices
    own_price: bool  # the reader's own $/GPU-hour for the plan's GPU


def encode(name: str, link: Mapping[str, list[str]]) -> str:
    """A scenario's link value: its name and the page's settings that plan and budget it."""
    kept = [(key, value) for key in KEPT_KEYS for value in link.get(key, [])]
    return urlencode([("name", name[:SCENARIO_NAME_CHARS]), *kept])


def _choice(key: str, query: Mapping[str, list[str]], problems: list[str]) -> object:
    options, label = choices()[key]
    if key not in query:
        return FIRSTS.get(key, options[0])
    found = match_choice(query[key][-1], options, label)
    if found is None:
        problems.append(f"{key} is not one of its choices")
        return FIRSTS.get(key, options[0])
    return found


def _number(key: str, query: Mapping[str, list[str]], problems: list[str]) -> float | int:
    spec = NUMBERS[key]
    if key not in query:
        return spec.default
    try:
        return lr.read_number(query[key][-1], spec.low, spec.high, isinstance(spec.default, int))
    except lr.Refused as refused:
        problems.append(f"{spec.label}: {refused}")
        return spec.default


def resolve(value: str) -> Resolved | tuple[str, str]:
    """A scenario's link value planned and budgeted, or (its name, why it cannot be) in plain words."""
    query = parse_qs(value, keep_blank_values=True)
    name = parse_qs_name(value)
    problems: list[str] = []
    picked = {key: _choice(key, query, problems) for key in CHOSEN}
    numbers = {key: _number(key, query, problems) for key in NUMBER_KEYS}
    model_id = str(picked["model"])
    if model_id == CUSTOM:
        return name, "a scenario keeps a published model; your own model cannot be kept"
    allowed = [match_choice(raw, *choices()[ALLOWED_GPUS]) for raw in query.get(ALLOWED_GPUS, [])]
    if None in allowed:
        problems.append("a GPU type it allows is not a preset")
    own_prices = read_prices(query["price"][-1], DEFAULTS["gpu"], problems) if "price" in query else {}
    if problems:
        return name, "; ".join(problems)
    config = presets()[model_id]
    load = kv_scenario.make_workload(numbers, picked[LOAD_AS] == "in_flight")
    if config.exceeds_context(load.prompt_tokens + load.output_tokens):
        return name, f"its prompt and answer are longer than {config.name}'s context"
    pin = None if picked[PIN_TP] == SEARCH else int(picked[PIN_TP])
    args = plan_view.search_args(picked | numbers, tuple(allowed) or None, pin, own_prices)
    try:
        found = plan_view.searched(config, load, args)
    except ValueError as why:
        return name, str(why)
    if found.plan is None:
        return name, f"no plan: {found.problem}"
    api = kv_scenario.api_choice(config, model_id, load, str(picked["api"]), numbers)
    values = numbers | {key: picked[key] for key in (SHAPE, FLEET, MONTHS, WAY)}
    values[CURVE] = (query.get(CURVE) or [""])[-1]
    own = {key: float(numbers[key]) for key in PAY_KEYS if key in query}
    made, why = budget_inputs.inputs_from(values, own, found.plan.gpu.id, api.price, load.requests_per_minute)
    if made is None:
        return name, "; ".join(why)
    longest = replace(made, growth=bu.Growth(made.growth.monthly_percent, COMPARE_MONTHS))
    if problem := bu.growth_problem(longest.growth, load.requests_per_minute):
        return name, f"over the comparison's {COMPARE_MONTHS} months {problem}"
    computed = compute(config, model_id, load, found.plan, longest, args)
    return Resolved(
        name,
        config,
        model_id,
        found.plan,
        made,
        computed,
        choices()["engine"][1](picked["engine"]),
        load,
        args,
        picked["api"] == CUSTOM,
        found.plan.gpu.id in own_prices,
    )


def kept_values() -> list[str]:
    """The scenarios kept in the link, at most four."""
    return st.query_params.get_all(SCENARIO)[:MAX_SCENARIOS]


def way_of(r: Resolved) -> str:
    """The scenario's way to pay: the reader's, or the cheapest over its own horizon."""
    if r.made.way in bu.WAYS:
        return r.made.way
    totals = {w: float(r.computed.budget.monthly[w][: r.made.growth.months].sum()) for w in bu.WAYS}
    return min(bu.WAYS, key=lambda w: (totals[w], list(bu.WAYS).index(w)))


def row(r: Resolved) -> tuple:
    """The comparison's row: name, model, configuration, way to pay, months 1/12/36, $ per 1M output, latency, GPUs."""
    b, way = r.computed.budget, way_of(r)
    month = [round(float(b.monthly[way][m - 1]), 2) for m in (1, 12, COMPARE_MONTHS)]
    realistic = r.computed.day.realistic_per_m_output
    return (
        r.name,
        r.config.name,
        f"{r.plan.tp} × {r.plan.gpu.name}, {r.engine}",
        bu.WAYS[way],
        *month,
        round(realistic, 4) if math.isfinite(realistic) else None,
        round(r.plan.sizing.ttft_s, 2),
        int(b.gpus_by_month[0]),
    )


def parse_qs_name(value: str) -> str:
    """A kept scenario's name, as its link value holds it (shortened)."""
    return shorten((parse_qs(value).get("name") or ["(unnamed)"])[-1], SCENARIO_NAME_CHARS)
