"""The planner's search: for every allowed GPU type and every valid GPUs-per-copy (1, 2, 4, 8), the copies the peak
rate needs so that the p95 first token and inter-token latency under load meet the target (core.plan.queueing: each
copy carries at most the largest rate whose analytic p95s meet it; the batch and the bill's split from
core.plan.serving.size_workload); the cheapest plan that meets the target wins, the rest are its runners-up, and one
computed sentence says why it won.

Money: each GPU is billed at its own price (core.plan.prices: the reader's own, else the typical public offer), so
a plan is sized once at $1 per GPU-hour and its bill scaled by the price; a new price never re-runs the time model.

Range: the time model's speed is an estimate. On every published point of the calibration (core.plan.calibration),
the speed ratio is the predicted over the measured speed (tokens/s points: predicted / measured; time points: measured
/ predicted time). The plan's cost range is its monthly bill if each copy carried its predicted requests per second
divided by the 25th and by the 75th percentile of those ratios (whole copies, the batch held): the middle half of
the calibration's errors, applied to this plan.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from core.plan import calibration, engines, queueing
from core.plan import kv_memory as kv
from core.plan import serving as sv
from core.plan.model_config import ModelConfig
from core.plan.prices import resolve_prices

TP_CHOICES = (1, 2, 4, 8)  # GPUs per copy the search tries: one server's worth at most
PERCENTILES = (25.0, 75.0)  # the calibration's middle half: the cost range


@dataclass(frozen=True)
class Settings:
    """What every configuration shares: KV and weight number types, the engine's memory budget and KV block."""

    kv_dtype: str = "fp16"
    weight_bits: int = 16
    utilisation: float = 0.9
    block: int = 16
    engine: str = "vllm"  # whose memory rule, batch cap, token budget and admission the sizing under load uses


@cache
def default_settings() -> Settings:
    """The calculator's documented defaults (assets/gpu_presets.json): vLLM's 0.9 budget and 16-token blocks."""
    d = kv.defaults()
    return Settings(utilisation=float(d["gpu_memory_utilization"]), block=int(d["block_tokens"]))


# --------------------------------------------------------------------------------------------------- range
def speed_ratios(eff: sv.Efficiency) -> np.ndarray:
    """Predicted over measured speed on every calibration point (> 1: the model is too optimistic there)."""
    errs = calibration.errors(eff)
    is_time = np.array([p.kind in ("latency", "ttft") for p in calibration.points()])
    return np.where(is_time, 1.0 / (1.0 + errs), 1.0 + errs)


@lru_cache(maxsize=16)  # 16 × ~0.5 kB
def ratio_band(eff: sv.Efficiency) -> tuple[float, float]:
    """The 25th and 75th percentile speed ratios: how much faster or slower real servers were, middle half."""
    low, high = np.percentile(speed_ratios(eff), PERCENTILES)
    return float(low), float(high)


