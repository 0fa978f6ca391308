"""The KV-cost page's planner: a workload's GPUs and monthly bill, build vs buy against an API, and how close the time
model comes to published measurements. Also the page's readable log axes ($20, $50, 1K, 10K).

Numbers come from core.plan.serving, core.plan.queueing and core.plan.calibration; this module words and draws them.
Copies are sized by the p95 first token and gap between tokens under the peak's share of the traffic (an analytic
queueing model checked against the traffic simulator); the speed behind them is an estimate calibrated on published
measurements, not a bound.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.plan import build_vs_buy as bvb
from core.plan import calibration as cal
from core.plan import kv_cache as kv
from core.plan import queueing
from core.plan import serving as sv
from core.plan.model_config import ModelConfig
from core.plan.search import Candidate
from ui.elements.figures import layout
from ui.elements.numbers import dollars, log_axis, plural, short, three_figures
from ui.elements.widgets import OnFirstUse, chart, explain
from ui.kv_cost import calibration_load
from ui.kv_cost import scenario as kv_scenario
from ui.kv_cost.numbers import money
from ui.kv_cost.plan_view import INPUT, MONTHLY, OUTPUT

pa = OnFirstUse("pyarrow")

MONEY = st.column_config.NumberColumn(format="dollar", pinned=True)
PINNED = st.column_config.Column(pinned=True)
BLUE, ORANGE, GREY = "#1f5f99", "#d9822b", "#5d6d7e"


# --------------------------------------------------------------------------------------------------- workload
def workload_section(config: ModelConfig, dep: kv.Deployment, load: sv.Workload, plan: Candidate, whose: str) -> None:
    """The workload's other fields, then the plan's figures: GPUs, the monthly cost, its $ per 1M input and output
    tokens (the first screen's, same names and numbers), how busy it runs, and the speed each user sees."""
    st.subheader("Your workload: GPUs and the monthly bill")
    st.markdown(
        "The first screen asks for the peak rate, the tokens and the first token's target; here are the rest of the "
        "promise and how the plan found there carries it: how many users one model copy carries within that "
        "promise, how many copies the traffic needs, and what a month costs."
    )
    kv_scenario.workload_widgets()
    sizing = plan.sizing
    m = [*st.columns(3), *st.columns(3)]
    m[0].metric("GPUs for this workload", plural(plan.gpus, "GPU"), help="Model copies × GPUs per copy.")
    m[0].caption(f"{plural(plan.copies, 'model copy', 'model copies')} × {plural(plan.tp, 'GPU')}")
    m[1].metric(
        MONTHLY,
        dollars(plan.monthly_cost),
        help="GPUs × hours × price, with as many copies as keep the p95 first token and gap between tokens within "
        "the target at the peak rate (queueing included, from an analytic model checked against the traffic "
        "simulator); failover, engineers and storage come on top.",
    )
    m[1].caption(f"at ${plan.price:,.2f} per GPU-hour, {load.hours_per_month:,g} hours")
    m[2].metric("Busy", f"{sizing.utilisation:.0%}", help="Share of the copies' capacity the peak traffic uses.")
    m[2].caption(f"{plural(sizing.batch, 'user')} per model copy")
    m[3].metric(INPUT, money(plan.cost_per_m_input), help="Prefill's share of the bill.")
    m[4].metric(OUTPUT, money(plan.cost_per_m_output), help="Decode's share of the bill.")
    m[5].metric(
        "$ per request", dollars(plan.monthly_cost / sizing.monthly_requests), help="The bill ÷ the month's requests."
    )
    m[3].caption(f"prefill takes {sizing.prefill_share:.0%} of GPU time")
    m[4].caption(f"decode takes {1 - sizing.prefill_share:.0%} of GPU time")
    m[5].caption(f"{sizing.monthly_requests:,.0f} requests a month")
    chart(
        _speed_chart(config, dep, load, sizing),
        key="kv-workload",
        alt="Falling line of tokens per second each user sees against users per model copy, with the target.",
    )
    compute = (
        f"; from {plural(sizing.compute_from, 'user')} on, a step is limited by compute rather than memory reads"
        if sizing.compute_from
        else ""
    )
    carry = "carries" if sizing.copies == 1 else "carry"
    per_copy = load.requests_per_minute / 60.0 / sizing.copies
    under = (
        f", {per_copy:,.2f} a second each: at that rate the p95 first token is {sizing.load_ttft_p95_s:,.2f} s and "
        f"the p95 gap between tokens {1000 * sizing.load_itl_p95_s:,.1f} ms (prompts share the steps and requests "
        "queue; an analytic model checked against the traffic simulator, see *Latency under load*)"
        if math.isfinite(sizing.load_ttft_p95_s)
        else ""
    )
    explain(
        f"One copy of {config.name} on {dep.tp} × {dep.gpu.name} ({whose}) can hold "
        f"{plural(sizing.kv_users, 'user')} at {load.prompt_tokens + load.output_tokens:,} tokens; "
        f"the plan runs {plural(sizing.batch, 'user')} per copy, limited by "
        f"{sv.LIMITS[sizing.limit]}: each sees {sizing.tokens_per_s_user:,.1f} tokens/s (a token every "
        f"{1000 * sizing.step_s:,.1f} ms) and a first token after {sizing.ttft_s:,.2f} s, and the copy writes "
        f"{sizing.batch / sizing.step_s:,.0f} output tokens/s in all at full batch{compute}. "
        f"{plural(sizing.copies, 'copy', 'copies')} {carry} {load.requests_per_minute:,g} requests a minute{under}.",
        f"The copies are what the queue at the peak needs, not the fewest that full batches would allow; the speed "
        f"behind it is an estimate calibrated on published measurements (see *Calibration*), hence the range on the "
        f"first screen. GPU time is split {sizing.prefill_share:.0%} reading prompts (prefill, input tokens) and "
        f"{1 - sizing.prefill_share:.0%} writing answers (decode, output tokens), which is how the $ per 1M input "
        "and output tokens divide the bill.",
    )


@lru_cache(maxsize=64)  # 64 × ~0.5 kB
def plan(config: ModelConfig, dep: kv.Deployment, load: sv.Workload) -> tuple[sv.Sizing | None, str | None]:
    """The workload's sizing at the deployment's efficiencies (cached by small frozen keys): the sizing under load the
    planner's search uses (core.plan.queueing), so every section bills the plan the answer shows (the latency section
    simulates it)."""
    return queueing.size_under_load(config, dep, efficiency(dep), load)


def efficiency(dep: kv.Deployment) -> sv.Efficiency:
    """The time model's settings as the engine-settings expander holds them (the links' as stored)."""
    return replace(sv.default_efficiency(), mfu=dep.mfu, mbu=dep.efficiency, layer_overhead_s=dep.layer_overhead_s)


@lru_cache(maxsize=64)  # 64 × ~2 kB
def _speed_chart(config: ModelConfig, dep: kv.Deployment, load: sv.Workload, sizing: sv.Sizing) -> go.Figure:
    s = sv.Setup(config, dep.gpu, dep.tp, dep.weight_bits, dep.kv_dtype, efficiency(dep))
    batches = np.unique(np.geomspace(1, sizing.kv_users, min(sizing.kv_users, 200)).astype(np.int64))
    speed = 1.0 / sv.decode_step(s, batches, load.prompt_tokens + load.output_tokens / 2).seconds
    data = [
        {
            "type": "scatter",
            "x": batches,
            "y": speed,
            "mode": "lines",
            "name": "tokens/s each user sees",
            "line": {"color": BLUE, "width": 3},
            "hovertemplate": "%{x:,} users per copy<br>%{y:,.1f} tokens/s each<extra></extra>",
        },
        {
            "type": "scatter",
            "x": [batches[0], batches[-1]],
            "y": [load.min_tokens_per_s] * 2,
            "mode": "lines",
            "name": f"target {load.min_tokens_per_s:,g} tokens/s",
            "line": {"color": ORANGE, "dash": "dash"},
            "hoverinfo": "skip",
        },
    ]
    marker = {"type": "line", "x0": sizing.batch, "x1": sizing.batch, "y0": 0, "y1": 1, "yref": "paper"}
    note = {
        "x": math.log10(sizing.batch) if sizing.batch > 1 else 0,
        "y": 1,
        "yref": "paper",
        "text": f"plan: {plural(sizing.batch, 'user')} per copy",
        "showarrow": False,
        "xanchor": "left" if sizing.batch < batches[-1] / 3 else "right",
        "yanchor": "bottom",
    }
    low, high = float(min(speed.min(), load.min_tokens_per_s)), float(max(speed.max(), load.min_tokens_per_s))
    return go.Figure(
        data=data,
        layout=layout(
            "Speed each user sees vs users per model copy",
            380,
            margin={"l": 10, "r": 10, "t": 60, "b": 10},
            legend={"orientation": "h", "y": -0.25},
            template="none",
            xaxis=log_axis("users per model copy (log scale)", 1, float(batches[-1])),
            yaxis=log_axis("tokens/s per user (log scale)", low * 0.8, high * 1.25),
            shapes=[{**marker, "line": {"color": "#1b1f24", "dash": "dot"}}],
            annotations=[note],
        ),
    )


# --------------------------------------------------------------------------------------------------- build vs buy
def build_vs_buy_section(
    config: ModelConfig, sizing: sv.Sizing | None, load: sv.Workload, choice: bvb.ApiChoice, peak: float
) -> None:
    """The plan against the API serving the same model (where one is listed): the verdict on the average month, the
    break-even chart and where self-hosting starts to pay."""
    st.subheader("Build or buy: self-hosting against an API")
    kv_scenario.price_widgets(choice)
    price = choice.price
    if price.id in sv.api_prices():
        st.caption(f"{price.provider} list price as of {price.date}: {price.source}")
    if sizing is None:
        st.info("Self-hosting has no plan for this workload (see the first screen), so there is nothing to compare.")
        return
    said = bvb.verdict(sizing.monthly_cost, load, choice, peak)
    st.markdown(f"**{said.sentence}**".replace("$", "\\$"))
    price_in, price_out = price.input_per_m, price.output_per_m
    even = _even(sizing, load, price_in, price_out)
    chart(
        _break_even_chart(sizing, load, price_in, price_out),
        key="kv-break-even",
        alt="Log-log chart of monthly cost against monthly tokens: a staircase for GPUs, a straight line for the API.",
    )
    if even.threshold is None:
        sentence = (
            f"At this workload self-hosting {config.name} is never cheaper than the API: even a full copy costs "
            f"{dollars(even.copy_month)} a month for {short(even.copy_tokens)} tokens, which the API sells for "
            f"{dollars(even.copy_tokens * even.api_per_token)}."
        )
    else:
        sentence = (
            f"Self-hosting {config.name} is cheaper than the API above {short(even.threshold)} tokens a month "
            f"({even.threshold / even.copy_tokens:.0%} of one copy's {short(even.copy_tokens)}), and again each time "
            f"a new copy is {even.threshold / even.copy_tokens:.0%} busy."
        )
    tokens = said.api.input_tokens + said.api.output_tokens
    explain(
        f"{sentence} The average month is {short(tokens)} tokens ({said.api.average_rpm:,.0f} requests a minute, the "
        f"peak ÷ {peak:g}, the peak-to-average set under Workload and bill).",
        "GPUs are bought by the hour whether busy or not and sized for the busiest hour, so their cost climbs in whole "
        "copies; an API bills only the tokens used. Self-hosting pays only when traffic keeps its copies busy; the "
        "GPU line is the best case, before engineers, storage and idle nights.",
    )


@lru_cache(maxsize=32)  # 32 × ~10 kB
def _even(sizing: sv.Sizing, load: sv.Workload, price_in: float, price_out: float) -> sv.BreakEven:
    return sv.break_even(sizing, load, price_in, price_out)


@lru_cache(maxsize=32)  # 32 × ~20 kB
def _break_even_chart(sizing: sv.Sizing, load: sv.Workload, price_in: float, price_out: float) -> go.Figure:
    even = _even(sizing, load, price_in, price_out)
    low = float(min(even.self_hosted.min(), even.api.min()))
    high = float(max(even.self_hosted.max(), even.api.max()))
    data = [
        {
            "type": "scatter",
            "x": even.tokens,
            "y": even.self_hosted,
            "mode": "lines",
            "line": {"shape": "hv", "color": BLUE, "width": 3},
            "name": "self-hosted GPUs (best case)",
            "hovertemplate": "%{x:,.3s} tokens/month<br>$%{y:,.0f} a month<extra></extra>",
        },
        {
            "type": "scatter",
            "x": even.tokens,
            "y": even.api,
            "mode": "lines",
            "line": {"color": ORANGE, "width": 2},
            "name": "API list price",
            "hovertemplate": "%{x:,.3s} tokens/month<br>$%{y:,.0f} a month<extra></extra>",
        },
    ]
    return go.Figure(
        data=data,
        layout=layout(
            "Monthly cost vs monthly tokens",
            400,
            margin={"l": 10, "r": 10, "t": 60, "b": 10},
            legend={"orientation": "h", "y": -0.25},
            template="none",
            xaxis=log_axis("tokens a month (log scale)", float(even.tokens[0]), float(even.tokens[-1])),
            yaxis=log_axis("$ a month (log scale)", low, high, money=True),
        ),
    )


# --------------------------------------------------------------------------------------------------- calibration
def calibration_section(dep: kv.Deployment) -> None:
    """Predicted vs measured on every published point, the medians in one line, and the logged KV capacities."""
    eff = efficiency(dep)
    rows, throughput, latency = _calibration(eff)
    faster, measured = cal.measured_faster(cal.errors(eff))
    st.subheader("How close is the time model to real servers?")
    points = plural(len(rows), "published measurement")
    st.markdown(
        f"**Median error: throughput {throughput:.0%}, latency {latency:.0%}** over {points} (MFU {eff.mfu:.2f}, "
        f"MBU {eff.mbu:.2f}, {eff.layer_overhead_s * 1e6:,.0f} µs per layer and pass). The servers measured faster "
        f"than the model on {faster} of {plural(measured, 'throughput point')}: its speed is an estimate, not a "
        "bound, and the page's costs are sized for the queue at the peak by an analytic model, not measured."
    )
    default = sv.default_efficiency()
    st.markdown(
        f"The defaults (MFU {default.mfu:.2f}, MBU {default.mbu:.2f}, {default.layer_overhead_s * 1e6:,.0f} µs) are "
        "fitted on these points: the one setting for all of them that makes the larger median error smallest, "
        "within plausible ranges. Change them under *Engine settings* and this table follows."
    )
    st.dataframe(
        rows,
        hide_index=True,
        width="stretch",
        column_config={
            "error": st.column_config.NumberColumn(format="%+.0f%%", pinned=True),
            "source": st.column_config.LinkColumn(display_text="open"),
        },
    )
    calibration_load.draw(eff)
    st.markdown("**Engines' logged KV-cache sizes**, rebuilt with the memory budget rules from the same logs:")
    st.dataframe(
        _capacities(),
        hide_index=True,
        width="stretch",
        column_config={
            "error": st.column_config.NumberColumn(format="%+.2f%%", pinned=True),
            "source": st.column_config.LinkColumn(display_text="open"),
            "logged tokens": st.column_config.NumberColumn(format="localized"),
            "predicted tokens": st.column_config.NumberColumn(format="localized"),
        },
    )


@lru_cache(maxsize=16)  # 16 × ~10 kB
def _calibration(eff: sv.Efficiency) -> tuple[pa.Table, float, float]:
    errs = cal.errors(eff)
    throughput, latency = cal.medians(errs)
    rows = pa.Table.from_pylist(
        [
            {
                "error": round(100 * err, 1),
                "model": cal.model(p.model).name,
                "measured": three_figures(p.measured),
                "predicted": three_figures(cal.predict(p, eff)),
                "unit": cal.UNITS[p.kind],
                "source": p.source,
                "setup": (
                    f"{p.engine} {p.engine_version}, {p.tp} × {kv.gpus()[p.gpu].name}, {p.weights} weights, "
                    f"batch {p.batch}, {p.input:,} in / {p.output:,} out"
                ),
                "as published": p.published,
            }
            for p, err in zip(cal.points(), errs, strict=True)
        ]
    )
    return rows, throughput, latency


@lru_cache(maxsize=1)
def _capacities() -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "error": round(100 * c.error, 2),
                "model": c.model,
                "logged tokens": c.logged,
                "predicted tokens": c.predicted,
                "engine": c.engine,
                "source": c.source,
                "GPUs": c.gpu_name,
                "as logged": c.published,
            }
            for c in cal.capacities()
        ]
    )


