"""A day's traffic and the fleet that carries it: the hourly request rate (a daily shape × the peak), the model copies
each hour, the copy-hours billed, how busy they are, and the realistic $ per 1M tokens beside the planner's best case.

The planner bills the peak rate every hour, each copy carrying what its latency target allows (its best case). Real
traffic follows a daily shape (assets/traffic_shapes.json: office hours, 24/7 global, overnight batch, or the reader's
own 24 values), so a fleet sized for the peak sits partly idle and a realistic 1M tokens costs more. Two ways to carry
a day:
- a fixed fleet: the copies the peak needs, up all 24 hours;
- autoscaling: each hour ceil(rate / capacity per copy) copies, clamped to [min, max]; every copy added to the hour
  before pays `scale_up_minutes` of warm-up (billed, serving nothing) before its hour starts. The day repeats, so
  hour 0 follows hour 23.

Every figure is arithmetic a spreadsheet can mirror: ROUNDUP, MAX, MIN, sums (core.plan.workbook writes it so).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from core.assets import ASSETS
from core.plan import serving as sv

if TYPE_CHECKING:
    from core.plan.search import Candidate

ASSET = ASSETS / "traffic_shapes.json"
HOURS = 24
EPS = 1e-9  # the planner's own slack in ceil(rate / capacity), so an exact fit is not one copy more
MINUTES_PER_HOUR = 60.0


@cache
def _asset() -> dict:
    with ASSET.open(encoding="utf-8") as handle:
        return json.load(handle)


SHAPES: dict[str, str] = {name: entry["label"] for name, entry in _asset()["shapes"].items()}


def shape(name: str) -> np.ndarray:
    """The 24 hourly fractions of the peak rate of a named shape (max exactly 1); ValueError for an unknown name."""
    if name not in SHAPES:
        raise ValueError(f"unknown traffic shape {name!r}; choose from {', '.join(SHAPES)}")
    curve = np.array(_asset()["shapes"][name]["hours"], dtype=np.float64)
    curve.setflags(write=False)
    return curve


def shape_info(name: str) -> dict[str, str]:
    """A shape's label, kind (illustrative or measured), description and reason, as the asset states them."""
    entry = _asset()["shapes"][name]
    return {key: str(entry[key]) for key in ("label", "kind", "description", "reason")}


def shapes_note() -> str:
    """What every shape is and is not (the asset's 'about')."""
    return str(_asset()["about"])


def curve_problem(values: object) -> str | None:
    """Why a custom curve cannot be used (not 24 finite numbers in [0, 1], or no hour at 1), or None."""
    try:
        curve = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return "the curve must be 24 numbers, one per hour"
    if curve.ndim != 1 or curve.size != HOURS:
        return f"the curve must have 24 hourly values, not {curve.size}"
    bad = np.flatnonzero(~np.isfinite(curve))
    if bad.size:
        return f"hour {int(bad[0])} of the curve is not a finite number"
    out = np.flatnonzero((curve < 0) | (curve > 1))
    if out.size:
        h = int(out[0])
        return f"hour {h} of the curve is {curve[h]:g}; every hour must be between 0 and 1 (a share of the peak)"
    top = float(curve.max())
    if abs(top - 1.0) > EPS:
        return f"the curve never reaches its peak (highest hour {top:g}); one hour must be 1"
    return None


# --------------------------------------------------------------------------------------------------- the fleet
@dataclass(frozen=True)
class Fleet:
    """How the copies follow the day: fixed (sized for the peak, up all day) or autoscaled between a minimum and a
    maximum (None: no maximum), each copy added paying `scale_up_minutes` of warm-up (load the weights, warm up)."""

    autoscale: bool = False
    min_copies: int = 1
    max_copies: int | None = None
    scale_up_minutes: float = 10.0


def fleet_problem(fleet: Fleet) -> str | None:
    """Why a fleet setting cannot be used, naming the field, or None."""
    if not isinstance(fleet.min_copies, int | np.integer) or fleet.min_copies < 0:
        return f"the minimum copies must be a whole number of 0 or more, not {fleet.min_copies!r}"
    if fleet.max_copies is not None:
        if not isinstance(fleet.max_copies, int | np.integer) or fleet.max_copies < 1:
            return f"the maximum copies must be a whole number of 1 or more, not {fleet.max_copies!r}"
        if fleet.max_copies < fleet.min_copies:
            return f"the maximum copies ({fleet.max_copies}) is below the minimum ({fleet.min_copies})"
    minutes = fleet.scale_up_minutes
    if not isinstance(minutes, int | float) or not math.isfinite(minutes) or not 0 <= minutes <= MINUTES_PER_HOUR:
        return f"the scale-up delay must be between 0 and 60 minutes, not {minutes!r}"
    return None