# --------------------------------------------------------------------------------------------------- candidates
@dataclass(frozen=True)
class Candidate:
    """One configuration that meets the target: GPU, GPUs per copy, its sizing (at $1/GPU-hour), its price, and the
    copies it would need at the calibration's 25th and 75th percentile speed ratios."""

    gpu: kv.Gpu
    tp: int
    sizing: sv.Sizing
    price: float
    copies_band: tuple[int, int]
    hours: float

    @property
    def copies(self) -> int:
        """Model copies the peak rate needs."""
        return self.sizing.copies

    @property
    def gpus(self) -> int:
        """GPUs in all: copies × GPUs per copy."""
        return self.sizing.gpus

    @property
    def monthly_cost(self) -> float:
        """The fleet's monthly bill: GPUs × $/GPU-hour × hours, up all month, sized for the peak."""
        return self.sizing.monthly_cost * self.price

    @property
    def cost_per_m_input(self) -> float:
        """$ per 1M input (prompt) tokens: the bill's prefill share over the peak month's input tokens."""
        return self.sizing.cost_per_m_input * self.price

    @property
    def cost_per_m_output(self) -> float:
        """$ per 1M output (answer) tokens: the bill's decode share over the peak month's output tokens."""
        return self.sizing.cost_per_m_output * self.price

    @property
    def cost_range(self) -> tuple[float, float]:
        """Monthly bill if throughput were at the calibration's 25th and at its 75th percentile error."""
        per_copy = self.monthly_cost / self.copies  # the bill's own arithmetic, so an unchanged count is the bill
        low, high = (self.monthly_cost if n == self.copies else n * per_copy for n in self.copies_band)
        return low, high

    @property
    def label(self) -> str:
        """'4 × H100 SXM per copy, 1 copy (4 GPUs)'."""
        copies = f"{self.copies:,} cop{'y' if self.copies == 1 else 'ies'}"
        return f"{self.tp} × {self.gpu.name} per copy, {copies} ({self.gpus:,} GPU{'' if self.gpus == 1 else 's'})"

    def summary(self) -> dict[str, object]:
        """The figures a script or spreadsheet reads: GPU, GPUs per copy, copies, GPUs, dollars."""
        low, high = self.cost_range
        return {
            "gpu": self.gpu.id,
            "gpus_per_copy": self.tp,
            "copies": self.copies,
            "gpus": self.gpus,
            "monthly_cost": round(self.monthly_cost, 2),
            "cost_per_m_input": round(self.cost_per_m_input, 4),
            "cost_per_m_output": round(self.cost_per_m_output, 4),
            "cost_range": [round(low, 2), round(high, 2)],
        }


@dataclass(frozen=True)
class Rejected:
    """A configuration that cannot serve the workload, and why (the heads, the memory or the target)."""

    gpu: kv.Gpu
    tp: int
    limit: str
    reason: str


def _copies_band(sizing: sv.Sizing, load: sv.Workload, band: tuple[float, float]) -> tuple[int, int]:
    rate = load.requests_per_minute / 60.0
    low, high = (max(1, math.ceil(rate * r / sizing.requests_per_s_copy - 1e-9)) for r in band)
    return low, high


def _single_user(config: ModelConfig, gpu: kv.Gpu, tp: int, load: sv.Workload, s: Settings, eff: sv.Efficiency):
    """One user alone on a copy: tokens/s and the first token's seconds (the best any batch can do)."""
    setup = sv.Setup(config, gpu, tp, s.weight_bits, s.kv_dtype, eff)
    step = float(sv.decode_step(setup, 1, load.prompt_tokens + load.output_tokens / 2).seconds)
    return 1.0 / step, float(sv.prefill_seconds(setup, load.prompt_tokens)[()]) + step


def _size(
    config: ModelConfig, gpu: kv.Gpu, tp: int, load: sv.Workload, s: Settings, eff: sv.Efficiency
) -> tuple[sv.Sizing | None, Rejected | None]:
    problem = kv.tp_problem(config, tp)
    if problem:
        return None, Rejected(gpu, tp, "heads", problem)
    dep = kv.Deployment(
        gpu=gpu,
        tp=tp,
        kv_dtype=s.kv_dtype,
        weight_bits=s.weight_bits,
        utilisation=s.utilisation,
        block=s.block,
        price_per_gpu_hour=1.0,
    )
    # Sized by the p95s under load at the peak rate (core.plan.queueing, the analytic shortcut checked against the
    # simulator): simulating 28 configurations takes seconds, too long for a page rerun.
    dep = engines.with_engine(dep, s.engine)
    sizing, reason = queueing.size_under_load(config, dep, eff, load)
    if sizing is not None:
        return sizing, None
    if (reason or "").startswith("not one request"):
        return None, Rejected(gpu, tp, "memory", reason or "")
    if sv.size_workload(config, dep, eff, load)[0] is None:  # the decode step alone already misses the target
        speed, _ = _single_user(config, gpu, tp, load, s, eff)
        limit = "tokens/s" if speed < load.min_tokens_per_s else "first token"
    else:
        lone = queueing.at_rate(config, dep, eff, load, 0.0)
        limit = "tokens/s" if lone.itl_p95 > 1.0 / load.min_tokens_per_s else "first token"
    return None, Rejected(gpu, tp, limit, reason or "")


