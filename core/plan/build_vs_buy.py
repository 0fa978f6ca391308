"""Build vs buy, like for like: the API that serves the same open model as the plan (or, where none does, the
API-served model closest in size, said so), billed on the workload's average monthly tokens while the fleet is
sized for the peak.

API prices and the model each serves are in assets/api_prices.json ('prices', 'serves'); so is the default
peak-to-average factor and its reason ('peak_to_average').
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from core.plan import serving as sv
from core.plan.model_config import ModelConfig, param_count, presets

SECONDS_PER_HOUR = 3600.0


@cache
def _asset() -> dict:
    return sv._asset("api_prices.json")


@cache
def served_model() -> dict[str, str]:
    """For each API price that serves an open model of the presets: its model preset id."""
    return dict(_asset().get("serves", {}))


@cache
def default_peak_to_average() -> float:
    """The default ratio of the busiest hour's request rate to the month's average rate."""
    return float(_asset()["peak_to_average"]["default"])


def peak_to_average_reason() -> str:
    """Why the default peak-to-average factor is what it is."""
    return str(_asset()["peak_to_average"]["reason"])


def blended_per_m(price: sv.ApiPrice, load: sv.Workload) -> float:
    """The API's $ per 1M tokens at this workload's input:output mix."""
    p, o = load.prompt_tokens, load.output_tokens
    return (p * price.input_per_m + o * price.output_per_m) / (p + o)


@dataclass(frozen=True)
class ApiChoice:
    """The API a plan is compared with, whether it serves the same model, and the sentence that says so."""

    price: sv.ApiPrice
    same_model: bool
    note: str


def default_api(config: ModelConfig, model_id: str | None = None, load: sv.Workload | None = None) -> ApiChoice:
    """The API to compare a self-hosted model with: the cheapest API that serves the same model (at the workload's
    input:output mix, or the plain mean of input and output prices without one); where no API serves it, the
    API-served open model closest in parameter count, with a note that it is not the same model."""
    load = load or sv.Workload(prompt_tokens=1, output_tokens=1)
    prices = sv.api_prices()
    serves = served_model()
    same = [prices[a] for a, m in serves.items() if m == model_id and a in prices]
    if same:
        best = min(same, key=lambda p: (blended_per_m(p, load), p.id))
        note = f"{best.provider} serves {config.name} itself ({best.model}, list price of {best.date})"
        return ApiChoice(best, True, note)
    size = float(param_count(config))
    served = [(a, presets()[m]) for a, m in serves.items() if m in presets() and a in prices]
    api_id, other = min(
        served,
        key=lambda item: (abs(math.log(param_count(item[1]) / size)), blended_per_m(prices[item[0]], load)),
    )
    best = prices[api_id]
    note = (
        f"{best.provider}'s {best.model} is not the same model: no API in the presets serves {config.name}, and "
        f"{other.name} ({param_count(other) / 1e9:,.1f}B parameters against {size / 1e9:,.1f}B) is the API-served "
        "open model closest in size"
    )
    return ApiChoice(best, False, note)


@dataclass(frozen=True)
class ApiBill:
    """An API's monthly bill for the workload's average traffic: requests, tokens and dollars."""

    average_rpm: float
    monthly_requests: float
    input_tokens: float
    output_tokens: float
    monthly_cost: float


def api_bill(load: sv.Workload, price: sv.ApiPrice, peak_to_average: float | None = None) -> ApiBill:
    """Bill the API on the average month: peak requests per minute / peak-to-average, every hour of the month.
    ValueError when the factor is below 1 or not finite (the average cannot exceed the peak)."""
    factor = default_peak_to_average() if peak_to_average is None else float(peak_to_average)
    if not math.isfinite(factor) or factor < 1:
        raise ValueError(f"peak-to-average must be a finite number of at least 1, not {peak_to_average!r}")
    average = load.requests_per_minute / factor
    requests = average * 60 * load.hours_per_month
    tokens_in, tokens_out = requests * load.prompt_tokens, requests * load.output_tokens
    cost = (tokens_in * price.input_per_m + tokens_out * price.output_per_m) / 1e6
    return ApiBill(average, requests, tokens_in, tokens_out, cost)


@dataclass(frozen=True)
class Verdict:
    """Self-hosting (sized for the peak, up all month) against the API (billed on average tokens), and one sentence
    that states the verdict and, where the API is another model, says so."""

    self_hosted_monthly: float
    api: ApiBill
    choice: ApiChoice
    cheaper: str
    sentence: str


def verdict(
    self_hosted_monthly: float, load: sv.Workload, choice: ApiChoice, peak_to_average: float | None = None
) -> Verdict:
    """Which is cheaper a month, by how much, and on what terms."""
    bill = api_bill(load, choice.price, peak_to_average)
    factor = default_peak_to_average() if peak_to_average is None else float(peak_to_average)
    build, buy = self_hosted_monthly, bill.monthly_cost
    cheaper = "self-hosted" if build < buy else "API"
    ratio = max(build, buy) / min(build, buy) if min(build, buy) > 0 else math.inf
    terms = (
        f"the fleet is sized for the peak of {load.requests_per_minute:,g} requests a minute; the API bills the "
        f"average, {bill.average_rpm:,.0f} a minute (peak ÷ {factor:g})"
    )
    head = (
        f"Self-hosting costs ${build:,.0f} a month and {choice.price.provider}'s {choice.price.model} ${buy:,.0f}: "
        f"{'self-hosting' if cheaper == 'self-hosted' else 'the API'} is {ratio:,.1f}× cheaper ({terms})"
    )
    tail = "." if choice.same_model else f"; {choice.note}."
    return Verdict(build, bill, choice, cheaper, head + tail)