@dataclass(frozen=True)
class Capacity:
    """What one model copy carries and costs: requests/s at the latency target, GPUs, $/GPU-hour, the bill's prefill
    (input) share, and the request's prompt and answer tokens."""

    requests_per_s_copy: float
    gpus_per_copy: int
    price_per_gpu_hour: float
    prefill_share: float
    prompt_tokens: int
    output_tokens: int

    @classmethod
    def of(cls, plan: Candidate, load: sv.Workload, copies_under_load: int | None = None) -> Capacity:
        """A planner's plan (core.plan.search.Candidate) as a copy's capacity. `copies_under_load`: the copies the
        latency-under-load sizing needs at the peak (core.plan.load_sizing); when more than the plan's, a copy
        carries only the peak's share among them."""
        sizing = plan.sizing
        per_copy = float(sizing.requests_per_s_copy)
        if copies_under_load and copies_under_load > sizing.copies:
            per_copy = min(per_copy, load.requests_per_minute / 60.0 / copies_under_load)
        return cls(
            requests_per_s_copy=per_copy,
            gpus_per_copy=int(plan.tp),
            price_per_gpu_hour=float(plan.price),
            prefill_share=float(sizing.prefill_share),
            prompt_tokens=int(load.prompt_tokens),
            output_tokens=int(load.output_tokens),
        )

    @property
    def copy_hour_cost(self) -> float:
        """$ for one copy for one hour: GPUs per copy × $/GPU-hour."""
        return self.gpus_per_copy * self.price_per_gpu_hour


def copies_for(rate_rpm: np.ndarray | float, capacity: Capacity) -> np.ndarray:
    """Copies a rate needs: ceil(rate per second / capacity per copy − 1e-9), as the planner counts them, and at
    least one for any traffic at all (a trickle still needs a copy running); none for an hour without traffic."""
    rate_s = np.asarray(rate_rpm, dtype=np.float64) / 60.0
    return np.where(rate_s > 0, np.maximum(1.0, np.ceil(rate_s / capacity.requests_per_s_copy - EPS)), 0.0)


# --------------------------------------------------------------------------------------------------- a day
@dataclass(frozen=True)
class Day:
    """One day of traffic on the fleet: the rate and copies per hour, copy-hours billed (warm-ups included), how busy
    the billed copies are, the hours a maximum cannot carry, and $ per 1M tokens in the planner's best case and on
    this day, with one sentence on the difference."""

    hourly_rpm: np.ndarray
    hourly_copies: np.ndarray
    copy_hours: float
    peak_copies: int
    mean_rpm: float
    utilisation: float
    unmet_hours: int
    best_per_m_input: float
    best_per_m_output: float
    realistic_per_m_input: float
    realistic_per_m_output: float
    sentence: str
    served_requests: float = 0.0
    demanded_requests: float = 0.0
    cost: float = 0.0
    warmup_copy_hours: float = 0.0


def _per_m(cost: float, share: float, tokens: float) -> float:
    return 1e6 * cost * share / tokens if tokens > 0 else math.inf


def _sentence(d: dict, capacity: Capacity, peak_rpm: float, fleet: Fleet) -> str:
    """One plain sentence, from the numbers, on how far the day's $ per 1M output tokens is from the best case."""
    real, best = d["realistic_out"], d["best_out"]
    if real > best * 1.005:
        gap = f"{real / best:,.1f}× the planner's best case of ${best:,.2f}"
    elif real < best * 0.995:
        gap = f"{1 - real / best:.0%} below the planner's best case of ${best:,.2f}"
    else:
        gap = f"the same as the planner's best case of ${best:,.2f}"
    copies = d["copies"]
    if fleet.autoscale:
        top = "no maximum" if fleet.max_copies is None else f"at most {fleet.max_copies:,}"
        lo, hi = int(copies.min()), int(copies.max())
        runs = f"{lo:,}–{hi:,} copies through the day" if lo != hi else f"{hi:,} cop{'y' if hi == 1 else 'ies'} all day"
        head = (
            f"Autoscaling ({fleet.min_copies:,} to {top}) runs {runs}, {d['copy_hours']:,.1f} copy-hours with warm-ups"
        )
    else:
        n = int(copies[0])
        head = f"A fixed fleet of {n:,} cop{'y' if n == 1 else 'ies'} sized for the peak of {peak_rpm:,.0f} a minute"
    text = (
        f"{head} is busy {d['utilisation']:.0%} of what it bills on this curve (the day averages "
        f"{d['mean_rpm']:,.0f} requests a minute), so 1M output tokens cost ${real:,.2f}, {gap}, which bills the "
        "peak rate every hour"
    )
    if d["unmet_hours"]:
        lost = 1 - d["served"] / d["demanded"]
        text += (
            f"; in {d['unmet_hours']} hour{'s' if d['unmet_hours'] > 1 else ''} the maximum cannot carry the rate and "
            f"{lost:.0%} of the day's requests go unserved"
        )
    return text + "."


