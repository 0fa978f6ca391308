"""The cost page's first screen: what a planner knows (model, peak requests per minute, prompt and answer tokens, the
latency target, the GPU types allowed) and the planner's search (core.plan.search) as the answer: the configuration,
the monthly cost with its range, one $ per 1M output tokens and one $ per 1M input tokens; then the runners-up in a
small table, monthly cost against latency, and why the plan beat the next.

Every figure comes from the search's result; the search is cached by its small frozen inputs, so a rerun that changes
nothing in the workload costs a dictionary look-up.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import plotly.graph_objects as go
import streamlit as st

from core.plan import concurrency, engines, search
from core.plan import kv_cache as kv
from core.plan import serving as sv
from core.plan.model_config import ModelConfig
from ui.elements.figures import layout
from ui.elements.metric_cards import Card, metric_cards
from ui.elements.numbers import dollars, plural
from ui.elements.static_table import static_table
from ui.elements.widgets import chart
from ui.kv_cost.numbers import money
from ui.kv_cost.scenario import load_as_users
from ui.kv_cost.settings import ALLOWED_GPUS, LOAD_AS, PIN_TP, PLAN_LABEL, SEARCH, gpu_name, memory
from ui.kv_cost.state import follow_workload, keep_in_link, model_widget, number_field, select_field, typed_value

OUTPUT = "$ per 1M output tokens"  # the plan's one $ answer per output token: the same name wherever it appears
INPUT = "$ per 1M input tokens"
MONTHLY = "Monthly cost"
CHOSEN, OTHER = "#d9822b", "#1f5f99"
SEARCH_LABEL = "Search settings: GPU types allowed (default: all) and GPUs per model copy (default: searched)"
SEARCH_OPEN = "kv_search_open"
CHART_LABEL = "Monthly cost against latency: every configuration, the plan marked (chart)"
CHART_OPEN = "kv_search_chart_open"
RANGE_WORDS = "if servers run at the calibration's {}th–{}th percentile speed".format(*map(round, search.PERCENTILES))
TP_WORDS = ", ".join(f"{n}" for n in search.TP_CHOICES[:-1]) + f" or {search.TP_CHOICES[-1]}"


# --------------------------------------------------------------------------------------------------- inputs
def _follow() -> None:
    follow_workload(typed_value("prompt"), typed_value("answer"))


def inputs() -> None:
    """The questions a planner can answer, in reading order: model, peak rate and latency target; prompt and answer
    tokens and the GPUs per copy; the GPU types allowed. Kept in the session and the link (like the workload's other
    fields, which stay in its section)."""
    kept = {"bind": None, "persist_state": "session"}
    row = st.columns(3)
    with row[0]:
        model_widget()
    with row[1]:
        select_field(
            "Peak load given as",
            LOAD_AS,
            "Requests arriving a minute at the busiest hour, or people waiting on an answer at the same moment "
            "(requests in flight, not the headcount); one or the other.",
            **kept,
        )
    number_field("in_flight" if load_as_users() else "rpm", row[1], **kept)
    number_field("ttft", row[2], **kept)
    row = st.columns(3)
    number_field("prompt", row[0], on_change=_follow, **kept)
    number_field("answer", row[1], on_change=_follow, **kept)
    box = st.expander(SEARCH_LABEL, key=SEARCH_OPEN, on_change="rerun")
    if box.open:  # drawn only while open; kept in the session and the link like the engine settings
        with box:
            select_field(
                "GPUs per model copy",
                PIN_TP,
                f"Leave it to the search ({TP_WORDS} GPUs working as one copy, whichever is cheapest), or pin it: "
                "the answer is then yours, not the search's.",
                **kept,
            )
            select_field(
                "GPU types allowed",
                ALLOWED_GPUS,
                "The search tries every GPU type listed here, each at its own price; remove types you cannot rent, "
                "or keep one to pin it.",
                widget=st.multiselect,
                default=list(kv.gpus()),
                **kept,
            )
    _pins_in_link()


def _pins_in_link() -> None:
    """Keep the search's pins in the link while their expander is closed (the default leaves the link)."""
    allowed = allowed_gpus()
    wanted = [gpu_name(g) for g in allowed] if allowed else []
    if st.query_params.get_all(ALLOWED_GPUS) != wanted:
        if wanted:
            st.query_params[ALLOWED_GPUS] = wanted
        else:
            del st.query_params[ALLOWED_GPUS]
    pin = pinned_tp()
    keep_in_link({PIN_TP: None if pin is None else str(pin)})


def allowed_gpus() -> tuple[str, ...] | None:
    """The GPU types the reader allows, or None for every preset (nothing removed, or everything removed)."""
    allowed = tuple(st.session_state.get(ALLOWED_GPUS) or ())
    return None if not allowed or set(allowed) == set(kv.gpus()) else allowed


def pinned_tp() -> int | None:
    """The GPUs per copy the reader pinned, or None (the search chooses)."""
    value = st.session_state.get(PIN_TP, SEARCH)
    return None if value in (SEARCH, None) else int(value)


