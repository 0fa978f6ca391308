"""The cost page's "Latency under load" section: p50 and p95 time to first token and inter-token latency of one model
copy against the request rate it carries (the hockey stick), the workload's rate per copy and its target marked, the
rate per copy at which the target breaks, and what the simulation leaves out.

Every number comes from core.plan.load_sizing (the traffic simulator under the page's engine, GPU, GPUs per copy and
memory settings); this module words and draws them. Figures are cached by small frozen keys.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.plan import engines
from core.plan import kv_cache as kv
from core.plan import load_sizing as ls
from core.plan import serving as sv
from core.plan.model_config import ModelConfig
from ui.elements.figures import layout
from ui.elements.numbers import log_axis, plural
from ui.elements.widgets import chart, explain
from ui.kv_cost.planner import BLUE, ORANGE, efficiency

RED, INK = "#c0392b", "#1b1f24"
NOT_SIMULATED = (
    "**What is simulated:** Poisson arrivals at each rate, {requests} requests per rate (the first {warmup} left out "
    "as a warm-up), every request with the workload's mean prompt and answer; {engine}'s scheduler: first come, first "
    "served admission within its batch cap ({batch} sequences) and per-step token budget ({budget} tokens, prompts "
    "cut into chunks beside the decodes), its KV memory rule and what it reserves at admission, and preemption when "
    "the cache runs full; each step's time from the calibrated time model. **What is not:** prefix caching, "
    "speculative decoding, disaggregated prefill (prompts on separate GPUs), sampling and detokenisation time, "
    "prompts and answers of varying length, and network time to the user."
)


def _rate_per_copy(load: sv.Workload, sizing: sv.Sizing | None) -> tuple[float, int]:
    """(requests/s each copy carries at the peak, copies): the plan's share, or the whole rate on one copy."""
    rate = load.requests_per_minute / 60.0
    copies = sizing.copies if sizing is not None else 1
    return rate / copies, copies


def section(config: ModelConfig, dep: kv.Deployment, load: sv.Workload) -> None:
    """The section: the workload it reads, the two curves, the sentence on where the target breaks, the limits."""
    st.subheader("Latency under load: first token and token gaps against the request rate")
    engine = engines.profile(dep.engine)
    st.markdown(
        f"One copy of {config.name} on {dep.tp} × {dep.gpu.name} under {engine.name}'s rules, simulated request by "
        "request as traffic grows. Latency stays flat while the copy keeps up, then turns up sharply once requests "
        "queue: the planner sizes the copies so that the 95th percentile (the slowest one request in twenty) stays "
        "within your target, with an analytic queueing model checked against this simulation (on the checked "
        "workloads it buys the simulated count of copies or one more); the count below is the simulation's own. "
        f"The workload ({load.requests_per_minute:,g} requests a minute at the peak, "
        f"{load.prompt_tokens:,}-token prompts, {load.output_tokens:,}-token answers, a first token within "
        f"{load.ttft_s:,g} s and at least {load.min_tokens_per_s:,g} tokens/s per user) is set in *Workload and bill*."
    )
    eff = efficiency(dep)
    try:
        with ls.time_budget():
            drawn = _draw(config, dep, load, eff)
    except ls.OutOfTime as why:
        st.warning(
            f"The simulation stopped: {why}. Every rate simulated so far is kept, so the next change on this page "
            "goes on from there; the plan above, sized by the analytic queue, does not depend on it."
        )
        return
    if drawn is None:
        return
    limits = ls.limits_of(config, dep, eff)
    st.caption(
        NOT_SIMULATED.format(
            requests=f"{ls.REQUESTS:,}",
            warmup=f"{ls.WARMUP:,}",
            engine=engine.name,
            batch=f"{limits.max_batch:,}",
            budget=f"{limits.token_budget:,}",
        )
    )


def _draw(config: ModelConfig, dep: kv.Deployment, load: sv.Workload, eff: sv.Efficiency) -> bool | None:
    """The copies the simulation needs, the two curves and the sentence (None when there is no curve to draw)."""
    sized = ls.size_under_load(config, dep, eff, load)
    if sized.sizing is None:
        st.warning(f"No number of copies of {dep.tp} × {dep.gpu.name} meets this target: {sized.reason}.")
    if sized.limit in ("memory", "shape", "cap"):  # nothing fits, or the simulation cannot run: no curve to draw
        return None
    per_copy, copies = _rate_per_copy(load, sized.sizing)
    curve = ls.sweep(config, dep, eff, load, round(per_copy, 6))
    if not curve.points:
        st.warning(f"The latency curve is not drawn: {curve.stopped}.")
        return None
    chart(
        _figure(config, dep, load, round(per_copy, 6), "ttft"),
        key="kv-latency-ttft",
        alt="Lines of p50 and p95 time to first token against requests per second per model copy, flat then rising "
        "sharply, with the target as a dashed line and the workload's rate per copy as a dotted line.",
    )
    chart(
        _figure(config, dep, load, round(per_copy, 6), "itl"),
        key="kv-latency-itl",
        alt="Lines of p50 and p95 time between tokens against requests per second per model copy, with the target "
        "as a dashed line and the workload's rate per copy as a dotted line.",
    )
    point = sized.point if sized.sizing is not None else ls.at_rate(config, dep, eff, load, per_copy)
    explain(sentence(curve, load, per_copy, copies, point), WHY)
    return True


