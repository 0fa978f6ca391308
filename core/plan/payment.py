"""Ways to pay for a fleet and their figures: reserved-term discounts, owning 8-GPU servers (price, depreciation,
power, colocation, operations) and the API's price, each preset read from assets/budget_presets.json with its source,
or marked as a planning assumption for the reader's own figure.

A server price with no public figure is the reference server's price (the H100's) scaled by the two GPUs' typical
on-demand price per GPU-hour (assets/gpu_prices.json), and says so.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from functools import cache

from core.assets import ASSETS
from core.plan import build_vs_buy as bvb
from core.plan import serving as sv
from core.plan.model_config import ModelConfig
from core.plan.prices import typical_price

ASSET = ASSETS / "budget_presets.json"
YOUR_FIGURE = "your figure"


@cache
def _asset() -> dict:
    with ASSET.open(encoding="utf-8") as handle:
        return json.load(handle)


@dataclass(frozen=True)
class Owning:
    """Owning servers: the price of one server of `gpus_per_server` GPUs, straight-line depreciation years, each GPU's
    and each server's other parts' watts, the facility's PUE, $ per kWh, colocation $ per kW of IT load a month, and
    the operations share, added on top of depreciation + power + colocation."""

    server_price: float
    gpus_per_server: int = 8
    depreciation_years: float = 4.0
    gpu_watts: float = 700.0
    server_watts: float = 4600.0
    pue: float = 1.58
    dollars_per_kwh: float = 0.0895
    colo_per_kw_month: float = 184.06
    ops_share: float = 0.1


@dataclass(frozen=True)
class Payment:
    """The figures of every way to pay besides the GPU's on-demand price: the reserved 1- and 3-year discounts (a
    share off on-demand), owning servers, and the API's price per 1M tokens."""

    reserved_1y_discount: float
    reserved_3y_discount: float
    owning: Owning
    api: sv.ApiPrice


@dataclass(frozen=True)
class Source:
    """A preset value, its unit, whether it is published or a planning assumption, and its source in words."""

    value: float
    unit: str
    status: str
    text: str


def _cite(entry: dict) -> str:
    """'Publisher, "Title" (date), URL: note' or 'Planning assumption, your figure: note'."""
    if entry.get("status") != "published":
        note = entry.get("note", "")
        return note if note.lower().startswith("planning assumption") else f"Planning assumption, {YOUR_FIGURE}. {note}"
    parts = [f"{entry['publisher']}, \u201c{entry['title']}\u201d ({entry['date']})"]
    if entry.get("url"):
        parts.append(entry["url"])
    text = ", ".join(parts)
    return f"{text}: {entry['note']}" if entry.get("note") else text


def server_price_source(gpu_id: str) -> Source:
    """The 8-GPU server price for a GPU type: published where a public price exists, else the reference server's
    price scaled by the GPUs' typical rent per hour (a planning assumption)."""
    block = _asset()["server_price"]
    entry = block["gpus"].get(gpu_id, {"status": "assumption"})
    if entry.get("status") == "published":
        return Source(float(entry["value"]), block["unit"], "published", _cite(entry))
    ref = block["reference_gpu"]
    ref_price = float(block["gpus"][ref]["value"])
    value = ref_price * typical_price(gpu_id) / typical_price(ref)
    text = (
        f"Planning assumption, {YOUR_FIGURE}: no public price was found for this server; the {ref} server's "
        f"${ref_price:,.0f} scaled by the typical rent per GPU-hour (${typical_price(gpu_id):,.2f} against "
        f"${typical_price(ref):,.2f}). {block['rule']}"
    )
    return Source(round(value, 2), block["unit"], "assumption", text)


def sources(gpu_id: str) -> dict[str, Source]:
    """Every preset of the budget for a GPU type, by field name, with its source or 'your figure'."""
    a = _asset()
    out = {
        "reserved_1y_discount": a["reserved"]["reserved-1y"],
        "reserved_3y_discount": a["reserved"]["reserved-3y"],
    }
    found = {k: Source(float(v["value"]), v["unit"], v["status"], _cite(v)) for k, v in out.items()}
    found["server_price"] = server_price_source(gpu_id)
    watts = a["gpu_watts"]["gpus"].get(gpu_id)
    if watts is None:
        raise ValueError(f"no GPU power is listed for {gpu_id!r}; give your own figure")
    found["gpu_watts"] = Source(float(watts["value"]), a["gpu_watts"]["unit"], watts["status"], _cite(watts))
    for key, entry in a["owning"].items():
        found[key] = Source(float(entry["value"]), entry["unit"], entry["status"], _cite(entry))
    return found