def calibration_sources() -> list[str]:
    """Source lines for the Sources section: the measurements, the API prices and the measured models' configs."""
    measured: dict[str, list[cal.Point]] = {}
    for point in cal.points():
        measured.setdefault(point.source, []).append(point)
    lines = [
        f"**Serving measurements, {points[0].engine} on {', '.join(sorted({kv.gpus()[p.gpu].name for p in points}))} "
        f"({plural(len(points), 'point')})**: {source}"
        for source, points in measured.items()
    ]
    online: dict[str, list[cal.OnlinePoint]] = {}
    for run in cal.online_points():
        online.setdefault(run.source, []).append(run)
    lines += [
        f"**Serving under traffic, {runs[0].engine} ({plural(len(runs), 'run')})**: {source}"
        for source, runs in online.items()
    ]
    logged: dict[str, list[str]] = {}
    for row in cal.capacities():
        logged.setdefault(row.source, []).append(f"{row.engine} {row.model}")
    lines += [f"**Logged KV-cache sizes ({', '.join(dict.fromkeys(names))})**: {src}" for src, names in logged.items()]
    lines += [f"**{name} config**: {source}" for name, source in cal.model_sources().items()]
    lines += [f"**{p.provider} {p.model} price ({p.date})**: {p.source}" for p in sv.api_prices().values()]
    lines.append(f"**Peak-to-average default ({bvb.default_peak_to_average():g})**: {bvb.peak_to_average_reason()}")
    return lines
