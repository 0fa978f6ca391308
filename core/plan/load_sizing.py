"""Sizing under load: the copies a workload needs so that the simulated p95 time to first token and p95 inter-token
latency meet its target at the peak rate, each copy taking its share of the rate; and the latency-against-rate curve
of one copy (the hockey stick) with the rate per copy at which the target breaks.

The static sizing (core.plan.serving.size_workload) picks the batch from one decode step and counts copies as if
every copy ran full batches with no queue; it starts the search here. Each candidate count is checked by the traffic
simulator (core.plan.simulator): Poisson arrivals at rate / copies, a few hundred requests, the first ones left out as
a warm-up, the same seed every time (the arrivals at another rate are the same draws rescaled), so the count is the
smallest that meets the target and the same inputs always give the same answer.

The target: p95 time to first token ≤ the first-token target, and p95 inter-token latency ≤ 1 / (tokens/s per user).
A target that one request alone on a copy already misses cannot be met by any number of copies (more copies shorten
the queue, not a lone request's prefill or step), and the reason says which limit fails.

What is simulated and what is not: see core.plan.simulator (no prefix caching, speculative decoding or disaggregated
prefill).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from core.plan import engines
from core.plan import kv_memory as kv
from core.plan import serving as sv
from core.plan import simulator as sim
from core.plan.model_config import ModelConfig

REQUESTS = 240  # requests per simulated rate: enough for a p95 over 200 kept, small enough for a page
WARMUP = 40  # the first requests, arriving to an empty engine, are left out
SEED = 0
SWEEP_POINTS = 10  # rates in the page's curve
MAX_DOUBLINGS = 16  # copies tried up to 2¹⁶ × the static count before the search gives up
WALL_S = 5.0  # computing time one simulated rate may take
MOVES = 60_000  # the simulator's moves one simulated rate may take: about a second at its pace on a 2-core machine
SECTION_S = 7.0  # computing time a page section may spend simulating (`time_budget`): its run stays within 10 s

_deadline: ContextVar[float | None] = ContextVar("simulation_deadline", default=None)


class OutOfTime(RuntimeError):
    """The simulating time a page section was given (`time_budget`) ran out; every rate finished so far stays
    cached, so the next run goes on from there."""


@contextmanager
def time_budget(seconds: float = SECTION_S) -> Iterator[None]:
    """Within this block, simulations stop (OutOfTime) once `seconds` of computing have passed."""
    token = _deadline.set(time.perf_counter() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def _simulate(config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency, traffic: sim.Traffic) -> sim.Result:
    """One simulation within the caps: MOVES, WALL_S, and the section's deadline when one is set (OutOfTime, never
    a result cut by the clock, so no cached figure depends on how busy the machine was)."""
    deadline = _deadline.get()
    wall = WALL_S if deadline is None else min(WALL_S, deadline - time.perf_counter())
    if wall <= 0:
        raise OutOfTime(f"the section's {SECTION_S:g} s of simulating ran out")
    result = sim.simulate(
        setup_of(config, dep, eff), traffic, limits_of(config, dep, eff), max_events=MOVES, max_wall_s=wall
    )
    if deadline is not None and result.stopped_by == "time":
        raise OutOfTime(f"the section's {SECTION_S:g} s of simulating ran out")
    return result


def shape_problem(config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency, load: sv.Workload) -> str | None:
    """Why this request shape cannot be simulated here, before any simulation starts: one request longer than the KV
    cache holds, or prompts that take more of the engine's steps to read than a simulated rate may (each step reads
    at most the engine's per-step token budget of prompt tokens); None when it can."""
    limits = limits_of(config, dep, eff)
    if math.ceil((load.prompt_tokens + load.output_tokens - 1) / limits.block) > limits.kv_blocks:
        return (
            f"not one request fits the KV cache {dep.engine} leaves on {dep.tp} × {dep.gpu.name} "
            f"({limits.kv_tokens:,} tokens)"
        )
    reads = math.ceil(REQUESTS * load.prompt_tokens / limits.token_budget)
    if reads > MOVES:
        return (
            f"{REQUESTS:,} prompts of {load.prompt_tokens:,} tokens take at least {reads:,} engine steps to read at "
            f"{limits.token_budget:,} tokens a step, beyond the {MOVES:,} one simulated rate may take; the plan's "
            "analytic sizing still holds"
        )
    return None


def setup_of(config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency) -> sv.Setup:
    """One model copy of the deployment for the time model."""
    return sv.Setup(config, dep.gpu, dep.tp, dep.weight_bits, dep.kv_dtype, eff)


def limits_of(config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency) -> sim.Limits:
    """The deployment's engine limits: its batch cap, token budget, admission reserve and preemption, and the KV cache
    the deployment's own memory rule, fraction and block size give (`engines.for_deployment`)."""
    return sim.engine_limits(setup_of(config, dep, eff), engines.for_deployment(dep))


def itl_target(load: sv.Workload) -> float:
    """The inter-token latency the tokens/s-per-user target allows, in seconds."""
    return 1.0 / load.min_tokens_per_s


