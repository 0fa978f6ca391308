"""The cost page's briefing file: the workload's plan (workload, configuration and runners-up, monthly bill with its
range, build vs buy, assumptions and sources), then the memory calculator's headline numbers, sentences and charts,
and the link back when the page's address is known."""

from __future__ import annotations

from core.plan import build_vs_buy as bvb
from core.plan import kv_cache as kv
from core.plan import search
from core.plan import serving as sv
from core.plan.model_config import ModelConfig
from core.plan.prices import gpu_prices
from ui.elements import leads
from ui.elements.briefing import Briefing, Chart
from ui.elements.numbers import dollars, plural
from ui.kv_cost import plan_view
from ui.kv_cost.answer import headline_cards
from ui.kv_cost.budget import briefing as budget_briefing
from ui.kv_cost.charts import kv_chart, memory_figure, users_chart
from ui.kv_cost.numbers import Compared, gb


def plan_sections(
    config: ModelConfig, found: search.SearchResult | str, load: sv.Workload, choice: bvb.ApiChoice, peak: float
) -> list[tuple[str, list[str]]]:
    """The plan in sentences: the workload, the configuration and why, the bill and its range, build vs buy, and the
    assumptions and sources behind them (every figure from the search and the assets)."""
    workload = [
        f"{config.name}: {load.requests_per_minute:,g} requests a minute at the busiest hour, {load.prompt_tokens:,} "
        f"prompt and {load.output_tokens:,} answer tokens each, a first token within {load.ttft_s:g} s and at least "
        f"{load.min_tokens_per_s:g} tokens/s per user, {load.hours_per_month:,g} hours a month."
    ]
    if isinstance(found, str) or found.plan is None:
        problem = found if isinstance(found, str) else found.problem
        return [("Workload", workload), ("The plan", [f"No plan for this workload: {problem}."])]
    plan = found.plan
    offers = gpu_prices()[plan.gpu.id]
    said = bvb.verdict(plan.monthly_cost, load, choice, peak)
    return [
        ("Workload", workload),
        (
            "The plan",
            [
                f"**{plan.label}**, {plan_view.whose(found)}. {found.why}",
                f"Monthly cost **{dollars(plan.monthly_cost)}**; {plan_view.cost_range(plan)}.",
                f"{plan_view.OUTPUT}: {plan_view.money(plan.cost_per_m_output)}; {plan_view.INPUT}: "
                f"{plan_view.money(plan.cost_per_m_input)}.",
            ],
        ),
        ("Build vs buy", [said.sentence]),
        (
            "Assumptions and sources",
            [
                f"{plan.gpu.name} at ${plan.price:,.2f} per GPU-hour; public on-demand offers ${offers.low:,.2f}–"
                f"${offers.high:,.2f}: "
                + "; ".join(f"{o.provider} ${o.price_per_gpu_hour:,.2f} ({o.date}) {o.source}" for o in offers.offers),
                f"API: {choice.price.provider} {choice.price.model}, ${choice.price.input_per_m:,.2f} in / "
                f"${choice.price.output_per_m:,.2f} out per 1M tokens ({choice.price.date}) {choice.price.source}",
                f"Peak-to-average {peak:g} (default {bvb.default_peak_to_average():g}): "
                + bvb.peak_to_average_reason(),
                "Copies are sized so that the p95 first token and gap between tokens meet the target under the "
                "peak's share of the traffic (an analytic queueing model checked against the traffic simulator); the "
                "speed is the time model's, calibrated on published measurements, hence the range.",
            ],
        ),
    ]


def runners_up(found: search.SearchResult | str) -> list[tuple[str, list[str], list[list[str]]]]:
    """The plan and its runners-up as the page's table shows them."""
    if isinstance(found, str) or found.plan is None:
        return []
    shown = [
        [row[0], dollars(row[1]), plural(row[2], "GPU"), f"${row[3]:,.2f}", f"{row[4]:.2f}", f"{row[5]:.1f}"]
        for row in plan_view.rows(found)
    ]
    return [("The plan and its runners-up", list(plan_view.COLUMNS), shown)]