# --------------------------------------------------------------------------------------------------- the search
def efficiency(choice: dict) -> sv.Efficiency:
    """The time model's settings as the engine settings hold them."""
    return replace(
        sv.default_efficiency(),
        mfu=float(choice["mfu"]),
        mbu=float(choice["eff"]),
        layer_overhead_s=float(choice["overhead"]) * 1e-6,
    )


def search_args(
    choice: dict, allowed: tuple[str, ...] | None, pin: int | None, own_prices: dict[str, float]
) -> tuple[tuple[str, object], ...]:
    """The search's arguments besides the model and workload, as hashable pairs: the allowed GPUs, the pinned GPUs per
    copy, the reader's own prices, the number types and memory budget, and the time model's settings."""
    settings = search.Settings(
        kv_dtype=choice["kv_dtype"],
        weight_bits=int(choice["w_bits"]),
        utilisation=float(choice["util"]),
        block=int(choice["block"]),
    )
    return (
        ("gpus", allowed),
        ("tp", pin),
        ("prices", tuple(sorted(own_prices.items()))),
        ("settings", settings),
        ("eff", efficiency(choice)),
    )


def page_search_args(choice: dict) -> tuple[tuple[str, object], ...]:
    """The search's arguments as the page's fields and pins hold them."""
    return search_args(choice, allowed_gpus(), pinned_tp(), memory().own_prices)


def searched(config: ModelConfig, load: sv.Workload, args: tuple[tuple[str, object], ...]) -> search.SearchResult:
    """The search under `search_args` (ValueError names what it cannot use)."""
    found = dict(args)
    return search.search(config, load, **(found | {"prices": dict(found["prices"])}))


def run_search(config: ModelConfig, choice: dict, load: sv.Workload) -> search.SearchResult | str:
    """The cheapest plan that meets the target, or why the workload cannot be planned (one sentence)."""
    try:
        return searched(config, load, page_search_args(choice))
    except ValueError as problem:
        return str(problem)


def plan_deployment(choice: dict, plan: search.Candidate) -> kv.Deployment:
    """The deployment the plan runs on: its GPU, GPUs per copy and price, the engine and its settings of the page."""
    dep = kv.Deployment(
        gpu=plan.gpu,
        tp=plan.tp,
        kv_dtype=choice["kv_dtype"],
        weight_bits=int(choice["w_bits"]),
        utilisation=float(choice["util"]),
        block=int(choice["block"]),
        efficiency=float(choice["eff"]),
        price_per_gpu_hour=plan.price,
        mfu=float(choice["mfu"]),
        layer_overhead_s=float(choice["overhead"]) * 1e-6,
    )
    return engines.with_engine(dep, choice["engine"])


# --------------------------------------------------------------------------------------------------- the answer
def whose(result: search.SearchResult) -> str:
    """Who chose the configuration: the search, or the reader's pin."""
    if result.pinned:
        return f"your pin ({result.pinned}): the answer is yours, not the search's"
    return f"the cheapest of {plural(len(result.candidates), 'configuration')} that meet the target"


def cost_range(plan: search.Candidate) -> str:
    """The monthly cost's range in plain words."""
    low, high = plan.cost_range
    if round(low) == round(high):  # whole copies absorb the middle half of the errors
        return f"{RANGE_WORDS}: still {dollars(low)} a month (the same number of copies either way)"
    return f"{RANGE_WORDS}: {dollars(low)}–{dollars(high)} a month"


def answer_cards(result: search.SearchResult) -> list[Card]:
    """The plan as four cards: configuration, monthly cost with its range, $ per 1M output and input tokens."""
    plan = result.plan
    return [
        Card(
            "Configuration",
            f"{plan.tp} × {plan.gpu.name}",
            f"per copy; {plural(plan.copies, 'copy', 'copies')} = {plural(plan.gpus, 'GPU')}; {whose(result)}",
            "GPUs working as one model copy, and the copies the peak rate needs, found by trying every allowed GPU "
            f"type with {TP_WORDS.replace(' or ', ' and ')} GPUs per copy, each with as many copies as keep the p95 "
            "first token and gap between tokens within the target under the peak's share of the traffic (an analytic "
            "queueing model checked against the traffic simulator).",
        ),
        Card(
            MONTHLY,
            dollars(plan.monthly_cost),
            cost_range(plan),
            f"{plural(plan.gpus, 'GPU')} × ${plan.price:,.2f} per GPU-hour × {plan.hours:,g} hours, up all month and "
            "sized for the peak. The range: the same plan if real servers were as much slower or faster than the "
            "time model as the middle half of the published measurements (Calibration section).",
        ),
        Card(
            OUTPUT,
            money(plan.cost_per_m_output),
            "decode's share of the monthly cost over the peak month's answer tokens",
            "The share of GPU time spent writing answers, priced and divided by the output tokens of a month at the "
            "peak rate.",
        ),
        Card(
            INPUT,
            money(plan.cost_per_m_input),
            "prefill's share of the monthly cost over the peak month's prompt tokens",
            "The share of GPU time spent reading prompts, priced and divided by the input tokens of a month at the "
            "peak rate.",
        ),
    ]


