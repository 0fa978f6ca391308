"""Budget by month and Latency under load at and near every field's bounds, with kept scenarios in the link: a sweep
of shared links (hypothesis). Each opens with no exception and no error box other than a value named as refused, and
each run stays within 10 s on this machine (the sections' own simulating budget is 7 s)."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.plan.fields import field
from tests.app.kv_cost_page import PAGE
from ui.kv_cost.settings import NOW

SECONDS = 10.0


def near_bounds(key: str) -> st.SearchStrategy[str]:
    """A field's value at a bound, next to one, or its default, as a link writes it."""
    f = field(key)
    span = f.high - f.low
    values = [f.low, f.high, f.default, f.low + span * 1e-6, f.high - span * 1e-6]
    if f.whole:
        values = [round(v) for v in values]
    return st.sampled_from(values).map(lambda v: f"{v:g}" if isinstance(v, float) else str(v))


WORKLOAD = ("rpm", "prompt", "answer", "ttft", "speed")
BUDGET = ("growth", "min_copies", "max_copies", "scale_minutes", "pay_server_price", "pay_depreciation_years")
BUDGET += ("pay_pue", "pay_dollars_per_kwh", "pay_ops_share", "pay_reserved_3y_discount")
MODELS = st.sampled_from(["Llama-3.1-8B", "Llama-3.1-70B", "Mixtral-8x7B", "DeepSeek-V3", "GPT-2 small"])


@st.composite
def scenario_values(draw: st.DrawFn) -> list[str]:
    """Kept scenarios as a link carries them: names that repeat or say 'This page now', growth at its bounds."""
    names = st.sampled_from([NOW, "A", "A", "Pilot \u202e", "=1+1"])
    return [
        f"name={draw(names)}&model={draw(MODELS)}&growth={draw(near_bounds('growth'))}"
        for _ in range(draw(st.integers(0, 6)))
    ]


def opened(query: dict) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update(query)
    started = time.perf_counter()
    at.run()
    seconds = time.perf_counter() - started
    assert not at.exception, at.exception
    assert seconds < SECONDS, f"{seconds:.1f} s for {query}"
    return at


SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]


@settings(max_examples=12, deadline=None, suppress_health_check=SLOW)
@given(
    st.fixed_dictionaries({key: near_bounds(key) for key in WORKLOAD}),
    MODELS,
    st.sampled_from(["vLLM", "TensorRT-LLM", "SGLang"]),
)
def test_latency_under_load_at_the_bounds(workload, model, engine):
    at = opened({"kv_section": "Latency under load", "model": model, "engine": engine} | workload)
    assert not [e for e in at.error if "cannot be computed" in e.value]


@settings(max_examples=15, deadline=None, suppress_health_check=SLOW)
@given(
    st.fixed_dictionaries({key: near_bounds(key) for key in (*BUDGET, "rpm")}),
    st.sampled_from(["12", "24", "36"]),
    st.sampled_from(["Fixed, sized for the peak", "Autoscaling"]),
    scenario_values(),
    MODELS,
)
def test_budget_by_month_at_the_bounds_with_scenarios_in_the_link(budget, months, fleet, scenarios, model):
    query = {"kv_section": "Budget by month", "model": model, "months": months, "fleet": fleet} | budget
    at = opened(query | ({"scenario": scenarios} if scenarios else {}))
    assert not [e for e in at.error if "cannot be computed" in e.value]