def headline(config: ModelConfig, dep: kv.Deployment, plan: kv.Plan) -> list[tuple[str, str]]:
    """The page's six headline numbers, as label and value."""
    return [(card.label, card.value) for card in headline_cards(config, dep, plan)]


def sentences(config: ModelConfig, dep: kv.Deployment, plan: kv.Plan) -> list[str]:
    """What the numbers say and what they assume, in the page's words."""
    said = [leads.kv_cost(config, dep, plan)]
    if plan.fits:
        said.append(
            f"One {dep.gpu.name} of a {dep.tp}-GPU copy holds {gb(plan.weights_gpu)} of weights and "
            f"{gb(plan.kv_used_gpu)} of KV cache for {plan.batch:,} users, keeping "
            f"{gb(plan.reserve_gpu)} in reserve."
        )
    said.append(
        f"Assumptions: {dep.kv_dtype.upper()} cache, {dep.weight_bits}-bit weights, {dep.utilisation:.0%} of GPU "
        f"memory for the engine, {dep.efficiency:.0%} of peak memory bandwidth reached, "
        f"${dep.price_per_gpu_hour:,.2f} per GPU-hour. Speed is a ceiling from memory bandwidth alone, so the cost "
        "per token is a floor: real engines are slower and cost more."
    )
    return said


def briefing(
    config: ModelConfig,
    dep: kv.Deployment,
    plan: kv.Plan,
    compared: Compared,
    *,
    url: str,
    link: str,
    planned: tuple[ModelConfig, search.SearchResult | str, sv.Workload, bvb.ApiChoice, float] | None = None,
    budget: list[str] | None = None,
) -> Briefing:
    """The file: the workload's plan (`planned`: the model, the search's result, the workload, the API and the
    peak-to-average), the memory calculator's headline, sentences and charts, and the scenario's link (`url` and
    `link` are read while the page runs: the file is built later, outside the page's run); `budget`: the page's and
    the kept scenarios' link values, for the budget by month and the scenarios side by side."""
    rows = [(label, p) for label, _, _, p in compared]
    found = planned[1] if planned else None
    chosen = getattr(found, "plan", None)
    cards = [(c.label, c.value) for c in plan_view.answer_cards(found)] if chosen else []
    plan_chart = (
        (Chart(plan_view.cost_latency_figure(found), "Monthly cost against time to first token, the plan marked."),)
        if chosen
        else ()
    )
    money_parts = budget_briefing.parts(budget) if budget and chosen else ([], [], [])
    title = f"Deployment plan: {planned[0].name}" if planned else f"KV-cache cost: {config.name} on {dep.gpu.name}"
    return Briefing(
        title=title,
        lead=(f"{chosen.label}, {dollars(chosen.monthly_cost)} a month. " if chosen else "")
        + f"Memory calculator: {config.name}, {dep.context:,} tokens per user, {dep.users:,} users, "
        f"{dep.tp} GPU(s) per copy.",
        link=link,
        app_url=url,
        headline=cards + headline(config, dep, plan),
        sentences=sentences(config, dep, plan),
        sections=[*(plan_sections(*planned) if planned else ()), *money_parts[0]],
        tables=[*(runners_up(found) if planned else ()), *money_parts[1]],
        charts=(
            *plan_chart,
            *money_parts[2],
            Chart(kv_chart(compared), "KV cache per user against context length, with GPU memory sizes."),
            Chart(
                memory_figure(rows, dep.gpu.memory_gb),
                "Stacked bars per model: one GPU's memory split into weights, KV cache in use, reserve and free.",
            ),
            Chart(users_chart(compared), "Maximum concurrent users against context length, per model."),
        ),
    )