def _order(candidates: list[Candidate]) -> list[Candidate]:
    """Cheapest first; on a tie fewer GPUs, then the faster first token, then the faster answer."""
    if not candidates:
        return []
    keys = np.array(
        [(c.sizing.tokens_per_s_user, c.sizing.ttft_s, c.gpus, round(c.monthly_cost, 6)) for c in candidates]
    )
    order = np.lexsort((-keys[:, 0], keys[:, 1], keys[:, 2], keys[:, 3]))
    return [candidates[i] for i in order]


def _evaluate(
    config: ModelConfig,
    load: sv.Workload,
    gpu_ids: tuple[str, ...],
    tps: tuple[int, ...],
    prices: Mapping[str, float],
    s: Settings,
    eff: sv.Efficiency,
) -> tuple[list[Candidate], list[Rejected]]:
    band = ratio_band(eff)
    found, rejected = [], []
    for gpu_id in gpu_ids:
        gpu = kv.gpus()[gpu_id]
        for tp in tps:
            sizing, why_not = _size(config, gpu, tp, load, s, eff)
            if sizing is None:
                rejected.append(why_not)
                continue
            copies = _copies_band(sizing, load, band)
            found.append(Candidate(gpu, tp, sizing, prices[gpu_id], copies, load.hours_per_month))
    return _order(found), rejected


# --------------------------------------------------------------------------------------------------- the answer
@dataclass(frozen=True)
class SearchResult:
    """The cheapest plan that meets the target, the runners-up (cheapest first), one sentence on why the plan beat the
    next, what the reader pinned, every configuration that cannot serve and why, and, when nothing can, the limit
    that fails with the nearest plan that exists."""

    plan: Candidate | None
    runners_up: tuple[Candidate, ...]
    why: str
    pinned: str | None
    rejected: tuple[Rejected, ...]
    problem: str | None

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        """The plan and its runners-up, cheapest first."""
        return ((self.plan,) if self.plan else ()) + self.runners_up


def _money(value: float) -> str:
    return f"${value:,.0f}"


def _fleet_reason(a: Candidate, b: Candidate) -> str:
    """Why plan a needs fewer GPUs than plan b: more requests per GPU, or b's smallest fleet is already too big."""
    rate = a.sizing.requests_per_s_copy * a.copies * a.sizing.utilisation
    mine = f"{a.sizing.requests_per_s_copy / a.tp:.2f} requests/s per GPU (a copy of {a.tp}, batch {a.sizing.batch:,})"
    if b.copies == 1:
        return f"{mine}; the other's smallest fleet, one copy of {b.tp}, is more than the peak's {rate:.2f} needs"
    theirs = (
        f"{b.sizing.requests_per_s_copy / b.tp:.2f} (a copy of {b.tp}, batch {b.sizing.batch:,}, limited by "
        f"{sv.LIMITS[b.sizing.limit]})"
    )
    return f"{mine} vs {theirs}; the peak's {rate:.2f} requests/s needs {a.copies:,} vs {b.copies:,} copies"


