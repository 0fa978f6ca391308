"""The cost page's "Budget by month" section: the plan's fleet on a day of real traffic (the realistic $ per 1M tokens
beside the best case), growth over 12–36 months, and every way to pay on one chart, with the cheapest per year and
in all; then the workbook that carries the same arithmetic as live formulas."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import plotly.graph_objects as go
import streamlit as st

from core.plan import budget as bu
from core.plan import daily, search
from core.plan import serving as sv
from core.plan.model_config import ModelConfig
from ui.elements.glossary import link
from ui.elements.metric_cards import Card, metric_cards
from ui.elements.numbers import dollars, plural
from ui.elements.safe_text import plain
from ui.elements.static_table import static_table
from ui.elements.widgets import chart
from ui.kv_cost.budget import figures
from ui.kv_cost.budget import inputs as budget_inputs
from ui.kv_cost.numbers import money

REALISTIC = "Realistic $ per 1M output tokens"  # beside the plan's "$ per 1M output tokens" (its best case)
REALISTIC_INPUT = "Realistic $ per 1M input tokens"


@dataclass(frozen=True)
class Computed:
    """A budget and its charts, computed once per set of inputs."""

    budget: bu.Budget
    day: daily.Day
    monthly: go.Figure
    hourly: go.Figure


@lru_cache(maxsize=16)  # 16 × ~50 kB
def compute(
    config: ModelConfig,
    model_id: str | None,
    load: sv.Workload,
    plan: search.Candidate,
    made: budget_inputs.Inputs,
    search_args: tuple,
) -> Computed:
    """The budget of the plan under these inputs (cached: a rerun that changes nothing is a look-up)."""
    args = dict(search_args)
    args["prices"] = dict(args.get("prices") or ())
    b = bu.budget(config, model_id, load, plan, made.curve, made.fleet, made.growth, made.payment, **args)
    first = b.days[0]
    per_copy = plan.sizing.requests_per_s_copy * 60.0
    return Computed(b, first, figures.monthly_figure(b), figures.day_figure(first, per_copy))


def _md(text: str) -> str:
    """An engine sentence as markdown: its dollar signs literal (two would open a formula)."""
    return text.replace("$", "\\$")


def _ratio(real: float, best: float) -> str:
    return f"{real / best:,.1f}× the best case" if real > best * 1.005 else "the best case"


def _way_card(c: Computed, way: str) -> Card:
    b = c.budget
    if way not in bu.WAYS:
        return Card(
            f"Cheapest over {b.months} months",
            bu.WAYS[b.cheapest],
            f"{dollars(b.total(b.cheapest))} in all",
            "The way to pay with the smallest total over the horizon; the table shows each way by month and year.",
        )
    extra = b.total(way) - b.total(b.cheapest)
    return Card(
        f"Your way to pay, over {b.months} months",
        bu.WAYS[way],
        f"{dollars(b.total(way))} in all"
        + (f", {dollars(extra)} more than {bu.WAYS[b.cheapest]}" if extra > 0.5 else ", the cheapest"),
        "The way you picked, its total over the horizon, and what the cheapest way would save.",
    )


def cards(c: Computed, plan: search.Candidate, way: str) -> list[Card]:
    """The first month's day and the horizon in five cards."""
    d = c.day
    return [
        Card(
            REALISTIC,
            money(d.realistic_per_m_output),
            f"{_ratio(d.realistic_per_m_output, d.best_per_m_output)} of {money(d.best_per_m_output)}",
            "The day's bill over the day's answer tokens on this traffic curve. The plan's '$ per 1M output tokens' "
            "is its best case: the peak rate every hour of the month.",
        ),
        Card(
            REALISTIC_INPUT,
            money(d.realistic_per_m_input),
            f"{_ratio(d.realistic_per_m_input, d.best_per_m_input)} of {money(d.best_per_m_input)}",
            "The day's bill for reading prompts over the day's prompt tokens on this traffic curve, beside the plan's "
            "best case.",
        ),
        Card(
            "Copy-hours a day",
            f"{d.copy_hours:,.1f}",
            f"{plural(d.peak_copies, 'copy', 'copies')} at the busiest hour × {plural(plan.tp, 'GPU')} each",
            "Model copies running, hour by hour, summed over the day (warm-ups of autoscaled copies included).",
        ),
        Card(
            "Busy",
            f"{d.utilisation:.0%}",
            f"the day averages {d.mean_rpm:,.0f} requests a minute",
            "Requests served over what the copies billed could carry.",
        ),
        _way_card(c, way),
    ]


def _shown_months(months: int) -> tuple[int, ...]:
    """The months the table shows: the first, the twelfth and the last (once each)."""
    return tuple(dict.fromkeys((1, min(12, months), months)))


