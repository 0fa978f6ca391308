"""What a GPU-hour costs: on-demand offers per GPU type (provider, date, source), their low / typical / high, and the
reader's own price per GPU, refused with the GPU's name when it is not a positive, finite number.

The price follows the GPU: a plan on an L40S is billed at an L40S price, never at the H100's. Offers live in
assets/gpu_prices.json; 'typical' is the median of a GPU's offers, the planner's default.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from core.assets import ASSETS
from core.plan import kv_memory as kv

ASSET = ASSETS / "gpu_prices.json"


@dataclass(frozen=True)
class Offer:
    """One provider's on-demand price for one GPU, with the date it was listed and the page that lists it."""

    provider: str
    price_per_gpu_hour: float
    date: str
    offer: str
    source: str


@dataclass(frozen=True)
class GpuPrice:
    """A GPU type's public offers and their range: the cheapest, the dearest and the median (the default)."""

    gpu_id: str
    low: float
    high: float
    typical: float
    offers: tuple[Offer, ...]

    @property
    def providers(self) -> tuple[str, ...]:
        """The providers behind the offers, each once, in the asset's order."""
        return tuple(dict.fromkeys(o.provider for o in self.offers))


@cache
def _asset() -> dict:
    with ASSET.open(encoding="utf-8") as handle:
        return json.load(handle)


@cache
def gpu_prices() -> dict[str, GpuPrice]:
    """Every GPU type's offers and range, by GPU id (the ids of gpu_presets.json)."""
    out = {}
    for gpu_id, entry in _asset()["gpus"].items():
        offers = tuple(Offer(**o) for o in entry["offers"])
        out[gpu_id] = GpuPrice(gpu_id, entry["low"], entry["high"], entry["typical"], offers)
    return out


def offer_range(offers: Iterable[Offer]) -> tuple[float, float, float]:
    """(low, typical, high) of a list of offers: min, median, max of their prices."""
    values = [o.price_per_gpu_hour for o in offers]
    return min(values), statistics.median(values), max(values)


def typical_price(gpu_id: str) -> float:
    """The default $/GPU-hour of a GPU type: the median of its public offers."""
    try:
        return gpu_prices()[gpu_id].typical
    except KeyError:
        raise ValueError(f"no price is listed for the GPU {gpu_id!r}; give your own price for it") from None


def price_problem(gpu_id: str, value: object) -> str | None:
    """Why a reader's price for a GPU cannot be used (not a number, ≤ 0, not finite), naming the GPU; None if it can."""
    name = kv.gpus()[gpu_id].name if gpu_id in kv.gpus() else gpu_id
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return f"the price for {name} must be a number of dollars per GPU-hour, not {value!r}"
    if not math.isfinite(number) or number <= 0:
        return f"the price for {name} must be a positive, finite number of dollars per GPU-hour, not {value!r}"
    return None


def resolve_prices(gpu_ids: Iterable[str], own: Mapping[str, float] | None = None) -> dict[str, float]:
    """$/GPU-hour for each GPU: the reader's own where given, else the typical public price. ValueError names a GPU
    whose own price is refused, or an own price for a GPU that is not a preset."""
    own = dict(own or {})
    unknown = [g for g in own if g not in kv.gpus()]
    if unknown:
        raise ValueError(f"a price was given for {unknown[0]!r}, which is not a GPU preset ({', '.join(kv.gpus())})")
    for gpu_id, value in own.items():
        problem = price_problem(gpu_id, value)
        if problem:
            raise ValueError(problem)
    return {g: float(own[g]) if g in own else typical_price(g) for g in gpu_ids}


def cost_per_million(price_per_gpu_hour: float, tokens_per_s_per_gpu: float | None) -> float | None:
    """$ per 1M output tokens of a GPU at this price and speed (None without a speed): price / 3600 / tokens/s."""
    if not tokens_per_s_per_gpu:
        return None
    return 1e6 * price_per_gpu_hour / 3600.0 / tokens_per_s_per_gpu