def day(capacity: Capacity, peak_rpm: float, curve: np.ndarray | Sequence[float], fleet: Fleet) -> Day:
    """Carry one day of `peak_rpm` × `curve` on the fleet.

    Fixed: the peak's copies, max(1, ceil(peak/s ÷ capacity − 1e-9)), all 24 hours. Autoscale: each hour
    ceil(rate/s ÷ capacity − 1e-9) clamped to [min, max]; every copy added since the hour before (hour 23 before
    hour 0) pays scale_up_minutes / 60 copy-hours of warm-up, billed and serving nothing. Served requests are the
    rate, capped by the copies' capacity. Best case: the peak's copies carrying the peak rate every hour (the
    planner's bill). Realistic $/1M: the day's bill × the prefill share (input) or the rest (output) over the day's
    served tokens. ValueError on a bad curve, fleet, rate or capacity."""
    problem = curve_problem(curve) or fleet_problem(fleet)
    if problem:
        raise ValueError(problem)
    if not (math.isfinite(peak_rpm) and peak_rpm > 0):
        raise ValueError(f"the peak requests per minute must be a positive number, not {peak_rpm!r}")
    if not (capacity.requests_per_s_copy > 0 and capacity.price_per_gpu_hour > 0 and capacity.gpus_per_copy >= 1):
        raise ValueError("a copy's capacity, GPUs and price must be positive")
    hourly = float(peak_rpm) * np.asarray(curve, dtype=np.float64)
    need = copies_for(hourly, capacity)
    peak_copies = max(1, int(copies_for(peak_rpm, capacity)))
    if fleet.autoscale:
        top = math.inf if fleet.max_copies is None else fleet.max_copies
        copies = np.minimum(np.maximum(need, fleet.min_copies), top)
    else:
        copies = np.full(HOURS, float(peak_copies))
    added = np.maximum(0.0, copies - np.roll(copies, 1))
    warmup = float(added.sum()) * fleet.scale_up_minutes / MINUTES_PER_HOUR
    copy_hours = float(copies.sum()) + warmup
    per_copy_rpm = capacity.requests_per_s_copy * 60.0
    served = float(np.minimum(hourly, copies * per_copy_rpm).sum()) * 60.0
    demanded = float(hourly.sum()) * 60.0
    cost = copy_hours * capacity.copy_hour_cost
    best_cost = peak_copies * HOURS * capacity.copy_hour_cost
    best_requests = peak_rpm * 60.0 * HOURS
    s, p, o = capacity.prefill_share, capacity.prompt_tokens, capacity.output_tokens
    figures = {
        "copies": copies,
        "copy_hours": copy_hours,
        "utilisation": served / (copy_hours * per_copy_rpm * 60.0),
        "mean_rpm": float(hourly.mean()),
        "unmet_hours": int(np.count_nonzero(need > copies)),
        "served": served,
        "demanded": demanded,
        "best_out": _per_m(best_cost, 1 - s, best_requests * o),
        "realistic_out": _per_m(cost, 1 - s, served * o),
    }
    hourly.setflags(write=False)
    hourly_copies = copies.astype(np.int64)
    hourly_copies.setflags(write=False)
    return Day(
        hourly_rpm=hourly,
        hourly_copies=hourly_copies,
        copy_hours=copy_hours,
        peak_copies=int(copies.max()),
        mean_rpm=figures["mean_rpm"],
        utilisation=figures["utilisation"],
        unmet_hours=figures["unmet_hours"],
        best_per_m_input=_per_m(best_cost, s, best_requests * p),
        best_per_m_output=figures["best_out"],
        realistic_per_m_input=_per_m(cost, s, served * p),
        realistic_per_m_output=figures["realistic_out"],
        sentence=_sentence(figures, capacity, peak_rpm, fleet),
        served_requests=served,
        demanded_requests=demanded,
        cost=cost,
        warmup_copy_hours=warmup,
    )