def rows(b: bu.Budget) -> tuple[tuple, ...]:
    """Each way to pay: its cost in the shown months and its total over the horizon."""
    return tuple(
        (
            label,
            *(round(float(b.monthly[way][m - 1]), 2) for m in _shown_months(b.months)),
            round(b.total(way), 2),
        )
        for way, label in bu.WAYS.items()
    )


def columns(months: int) -> tuple[str, ...]:
    """The table's columns for a horizon: the way, the shown months, the total."""
    return ("way to pay", *(f"month {m}" for m in _shown_months(months)), f"total over {months} months")


def section(
    config: ModelConfig,
    model_id: str | None,
    load: sv.Workload,
    plan: search.Candidate,
    api: sv.ApiPrice,
    search_args: tuple,
) -> Computed | None:
    """The section: its questions, month 1's day, the months ahead and the ways to pay, the workbook; returns what it
    computed (None when nothing valid has been given yet)."""
    st.subheader("Budget by month: your traffic, its growth and every way to pay")
    st.markdown(
        f"The plan above bills the peak rate every hour: its best case. Real traffic follows a daily curve, grows "
        f"month by month, and can be paid for in more than one way. Here the plan's fleet ({plan.label}) carries "
        f"your day and your growth in {link('copy-hour', 'copy-hours')}, priced five ways: cloud on-demand, a one- or "
        f"three-year cloud {link('reserved-term')}, buying servers (power at the data centre's {link('pue')}), or the "
        "API of the Build vs buy section."
    )
    budget_inputs.traffic()
    budget_inputs.pay_fields(plan.gpu.id)
    made, problems = budget_inputs.read(plan.gpu.id, api, load.requests_per_minute)
    for problem in problems:
        st.error(plain(problem, limit=400) + (" The last valid budget is shown." if made else ""))
    if made is None:
        st.warning("No budget yet: give values the page can use above.")
        return None
    try:
        c = compute(config, model_id, load, plan, made, search_args)
    except ValueError as why:
        st.error(plain(f"This budget cannot be computed: {why}.", limit=400))
        return None
    b, d = c.budget, c.day
    metric_cards(cards(c, plan, made.way), label="The budget", key="kv-budget")
    st.markdown(_md(d.sentence))
    chart(
        c.hourly,
        key="kv-budget-day",
        alt="Bars of requests a minute for each hour of the day, with a step line of what the copies running that "
        "hour can carry.",
    )
    chart(
        c.monthly,
        key="kv-budget-months",
        alt=f"Lines of monthly cost for each way to pay over {b.months} months; the cheapest in all drawn thickest.",
    )
    static_table(
        columns(b.months),
        rows(b),
        label="Monthly cost of each way to pay",
        formats={name: dollars for name in columns(b.months)[1:]},
        footnote=b.sentence + " " + assumptions(b, made, plan),
        heading="Each way to pay, by month and in all",
        download=("the budget", "kv-budget"),
    )
    st.markdown(_md(years(b) + " " + break_even(b, load)))
    return c


def years(b: bu.Budget) -> str:
    """The cheapest way each year, in words."""
    return (
        "Cheapest each year: "
        + "; ".join(
            f"year {i + 1}, {bu.WAYS[w]} ({dollars(float(b.monthly[w][12 * i : 12 * i + 12].sum()))})"
            for i, w in enumerate(b.cheapest_by_year)
        )
        + "."
    )


def break_even(b: bu.Budget, load: sv.Workload) -> str:
    """The monthly tokens at which the cheapest self-hosted way costs what the API does, against month 1's."""
    now = float(b.input_tokens_by_month[0] + b.output_tokens_by_month[0])
    side = "above" if now > b.break_even_tokens_per_month else "below"
    return (
        f"Break-even with the API: {b.break_even_tokens_per_month / 1e6:,.0f}M tokens a month, where "
        f"{bu.WAYS[b.break_even_way].lower()} for the first month's fleet comes to what the API bills; the first "
        f"month uses {now / 1e6:,.0f}M, {side} it."
    )


def assumptions(b: bu.Budget, made: budget_inputs.Inputs, plan: search.Candidate) -> str:
    """What every way to pay assumes, in one paragraph."""
    own = made.payment.owning
    return (
        f"On-demand bills the copy-hours run at ${plan.price:,.2f} per GPU-hour; reserved bills the busiest hour's "
        f"GPUs all month at {made.payment.reserved_1y_discount:.0%} (1 year) or "
        f"{made.payment.reserved_3y_discount:.0%} (3 years) off, a term running past the horizon not counted; own "
        f"servers are {dollars(own.server_price)} each over {own.depreciation_years:g} years, with power at "
        f"{own.gpu_watts:,.0f} W per GPU and {own.server_watts:,.0f} W per server × PUE {own.pue:g} × "
        f"${own.dollars_per_kwh:g} per kWh, colocation at ${own.colo_per_kw_month:,.2f} per kW a month and "
        f"{own.ops_share:.0%} for operations; the API bills the day's average rate, not its peak."
    )