def why_it_won(best: Candidate, next_: Candidate | None) -> str:
    """One sentence, computed from the two plans, on why the cheapest beat the next cheapest."""
    if next_ is None:
        return f"{best.label} is the only configuration that meets the target."
    a, b = best, next_
    saving = b.monthly_cost - a.monthly_cost
    if saving <= 0.005:
        if a.gpus < b.gpus:
            tie = f"fewer GPUs ({a.gpus:,} vs {b.gpus:,})"
        elif a.sizing.ttft_s < b.sizing.ttft_s:
            tie = f"a faster first token ({a.sizing.ttft_s:.2f} s vs {b.sizing.ttft_s:.2f} s)"
        else:
            tie = f"faster answers ({a.sizing.tokens_per_s_user:.1f} vs {b.sizing.tokens_per_s_user:.1f} tokens/s)"
        return f"{a.label} costs the same as {b.label} ({_money(a.monthly_cost)} a month) and wins on {tie}."
    head = f"{a.label} costs {_money(a.monthly_cost)} a month, {_money(saving)} less than {b.label}"
    price = f"${a.price:,.2f} vs ${b.price:,.2f} per GPU-hour"
    if a.gpus == b.gpus:
        return f"{head}: the same {a.gpus:,} GPUs at a lower price ({price})."
    if a.gpus < b.gpus:
        fewer = f"fewer GPUs ({a.gpus:,} vs {b.gpus:,}; {_fleet_reason(a, b)})"
        if a.price == b.price:
            return f"{head}: {fewer} at the same price (${a.price:,.2f} per GPU-hour)."
        if a.price < b.price:
            return f"{head}: {fewer} and a lower price ({price})."
        return f"{head}: {fewer} outweigh a higher price ({price})."
    return f"{head}: a lower price ({price}) outweighs more GPUs ({a.gpus:,} vs {b.gpus:,})."


def workload_problem(config: ModelConfig, load: sv.Workload) -> str | None:
    """Why a workload cannot be planned at all (a rate, length or target that is not positive; a request longer
    than the model's context), or None."""
    checks = [
        (load.requests_per_minute > 0 and math.isfinite(load.requests_per_minute), "requests per minute"),
        (load.prompt_tokens >= 1, "prompt tokens"),
        (load.output_tokens >= 1, "answer tokens"),
        (load.ttft_s > 0 and math.isfinite(load.ttft_s), "first-token target in seconds"),
        (load.min_tokens_per_s > 0 and math.isfinite(load.min_tokens_per_s), "tokens/s per user target"),
        (load.hours_per_month > 0 and math.isfinite(load.hours_per_month), "hours per month"),
    ]
    for ok, name in checks:
        if not ok:
            return f"the {name} must be a positive number"
    total = load.prompt_tokens + load.output_tokens
    if config.exceeds_context(total):
        return (
            f"a request of {total:,} tokens (prompt + answer) is longer than {config.name}'s maximum context of "
            f"{config.max_context:,} tokens"
        )
    return None


def _failing_limit(rejected: list[Rejected], load: sv.Workload) -> str:
    """The limit that stops the allowed configurations, in words."""
    limits = {r.limit for r in rejected}
    if limits <= {"heads", "memory"}:
        if "memory" not in limits:
            return rejected[0].reason
        r = next(r for r in reversed(rejected) if r.limit == "memory")
        return r.reason
    target = [r for r in rejected if r.limit in ("tokens/s", "first token")]
    names = sorted({r.limit for r in target})
    words = {
        "tokens/s": f"{load.min_tokens_per_s:,g} tokens/s per user",
        "first token": f"a first token within {load.ttft_s:g} s",
    }
    what = " and ".join(words[n] for n in names)
    return f"no allowed configuration reaches {what}"