def needs_a_plan(section: str) -> None:
    """What a section built on the plan says when there is none (the answer above says why, once)."""
    st.info(f"{section} starts from the plan, and there is none for this workload: the answer above says why.")


def answer(config: ModelConfig, result: search.SearchResult | str, load: sv.Workload) -> None:
    """The plan as the page's answer: a heading with the workload, the cards, or why there is no plan."""
    st.markdown(
        f"## {PLAN_LABEL}\n\n### {config.name}, {load.requests_per_minute:,.4g} requests a minute at peak, "
        f"{load.prompt_tokens:,} + {load.output_tokens:,} tokens, first token within {load.ttft_s:g} s"
    )
    if load_as_users():
        users = typed_value("in_flight")
        st.caption(
            f"{plural(users, 'user')} waiting at once, each request taking up to "
            f"{concurrency.seconds_per_request(load):,.3g} s at your target ({load.ttft_s:g} s to the first token, "
            f"then {load.output_tokens:,} tokens at {load.min_tokens_per_s:g} tokens/s), send "
            f"{load.requests_per_minute:,.0f} requests a minute (Little's law: requests in flight ÷ seconds per "
            "request); the plan is sized for that rate."
        )
    if isinstance(result, str) or result.plan is None:
        why = result if isinstance(result, str) else result.problem
        st.warning(f"No plan for this workload: {why}.")
        return
    metric_cards(answer_cards(result), label="The plan", key="kv-plan")


# --------------------------------------------------------------------------------------------------- the search shown
COLUMNS = (  # the monthly cost beside the configuration: what a phone shows before the table scrolls
    "configuration",
    "monthly cost",
    "GPUs",
    "$ per GPU-hour",
    "first token (s)",
    "tokens/s per user",
)


def rows(result: search.SearchResult, limit: int = 6) -> tuple[tuple, ...]:
    """The plan and its cheapest runners-up as table rows (the plan marked)."""
    return tuple(
        (
            f"{c.tp} × {c.gpu.name}, {plural(c.copies, 'copy', 'copies')}" + (" (the plan)" if i == 0 else ""),
            round(c.monthly_cost, 2),
            c.gpus,
            round(c.price, 2),
            round(c.sizing.ttft_s, 2),
            round(c.sizing.tokens_per_s_user, 1),
        )
        for i, c in enumerate(result.candidates[:limit])
    )


def details(result: search.SearchResult | str) -> None:
    """Why the plan beat the next, the runners-up table and the cost-against-latency chart."""
    if isinstance(result, str) or result.plan is None:
        return
    said = result.why
    if result.pinned:
        said += f" You pinned the {result.pinned}: the answer is yours, not the search's."
    shown = rows(result)
    static_table(
        COLUMNS,
        shown,
        label="The plan and its runners-up",
        formats={"monthly cost": dollars, "$ per GPU-hour": money},
        footnote=f"{said} Above: {len(shown)} of {plural(len(result.candidates), 'configuration')} that meet the "
        "target, cheapest first; each GPU at its own price (yours, or the typical public on-demand offer).",
        heading="The plan and its runners-up",
        download=("the search", "kv-search"),
    )
    box = st.expander(CHART_LABEL, key=CHART_OPEN, on_change="rerun")
    if box.open:  # drawn only while open: the first screen's rerun stays light
        with box:
            chart(
                cost_latency_figure(result),
                key="kv-search",
                alt="Monthly cost against time to first token, one point per configuration that meets the target, "
                "the plan marked.",
            )


@lru_cache(maxsize=32)  # 32 × ~5 kB
def cost_latency_figure(result: search.SearchResult) -> go.Figure:
    """Monthly cost against the first token's seconds, one point per configuration, the plan marked."""
    others = result.runners_up
    points = [
        {
            "type": "scatter",
            "mode": "markers",
            "name": "other configurations",
            "x": [c.sizing.ttft_s for c in others],
            "y": [c.monthly_cost for c in others],
            "text": [c.label for c in others],
            "marker": {"color": OTHER, "size": 9, "opacity": 0.75},
            "hovertemplate": "%{text}<br>first token %{x:.2f} s<br>$%{y:,.0f} a month<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "markers+text",
            "name": "the plan",
            "x": [result.plan.sizing.ttft_s],
            "y": [result.plan.monthly_cost],
            "text": ["the plan"],
            "textposition": "middle right",
            "marker": {"color": CHOSEN, "size": 16, "symbol": "star"},
            "hovertemplate": f"{result.plan.label}<br>first token %{{x:.2f}} s<br>$%{{y:,.0f}} a month<extra></extra>",
        },
    ]
    return go.Figure(
        data=points,
        layout=layout(
            "Monthly cost vs first-token time",
            340,
            margin={"l": 10, "r": 10, "t": 60, "b": 10},
            template="none",
            legend={"orientation": "h", "y": -0.3},
            xaxis={"title": {"text": "first token (seconds)"}, "rangemode": "tozero", "automargin": True},
            yaxis={"title": {"text": "$ a month"}, "rangemode": "tozero", "tickprefix": "$", "automargin": True},
        ),
    )