@dataclass(frozen=True)
class Point:
    """One simulated rate per copy: p50 and p95 time to first token and inter-token latency, in seconds, and whether
    every request finished within the simulation's caps."""

    rate: float
    ttft_p50: float
    ttft_p95: float
    itl_p50: float
    itl_p95: float
    complete: bool
    stopped: str = ""  # how far a run stopped by a cap got ("" when it ran to its end or its queue emptied)

    def meets(self, load: sv.Workload) -> bool:
        """The p95s meet the workload's target (an unfinished run does not)."""
        return self.complete and self.ttft_p95 <= load.ttft_s and self.itl_p95 <= itl_target(load)

    def excess(self, load: sv.Workload) -> float:
        """How far the worse p95 is above its target, as a share (≤ 0: met)."""
        if not self.complete:
            return math.inf
        return max(self.ttft_p95 / load.ttft_s, self.itl_p95 / itl_target(load)) - 1.0


def _point(result: sim.Result, rate: float, skip: int) -> Point:
    stats = result.summary(skip=skip)
    return Point(
        rate,
        stats["ttft_p50_s"],
        stats["ttft_p95_s"],
        stats["itl_p50_s"],
        stats["itl_p95_s"],
        result.complete,
        result.note if result.stopped_by in ("steps", "events", "time") else "",
    )


@lru_cache(maxsize=4096)  # 4,096 × ~0.5 kB
def at_rate(config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency, load: sv.Workload, rate: float) -> Point:
    """One copy under Poisson arrivals at `rate` requests per second (cached by small frozen keys)."""
    traffic = sim.Traffic("poisson", REQUESTS, load.prompt_tokens, load.output_tokens, rate=rate, seed=SEED)
    return _point(_simulate(config, dep, eff, traffic), rate, WARMUP)


@lru_cache(maxsize=1024)  # 1,024 × ~0.5 kB
def alone(config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency, load: sv.Workload) -> Point:
    """One request at a time on a copy: the best latency any number of copies can give."""
    traffic = sim.Traffic("closed", 2, load.prompt_tokens, load.output_tokens, concurrency=1)
    return _point(_simulate(config, dep, eff, traffic), 0.0, 0)


def no_copies_reason(config: ModelConfig, dep: kv.Deployment, load: sv.Workload, lone: Point) -> tuple[str, str]:
    """(the limit, why no number of copies meets the target) when a lone request already misses it."""
    where = f"{dep.tp} × {dep.gpu.name}"
    if lone.ttft_p95 > load.ttft_s:
        return "first token", (
            f"no number of copies can meet a first token within {load.ttft_s:,g} s on {where}: one request alone "
            f"waits {lone.ttft_p95:,.2f} s for its first token (the prefill of {load.prompt_tokens:,} tokens), and "
            "more copies shorten the queue, not a lone request's prefill"
        )
    return "tokens/s", (
        f"no number of copies can meet {load.min_tokens_per_s:,g} tokens/s per user on {where}: one request alone "
        f"gets a token every {1000 * lone.itl_p95:,.1f} ms at p95 ({1 / lone.itl_p95:,.1f} tokens/s), and more "
        "copies shorten the queue, not a lone request's decode step"
    )


@dataclass(frozen=True)
class LoadSizing:
    """The copies the simulated p95s need, with the static sizing's batch and the bill for that count (`sizing`), the
    p95s at rate / copies (`point`) and, when no count can meet the target, the failing limit and why."""

    sizing: sv.Sizing | None
    point: Point | None
    limit: str | None
    reason: str | None


def with_copies(
    sizing: sv.Sizing, copies: int, dep: kv.Deployment, load: sv.Workload, point: Point | None = None
) -> sv.Sizing:
    """The sizing with another number of copies: GPUs, the busy share and the bill follow; each copy carries
    rate / copies requests per second (`requests_per_s_copy`), the load it meets the target at, with the simulated
    p95s there (`point`)."""
    rate = load.requests_per_minute / 60.0
    monthly = copies * dep.tp * dep.price_per_gpu_hour * load.hours_per_month
    requests = sizing.monthly_requests
    p, o = load.prompt_tokens, load.output_tokens
    return replace(
        sizing,
        copies=copies,
        gpus=copies * dep.tp,
        utilisation=rate / (copies * sizing.requests_per_s_copy),
        requests_per_s_copy=rate / copies,
        monthly_cost=monthly,
        cost_per_m_input=1e6 * monthly * sizing.prefill_share / (requests * p) if requests else math.inf,
        cost_per_m_output=1e6 * monthly * (1 - sizing.prefill_share) / (requests * o) if requests else math.inf,
        cost_per_request=monthly / requests if requests else math.inf,
        load_ttft_p95_s=point.ttft_p95 if point else math.nan,
        load_itl_p95_s=point.itl_p95 if point else math.nan,
        load_model="simulated" if point else "",
    )


