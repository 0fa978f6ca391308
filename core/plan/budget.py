"""A budget over 12, 24 or 36 months: traffic growing each month, the copies a day of it needs (core.plan.daily), and
what each way to pay costs every month: cloud on-demand, reserved for 1 or 3 years, owning servers, or an API.

Month m's peak rate is peak × (1 + g)^(m − 1); its day gives the copies per hour (fixed or autoscaled). Per month, with
H hours (730), D = H / 24 days, P the on-demand $/GPU-hour, G the month's fleet GPUs (its busiest hour's copies × GPUs
per copy), S the servers (ceil(G / GPUs per server), only ever added, never sold):
- on-demand = copy-hours of the day × D × GPUs per copy × P (autoscaling pays only the copies it runs);
- reserved  = G × H × P × (1 − discount): the busiest hour's GPUs reserved all month, used or not. A reservation is a
  commitment for its whole term (1 or 3 years); a term running past the horizon is still owed, and is not counted;
- own       = (S × price / (years × 12) + IT kW × PUE × $/kWh × H + IT kW × colocation $/kW-month) × (1 + ops share),
  IT kW = (G × GPU watts + S × server watts) / 1000: GPUs at their rated power all month (an upper bound), straight-
  line depreciation with no resale, colocation priced on the IT load;
- API       = the month's average tokens (the day's mean rate, not its peak, every hour) × the API's prices.
Every step is a spreadsheet formula (core.plan.workbook writes the same arithmetic as live formulas).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from core.plan import daily as dl
from core.plan import kv_memory as kv
from core.plan import search as se
from core.plan import serving as sv
from core.plan.fields import field
from core.plan.model_config import ModelConfig
from core.plan.payment import (
    Owning,
    Payment,
    default_owning,
    default_payment,
    payment_problem,
    reserved_providers,
    source_text,
    sources,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "HORIZONS",
    "WAYS",
    "Budget",
    "Growth",
    "Owning",
    "Payment",
    "budget",
    "default_owning",
    "default_payment",
    "growth_problem",
    "own_monthly",
    "payment_problem",
    "reserved_providers",
    "source_text",
    "sources",
]

HORIZONS = (12, 24, 36)
WAYS: dict[str, str] = {
    "on-demand": "Cloud on-demand",
    "reserved-1y": "Cloud reserved, 1 year",
    "reserved-3y": "Cloud reserved, 3 years",
    "own": "Own servers",
    "api": "API",
}
SELF_HOSTED = ("on-demand", "reserved-1y", "reserved-3y", "own")


@dataclass(frozen=True)
class Growth:
    """Monthly growth of the request rate in percent (compounded) and the horizon in months."""

    monthly_percent: float = 0.0
    months: int = 12


def growth_problem(g: Growth, peak_rpm: float | None = None) -> str | None:
    """Why a growth or horizon cannot be used: not a number, a fall of 100% or more, a horizon not 12, 24 or 36, or
    (given the first month's peak) a rate grown beyond the most requests a minute the planner sizes by the last month
    (worked out in logarithms, so no growth overflows)."""
    pct = g.monthly_percent
    if isinstance(pct, bool) or not isinstance(pct, int | float) or not math.isfinite(pct):
        return f"the monthly growth must be a finite percentage, not {pct!r}"
    if pct <= -100:
        return f"the monthly growth cannot be a fall of 100% or more ({pct:g}%): traffic would vanish"
    if g.months not in HORIZONS:
        return f"the horizon must be {', '.join(map(str, HORIZONS))} months, not {g.months!r}"
    top = field("rpm").high
    if peak_rpm is None or not 0 < peak_rpm <= top or pct <= 0:
        return None
    steps = g.months - 1
    if math.log(peak_rpm) + steps * math.log1p(pct / 100.0) <= math.log(top):
        return None
    most = 100.0 * math.expm1(math.log(top / peak_rpm) / steps)
    grown = math.exp(min(math.log(peak_rpm) + steps * math.log1p(pct / 100.0), 700.0))
    return (
        f"at {pct:g}% a month, {peak_rpm:,g} requests a minute grow to {grown:,.3g} a minute by month {g.months}, "
        f"beyond the {top:,.0f} the planner sizes; over {g.months} months it can grow at most {most:,.1f}% a month"
    )


def own_monthly(owning: Owning, gpus: np.ndarray | float, servers: np.ndarray | float, hours: float) -> np.ndarray:
    """A month of owning: (servers × price / (years × 12) + IT kW × PUE × $/kWh × hours + IT kW × colocation) ×
    (1 + ops share), IT kW = (GPUs × GPU watts + servers × server watts) / 1000."""
    g = np.asarray(gpus, dtype=np.float64)
    s = np.asarray(servers, dtype=np.float64)
    it_kw = (g * owning.gpu_watts + s * owning.server_watts) / 1000.0
    hardware = s * owning.server_price / (owning.depreciation_years * 12.0)
    power = it_kw * owning.pue * owning.dollars_per_kwh * hours
    space = it_kw * owning.colo_per_kw_month
    return (hardware + power + space) * (1.0 + owning.ops_share)


@dataclass(frozen=True)
class Budget:
    """Month by month over the horizon: the peak rate, copies, GPUs, servers owned, copy-hours and tokens, each way
    to pay's monthly and cumulative cost, the cheapest way per year and over the horizon, the months a copy or
    another GPU type is needed, the API break-even volume, month 1's realistic $ per 1M tokens, and a sentence."""

    months: int
    rpm_by_month: np.ndarray
    copies_by_month: np.ndarray
    gpus_by_month: np.ndarray
    servers_by_month: np.ndarray
    copy_hours_by_month: np.ndarray
    input_tokens_by_month: np.ndarray
    output_tokens_by_month: np.ndarray
    monthly: dict[str, np.ndarray]
    cumulative: dict[str, np.ndarray]
    cheapest_by_year: list[str]
    cheapest: str
    copy_added_months: list[int]
    gpu_type_change_month: int | None
    gpu_type_change_to: str | None
    break_even_tokens_per_month: float
    break_even_way: str
    realistic_per_m_input: float
    realistic_per_m_output: float
    best_per_m_output: float
    sentence: str
    days: tuple[dl.Day, ...] = ()

    def total(self, way: str) -> float:
        """A way's cumulative cost over the horizon."""
        return float(self.cumulative[way][-1])


def _way(w: str) -> str:
    """A way's label inside a sentence: 'cloud on-demand', 'own servers', 'API'."""
    label = WAYS[w]
    return label if label.isupper() else label[0].lower() + label[1:]


def _money(v: float) -> str:
    return f"${v:,.0f}"


def _months_text(months: list[int]) -> str:
    if not months:
        return ""
    if len(months) > 6:  # the first six, then how many more months (not a month number)
        rest = len(months) - 6
        return f"months {', '.join(map(str, months[:6]))} and {rest} later month{'s' if rest > 1 else ''}"
    if len(months) > 1:
        return f"months {', '.join(map(str, months[:-1]))} and {months[-1]}"
    return f"month {months[0]}"


def _sentence(b: dict, growth: Growth, change: tuple[int | None, str | None]) -> str:
    """One sentence from the numbers: the cheapest way over the horizon against the others, and what must change."""
    totals = {w: float(b["cumulative"][w][-1]) for w in WAYS}
    best = b["cheapest"]
    runner = min((w for w in WAYS if w != best), key=lambda w: totals[w])
    rate = f"{growth.monthly_percent:g}% a month" if growth.monthly_percent else "no growth"
    text = (
        f"Over {growth.months} months at {rate}, {_way(best)} costs {_money(totals[best])} in all, "
        f"{_money(totals[runner] - totals[best])} less than {_way(runner)} ({_money(totals[runner])})"
    )
    if best == "reserved-3y" and growth.months < 36:
        text += f"; its 3-year term commits {36 - growth.months} months more than this horizon shows"
    years = b["cheapest_by_year"]
    if len(set(years)) > 1:
        text += "; the cheapest changes by year: " + ", ".join(f"year {i + 1} {_way(w)}" for i, w in enumerate(years))
    if b["added"]:
        text += f"; copies must be added in {_months_text(b['added'])}"
    month, gpu = change
    if month is not None:
        name = kv.gpus()[gpu].name if gpu in kv.gpus() else gpu
        text += f"; from month {month} the planner would choose {name} instead at the grown rate"
    return text + "."


def _gpu_change(
    config: ModelConfig,
    load: sv.Workload,
    plan: se.Candidate,
    rpm: np.ndarray,
    months: list[int],
    search_args: dict,
) -> tuple[int | None, str | None]:
    """The first month (of those where copies change) whose grown rate makes the search pick another GPU type."""
    for m in months:
        try:
            result = se.search(config, replace(load, requests_per_minute=float(rpm[m - 1])), **search_args)
        except ValueError:
            continue
        if result.plan is not None and result.plan.gpu.id != plan.gpu.id:
            return m, result.plan.gpu.id
    return None, None


def budget(
    config: ModelConfig,
    model_id: str | None,
    load: sv.Workload,
    plan: se.Candidate,
    curve: np.ndarray | Iterable[float],
    fleet: dl.Fleet,
    growth: Growth,
    payment: Payment,
    *,
    gpus: Iterable[str] | None = None,
    tp: int | None = None,
    prices: Mapping[str, float] | None = None,
    settings: se.Settings | None = None,
    eff: sv.Efficiency | None = None,
    capacity: dl.Capacity | None = None,
) -> Budget:
    """The budget of `plan` (the planner's answer for `load` at month 1) over the growth's horizon.

    `capacity` replaces the plan's own (e.g. the latency-under-load sizing's rate per copy). gpus/tp/prices/settings/
    eff are the search's own arguments, used to see whether a grown rate would choose another GPU type. ValueError
    names a refused curve, fleet, growth or payment field."""
    curve = np.asarray(list(curve) if not isinstance(curve, np.ndarray) else curve, dtype=np.float64)
    grown = growth_problem(growth, load.requests_per_minute)
    problems = [p for p in (dl.curve_problem(curve), dl.fleet_problem(fleet), grown) if p]
    problems += payment_problem(payment)
    if problems:
        raise ValueError("; ".join(problems))
    cap = capacity or dl.Capacity.of(plan, load)
    n, hours = growth.months, float(load.hours_per_month)
    days_per_month = hours / 24.0
    rpm = load.requests_per_minute * (1.0 + growth.monthly_percent / 100.0) ** np.arange(n)
    days = tuple(dl.day(cap, float(r), curve, fleet) for r in rpm)
    copies = np.array([d.peak_copies for d in days], dtype=np.int64)
    fleet_gpus = copies * cap.gpus_per_copy
    o = payment.owning
    servers = np.maximum.accumulate(np.ceil(fleet_gpus / o.gpus_per_server - 1e-9)).astype(np.int64)
    copy_hours = np.array([d.copy_hours for d in days]) * days_per_month
    requests = rpm * float(curve.mean()) * 60.0 * hours
    tokens_in, tokens_out = requests * cap.prompt_tokens, requests * cap.output_tokens
    price = cap.price_per_gpu_hour
    monthly = {
        "on-demand": copy_hours * cap.gpus_per_copy * price,
        "reserved-1y": fleet_gpus * hours * price * (1.0 - payment.reserved_1y_discount),
        "reserved-3y": fleet_gpus * hours * price * (1.0 - payment.reserved_3y_discount),
        "own": own_monthly(o, fleet_gpus, servers, hours),
        "api": (tokens_in * payment.api.input_per_m + tokens_out * payment.api.output_per_m) / 1e6,
    }
    for v in monthly.values():
        v.setflags(write=False)
    cumulative = {w: np.cumsum(v) for w, v in monthly.items()}
    order = list(WAYS)
    cheapest = min(order, key=lambda w: (cumulative[w][-1], order.index(w)))
    by_year = [
        min(order, key=lambda w, k=k: (float(monthly[w][12 * k : 12 * k + 12].sum()), order.index(w)))
        for k in range(n // 12)
    ]
    added = [m + 1 for m in range(1, n) if copies[m] > copies[m - 1]]
    search_args = {"gpus": gpus, "tp": tp, "prices": prices, "settings": settings, "eff": eff}
    change = _gpu_change(config, load, plan, rpm, added, search_args)
    hosted = min(SELF_HOSTED, key=lambda w: (cumulative[w][-1], order.index(w)))
    p, out = cap.prompt_tokens, cap.output_tokens
    api_per_token = (p * payment.api.input_per_m + out * payment.api.output_per_m) / 1e6 / (p + out)
    figures = {"cumulative": cumulative, "cheapest": cheapest, "cheapest_by_year": by_year, "added": added}
    return Budget(
        months=n,
        rpm_by_month=rpm,
        copies_by_month=copies,
        gpus_by_month=fleet_gpus,
        servers_by_month=servers,
        copy_hours_by_month=copy_hours,
        input_tokens_by_month=tokens_in,
        output_tokens_by_month=tokens_out,
        monthly=monthly,
        cumulative=cumulative,
        cheapest_by_year=by_year,
        cheapest=cheapest,
        copy_added_months=added,
        gpu_type_change_month=change[0],
        gpu_type_change_to=change[1],
        break_even_tokens_per_month=float(monthly[hosted][0]) / api_per_token,
        break_even_way=hosted,
        realistic_per_m_input=days[0].realistic_per_m_input,
        realistic_per_m_output=days[0].realistic_per_m_output,
        best_per_m_output=days[0].best_per_m_output,
        sentence=_sentence(figures, growth, change),
        days=days,
    )