def _nearest(
    config: ModelConfig,
    load: sv.Workload,
    gpu_ids: tuple[str, ...],
    tps: tuple[int, ...],
    prices: Mapping[str, float],
    s: Settings,
    eff: sv.Efficiency,
    rejected: list[Rejected],
) -> str:
    """The limit that fails and the nearest plan that exists: the same GPUs with other GPUs per copy, else the
    pinned GPUs per copy on other GPUs, else any preset; or, when no preset can serve, the best it would take."""
    limit = _failing_limit(rejected, load)
    every, _ = _evaluate(config, load, tuple(kv.gpus()), TP_CHOICES, prices, s, eff)
    same_gpu = [c for c in every if c.gpu.id in gpu_ids]
    same_tp = [c for c in every if c.tp in tps]
    if same_gpu:
        c = same_gpu[0]
        return f"{limit}: needs {c.tp} × {c.gpu.name} per copy; allow {c.tp} GPUs per copy or lower the target"
    if same_tp or every:
        c = (same_tp or every)[0]
        return (
            f"{limit}: no allowed GPU can serve it; the nearest plan is {c.label}, {_money(c.monthly_cost)} a month; "
            f"allow {c.gpu.name} or lower the target"
        )
    fast = []
    for g in kv.gpus().values():
        for tp in TP_CHOICES:
            _, why_not = _size(config, g, tp, load, s, eff)
            if why_not is not None and why_not.limit in ("tokens/s", "first token"):
                fast.append((_single_user(config, g, tp, load, s, eff), g, tp))
    if not fast:
        total = load.prompt_tokens + load.output_tokens
        return (
            f"{limit}: not one request of {total:,} tokens fits any preset with up to {TP_CHOICES[-1]} GPUs per copy; "
            "shorten the prompt or the answer, or use fewer bits for the weights or the KV cache"
        )
    closest = max(fast, key=lambda f: min(f[0][0] / load.min_tokens_per_s, load.ttft_s / f[0][1]))
    (speed, first), g, tp = closest
    return (
        f"{limit}: no GPU preset meets the target; the fastest, {tp} × {g.name} per copy, gives one user "
        f"{speed:,.1f} tokens/s and a first token after {first:,.2f} s; lower the target to that or below"
    )


@lru_cache(maxsize=128)  # 128 × ~20 kB
def _search(
    config: ModelConfig,
    load: sv.Workload,
    gpu_ids: tuple[str, ...],
    tps: tuple[int, ...],
    prices: tuple[tuple[str, float], ...],
    settings: Settings,
    eff: sv.Efficiency,
    pinned: str | None,
) -> SearchResult:
    price_of = dict(prices)
    found, rejected = _evaluate(config, load, gpu_ids, tps, price_of, settings, eff)
    if not found:
        problem = _nearest(config, load, gpu_ids, tps, price_of, settings, eff, rejected)
        return SearchResult(None, (), "", pinned, tuple(rejected), problem)
    best, rest = found[0], tuple(found[1:])
    return SearchResult(best, rest, why_it_won(best, rest[0] if rest else None), pinned, tuple(rejected), None)


def search(
    config: ModelConfig,
    load: sv.Workload,
    *,
    gpus: Iterable[str] | None = None,
    tp: int | None = None,
    prices: Mapping[str, float] | None = None,
    settings: Settings | None = None,
    eff: sv.Efficiency | None = None,
) -> SearchResult:
    """The cheapest plan that meets the workload's target over the allowed GPUs (None: every preset) and GPUs per
    copy (None: 1, 2, 4 and 8; a number pins it), each GPU at the reader's own price or its typical public one.

    ValueError names what cannot be used: an unknown GPU, GPUs per copy outside 1, 2, 4, 8, a refused price, or a
    workload with nothing to plan. Cached: a page rerun with the same inputs costs a dictionary look-up."""
    problem = workload_problem(config, load)
    if problem:
        raise ValueError(problem)
    allowed = tuple(dict.fromkeys(gpus)) if gpus is not None else tuple(kv.gpus())
    unknown = [g for g in allowed if g not in kv.gpus()]
    if unknown or not allowed:
        raise ValueError(f"unknown GPU {unknown[0]!r}; choose from {', '.join(kv.gpus())}" if unknown else "no GPU")
    if tp is not None and tp not in TP_CHOICES:
        raise ValueError(f"GPUs per copy must be one of {', '.join(map(str, TP_CHOICES))}, not {tp}")
    price_of = resolve_prices(kv.gpus(), prices)
    pins = [name for name, on in (("GPU", gpus is not None), ("GPUs per copy", tp is not None)) if on]
    return _search(
        config,
        load,
        allowed,
        (tp,) if tp is not None else TP_CHOICES,
        tuple(sorted(price_of.items())),
        settings or default_settings(),
        eff or sv.default_efficiency(),
        " and ".join(pins) or None,
    )