@lru_cache(maxsize=512)  # 512 × ~1 kB
def size_under_load(config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency, load: sv.Workload) -> LoadSizing:
    """The smallest number of copies whose simulated p95 first token and inter-token latency meet the target at the
    peak rate shared among them (None with the limit and reason when no plan exists)."""
    static, reason = sv.size_workload(config, dep, eff, load)
    if static is None:
        return LoadSizing(None, None, "memory" if "fits the memory" in (reason or "") else "static", reason)
    if problem := shape_problem(config, dep, eff, load):
        return LoadSizing(None, None, "memory" if problem.startswith("not one request") else "shape", problem)
    lone = alone(config, dep, eff, load)
    if not lone.meets(load):
        return LoadSizing(None, lone, *no_copies_reason(config, dep, load, lone))
    rate = load.requests_per_minute / 60.0

    def ok(n: int) -> Point | None:
        point = at_rate(config, dep, eff, load, rate / n)
        if point.stopped:
            raise _Capped(point)
        return point if point.meets(load) else None

    try:
        return _smallest_count(static, dep, load, ok)
    except _Capped as capped:
        point = capped.point
        return LoadSizing(None, point, "cap", f"the simulation at {point.rate:.4g} requests/s per copy {point.stopped}")


class _Capped(Exception):
    def __init__(self, point: Point) -> None:
        super().__init__(point.stopped)
        self.point = point


def _smallest_count(static: sv.Sizing, dep: kv.Deployment, load: sv.Workload, ok) -> LoadSizing:
    """Doubling from the static count until a count meets the target, then halving the gap down to the smallest."""
    rate = load.requests_per_minute / 60.0
    n = static.copies
    low, high, found = 0, None, None  # low: a count known to fail (0: none yet); high: the smallest known to meet
    if (found := ok(n)) is not None:
        high = n
    else:
        low = n
        for _ in range(MAX_DOUBLINGS):
            n *= 2
            if (found := ok(n)) is not None:
                high = n
                break
            low = n
        else:
            return LoadSizing(
                None, None, "queue", f"even {n:,} copies, {rate / n:.4g} requests/s each, miss the target at p95"
            )
    while high - low > 1:  # the smallest count that meets the target, between a failing and a meeting one
        mid = (low + high) // 2
        if mid >= 1 and (point := ok(mid)) is not None:
            high, found = mid, point
        else:
            low = mid
    return LoadSizing(with_copies(static, high, dep, load, found), found, None, None)


# --------------------------------------------------------------------------------------------------- the curve
@dataclass(frozen=True)
class Curve:
    """p50 and p95 latencies at a sweep of rates per copy, the saturation throughput the sweep is scaled to."""

    points: tuple[Point, ...]
    saturation: float
    stopped: str = ""  # why there are no points: the saturation run stopped at a cap, and how far it got

    @property
    def rates(self) -> np.ndarray:
        """Requests per second per copy, ascending."""
        return np.array([p.rate for p in self.points])

    def series(self, name: str) -> np.ndarray:
        """One latency series in seconds: 'ttft_p50', 'ttft_p95', 'itl_p50' or 'itl_p95'."""
        return np.array([getattr(p, name) for p in self.points])


@lru_cache(maxsize=64)  # 64 × ~1 kB
def sweep(
    config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency, load: sv.Workload, include: float = 0.0
) -> Curve:
    """The latency curve of one copy at evenly spaced rates from a tenth of the top to the top: twice its saturation
    throughput (every request at once, offline), and wide enough to show `include` (the workload's rate per copy)."""
    traffic = sim.Traffic("offline", REQUESTS, load.prompt_tokens, load.output_tokens)
    offline = _simulate(config, dep, eff, traffic)
    if not offline.complete:  # no saturation to scale the rates to: no curve, and how far the run got
        return Curve((), math.nan, f"the run with every request at once {offline.note}")
    saturation = offline.summary()["requests_per_s"]
    top = max(2.0 * saturation, 1.1 * include)
    bottom = min(top / SWEEP_POINTS, 0.8 * include) if include > 0 else top / SWEEP_POINTS
    rates = np.linspace(bottom, top, SWEEP_POINTS)
    return Curve(tuple(at_rate(config, dep, eff, load, float(_round(r))) for r in rates), saturation)


def _round(rate: float) -> float:
    """A rate to three significant figures, so nearby sweeps share cached points and the page prints what ran."""
    return float(f"{rate:.3g}")


def break_rate(curve: Curve, load: sv.Workload) -> tuple[float | None, str]:
    """The rate per copy at which the target breaks, interpolated linearly on the worse p95's excess between the last
    rate that meets the target and the first that does not, and which limit breaks first ('first token' or
    'tokens/s'); (None, '') when every rate of the sweep meets it, (0.0, limit) when even the lowest misses it."""
    points = curve.points
    for i, point in enumerate(points):
        if point.meets(load):
            continue
        limit = "first token" if point.ttft_p95 / load.ttft_s >= point.itl_p95 / itl_target(load) else "tokens/s"
        if i == 0:
            return 0.0, limit
        before = points[i - 1]
        a, b = before.excess(load), point.excess(load)
        share = 0.5 if not math.isfinite(b) else -a / (b - a)
        return before.rate + share * (point.rate - before.rate), limit
    return None, ""