def sentence(curve: ls.Curve, load: sv.Workload, per_copy: float, copies: int, point: ls.Point | None) -> str:
    """What the curves show, computed from them: where the target breaks, and the p95s at the workload's rate per
    copy (`point`)."""
    rate, limit = ls.break_rate(curve, load)
    words = {"first token": "the p95 first token", "tokens/s": "the p95 gap between tokens"}
    if rate is None:
        head = (
            f"Up to {curve.rates[-1]:,.2f} requests/s per copy, the highest rate simulated, both p95s stay within the "
            "target."
        )
    elif rate == 0.0:
        head = (
            f"Even at {curve.rates[0]:,.2f} requests/s per copy, the lowest rate simulated, {words[limit]} misses the "
            "target."
        )
    else:
        head = (
            f"The target breaks at about {rate:,.2f} requests/s per copy, where {words[limit]} crosses it first "
            f"(the copy's throughput with every request at once is {curve.saturation:,.2f} requests/s)."
        )
    where = (
        f" Your peak, {load.requests_per_minute:,g} requests a minute over {plural(copies, 'copy', 'copies')}, gives "
        f"each copy {per_copy:,.2f} requests/s: p95 first token {point.ttft_p95:,.2f} s (target {load.ttft_s:,g} s), "
        f"p95 gap between tokens {1000 * point.itl_p95:,.1f} ms (target {1000 * ls.itl_target(load):,.1f} ms)."
        if point is not None and math.isfinite(point.ttft_p95)
        else ""
    )
    return head + where


WHY = (
    "Averages hide the queue: a copy that looks half idle on average still makes some requests wait behind long "
    "prompts, and the slowest requests set how the service feels. Sizing by the p95 at your peak rate can take more "
    "copies than sizing by one decode step; that is the bill the traffic really needs."
)


@lru_cache(maxsize=64)  # 64 × ~5 kB
def _figure(config: ModelConfig, dep: kv.Deployment, load: sv.Workload, per_copy: float, kind: str) -> go.Figure:
    """One of the two curves ('ttft' in seconds or 'itl' in milliseconds) with the target and the workload's rate."""
    curve = ls.sweep(config, dep, efficiency(dep), load, per_copy)
    scale, unit = (1.0, "s") if kind == "ttft" else (1000.0, "ms")
    target = load.ttft_s if kind == "ttft" else 1000.0 * ls.itl_target(load)
    name = "time to first token" if kind == "ttft" else "time between tokens"
    rates = curve.rates
    data = [
        {
            "type": "scatter",
            "x": rates,
            "y": curve.series(f"{kind}_{pct}") * scale,
            "mode": "lines+markers",
            "name": f"{pct}",
            "line": {"color": colour, "width": 3 if pct == "p95" else 2},
            "hovertemplate": f"%{{x:,.2f}} requests/s per copy<br>{pct}: %{{y:,.3g}} {unit}<extra></extra>",
        }
        for pct, colour in (("p50", BLUE), ("p95", ORANGE))
    ]
    data.append(
        {
            "type": "scatter",
            "x": [0, float(rates[-1])],
            "y": [target, target],
            "mode": "lines",
            "name": f"target {target:,.3g} {unit}",
            "line": {"color": RED, "dash": "dash"},
            "hoverinfo": "skip",
        }
    )
    shown = np.concatenate([curve.series(f"{kind}_p50"), curve.series(f"{kind}_p95")]) * scale
    shown = shown[np.isfinite(shown) & (shown > 0)]
    low = 0.8 * float(min(shown.min(), target)) if shown.size else 0.8 * target
    high = 1.25 * float(max(shown.max(), target)) if shown.size else 1.25 * target
    marker = {"type": "line", "x0": per_copy, "x1": per_copy, "y0": 0, "y1": 1, "yref": "paper"}
    note = {
        "x": per_copy,
        "y": 1,
        "yref": "paper",
        "text": f"your peak: {per_copy:,.2f}/s per copy",
        "showarrow": False,
        "xanchor": "left" if per_copy < rates[-1] / 2 else "right",
        "yanchor": "bottom",
    }
    return go.Figure(
        data=data,
        layout=layout(
            f"{'First token' if kind == 'ttft' else 'Gap between tokens'}: p50 and p95",
            340,
            margin={"l": 10, "r": 10, "t": 60, "b": 10},
            legend={"orientation": "h", "y": -0.3},
            template="none",
            xaxis={"title": {"text": "requests per second per model copy"}, "rangemode": "tozero"},
            yaxis=log_axis(f"{name} ({unit}, log scale)", low, high),
            shapes=[{**marker, "line": {"color": INK, "dash": "dot"}}],
            annotations=[note],
        ),
    )