def source_text(field: str, gpu_id: str) -> str:
    """The source of one preset in words (or 'Planning assumption, your figure: …'); KeyError for an unknown field."""
    return sources(gpu_id)[field].text


def reserved_providers() -> list[dict]:
    """Each provider's published reserved-term ceiling, with its source (for the page's note)."""
    return [dict(p) for p in _asset()["reserved"]["providers"]]


def default_owning(gpu_id: str) -> Owning:
    """Owning an 8-GPU server of this GPU type at the presets."""
    s = sources(gpu_id)
    return Owning(
        server_price=s["server_price"].value,
        depreciation_years=s["depreciation_years"].value,
        gpu_watts=s["gpu_watts"].value,
        server_watts=s["server_watts"].value,
        pue=s["pue"].value,
        dollars_per_kwh=s["dollars_per_kwh"].value,
        colo_per_kw_month=s["colo_per_kw_month"].value,
        ops_share=s["ops_share"].value,
    )


def default_payment(gpu_id: str, config: ModelConfig, model_id: str | None, load: sv.Workload) -> Payment:
    """The presets for a plan on this GPU type, and the API that serves the same model (or the nearest in size)."""
    s = sources(gpu_id)
    return Payment(
        reserved_1y_discount=s["reserved_1y_discount"].value,
        reserved_3y_discount=s["reserved_3y_discount"].value,
        owning=default_owning(gpu_id),
        api=bvb.default_api(config, model_id, load).price,
    )


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


LABELS = {
    "reserved_1y_discount": "reserved 1-year discount",
    "reserved_3y_discount": "reserved 3-year discount",
    "server_price": "price per server",
    "gpus_per_server": "GPUs per server",
    "depreciation_years": "depreciation years",
    "gpu_watts": "watts per GPU",
    "server_watts": "server watts besides the GPUs",
    "pue": "PUE",
    "dollars_per_kwh": "electricity $ per kWh",
    "colo_per_kw_month": "colocation $ per kW a month",
    "ops_share": "operations share",
    "input_per_m": "API $ per 1M input tokens",
    "output_per_m": "API $ per 1M output tokens",
}


def payment_problem(p: Payment) -> list[str]:
    """Every refused field of a payment, named: a discount outside [0, 1), a price, watts or years that are not
    positive and finite, a PUE below 1, an operations share below 0; empty when all can be used."""
    problems = []
    for name in ("reserved_1y_discount", "reserved_3y_discount"):
        v = getattr(p, name)
        if not (_finite(v) and 0 <= v < 1):
            problems.append(f"the {LABELS[name]} must be a share from 0 up to (not including) 1, not {v!r}")
    o = p.owning
    positive = ("server_price", "depreciation_years", "gpu_watts", "dollars_per_kwh", "colo_per_kw_month")
    for f in fields(o):
        v = getattr(o, f.name)
        label = LABELS[f.name]
        if f.name == "gpus_per_server":
            ok = isinstance(v, int) and not isinstance(v, bool) and v >= 1
            rule = "a whole number of 1 or more"
        elif f.name in positive:
            ok, rule = _finite(v) and v > 0, "a positive, finite number"
        elif f.name == "pue":
            ok, rule = _finite(v) and v >= 1, "a finite number of at least 1"
        else:  # server_watts, ops_share
            ok, rule = _finite(v) and v >= 0, "a finite number of 0 or more"
        if not ok:
            problems.append(f"the {label} must be {rule}, not {v!r}")
    for name in ("input_per_m", "output_per_m"):
        v = getattr(p.api, name)
        if not (_finite(v) and v > 0):
            problems.append(f"the {LABELS[name]} must be a positive, finite number, not {v!r}")
    return problems
