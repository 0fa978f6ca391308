"""The planner's number inputs, each declared once: label, unit, bounds, default (with its reason), step, help, the
link key that holds it and the command flag that sets it. The cost page's fields and link, `python -m core.plan` and
`python -m core.traffic` all read and refuse numbers through these declarations, so a value one refuses the others
refuse with the same reason.

A number is read exactly as written (core.numbers): anything else is refused, never reshaped into another number.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from core.numbers import Refused, read_number
from core.plan import build_vs_buy, kv_memory, payment, serving

HOURS_ALWAYS_ON = 365 * 24 / 12  # hours in an average month: GPUs rented around the clock


@dataclass(frozen=True)
class Field:
    """One number input: what the reader sees (label, unit, help), what it may be (low … high, whole numbers only or
    not), where it starts (default, and why), how the page steps it, and its names in a link and a command."""

    key: str
    label: str
    unit: str
    low: float
    high: float
    default: float
    step: float
    help: str
    reason: str = ""
    flag: str | None = None
    whole: bool = False

    def read(self, raw: str) -> float | int:
        """The value of a written number (a link value, a typed field, a command argument); Refused with the reason."""
        return read_number(raw, self.low, self.high, self.whole)

    def check(self, value: float) -> float | int:
        """A number already read (a widget's value) held to the same bounds; Refused with the same reason."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Refused("it is not a number")
        return self.read(repr(float(value)) if isinstance(value, float) else str(value))


def _field(
    key: str, label: str, unit: str, low: float, high: float, default: float, step: float, help: str, **more: object
) -> tuple[str, Field]:
    """A field keyed by its key; whole numbers only when its default is a whole number written without a point."""
    return key, Field(key, label, unit, low, high, default, step, help, **({"whole": isinstance(default, int)} | more))


@cache
def fields() -> dict[str, Field]:
    """Every number input of the planner by its key."""
    d = kv_memory.defaults()
    reasons = kv_memory.default_reasons()
    api = next(iter(serving.api_prices().values()))
    peak = build_vs_buy.default_peak_to_average()
    pay = payment.sources(str(d["gpu"]))
    typed = "a starting value: replace it with your own"
    table = [
        # the memory calculator
        _field("context", "Context per user T (tokens)", "tokens", 1, 10_000_000, 32768, 1024,
               "Prompt plus answer held in memory for each conversation.",
               reason="the primer's §4 example: 32K tokens"),
        _field("users", "Concurrent users", "users", 1, 1_000_000, 16, 1,
               "Conversations running at the same moment (each has its own KV cache).", reason=typed),
        _field("prefix", "Shared system prompt (tokens)", "tokens", 0, 10_000_000, 0, 256,
               "A prefix every conversation starts with; prefix caching stores it once per model copy.",
               reason="none: every prompt is the user's own"),
        _field("price", "Price per GPU-hour ($)", "$ per GPU-hour", 0.01, 1000.0, float(d["price_per_gpu_hour"]), 0.1,
               "What one of the chosen GPU costs for one hour: the GPU's typical public on-demand price (the median "
               "of its listed offers) until you type your own, which is kept for this GPU and in the link.",
               reason=reasons["price_per_gpu_hour"]),
        # the engine
        _field("util", "Memory the engine may use", "share of GPU memory", 0.5, 0.99,
               float(d["gpu_memory_utilization"]), 0.01, "vLLM's gpu_memory_utilization: the rest is reserve.",
               reason=reasons["gpu_memory_utilization"]),
        _field("eff", "Bandwidth efficiency (MBU)", "share of peak bandwidth", 0.1, 1.0,
               float(d["bandwidth_efficiency"]), 0.01,
               "Model bandwidth utilisation: the share of peak memory bandwidth decoding really gets.",
               reason=reasons["bandwidth_efficiency"]),
        _field("mfu", "Compute efficiency (MFU)", "share of peak FLOP/s", 0.05, 1.0, float(d["mfu"]), 0.01,
               "Model FLOPs utilisation: the share of the GPU's peak FLOP/s prefill and large batches really get.",
               reason=reasons["mfu"]),
        _field("overhead", "Fixed cost per layer and pass (µs)", "µs", 0.0, 10_000.0, float(d["layer_overhead_us"]),
               5.0, "Kernel launches and synchronisation: paid once per layer by every prefill and every decode step.",
               reason=reasons["layer_overhead_us"]),
        # the workload
        _field("rpm", "Peak requests per minute", "requests a minute", 0.01, 1_000_000.0, 60.0, 10.0,
               "Requests arriving per minute at the busiest hour.", reason=typed, flag="--rpm"),
        _field("in_flight", "Peak users waiting at once", "requests in flight", 1, 10_000_000, 100, 10,
               "People waiting on an answer at the same moment at the busiest hour (requests in flight), not the "
               "headcount: at the latency target's pace they send this many requests each time a request's seconds "
               "go by.", reason=typed),
        _field("prompt", "Mean prompt (input tokens)", "tokens", 1, 1_000_000, 1000, 100,
               "Tokens sent per request: question, context, history.", reason=typed, flag="--prompt"),
        _field("answer", "Mean answer (output tokens)", "tokens", 1, 100_000, 250, 50,
               "Tokens generated per request.", reason=typed, flag="--output"),
        _field("ttft", "First token within (seconds)", "s", 0.01, 600.0, 2.0, 0.5,
               "Latency target: time until the answer starts.", reason="about as long as people wait for a chat "
               "answer to start", flag="--ttft"),
        _field("speed", "At least tokens/s per user", "tokens/s", 0.1, 10_000.0, 20.0, 5.0,
               "Latency target: reading speed of the answer.", reason="faster than people read", flag="--tokens-per-s"),
        _field("peak", "Peak-to-average traffic", "×", 1.0, 1000.0, peak, 0.5,
               f"The busiest hour's rate over the month's average (default {peak:g}): the fleet is sized for the "
               "peak; an API bills the average. " + build_vs_buy.peak_to_average_reason(),
               reason=build_vs_buy.peak_to_average_reason()),
        _field("hours", "Hours served per month", "hours", 1.0, 744.0, HOURS_ALWAYS_ON, 10.0,
               f"Hours the GPUs are rented per month ({HOURS_ALWAYS_ON:g} = always on: a year's hours over twelve).",
               reason="always on"),
        _field("api_in", "API $ per 1M input tokens", "$ per 1M tokens", 0.0, 10_000.0, api.input_per_m, 0.05,
               "The API's list price for input.", reason=f"{api.provider} {api.model}'s list price, {api.date}"),
        _field("api_out", "API $ per 1M output tokens", "$ per 1M tokens", 0.0, 10_000.0, api.output_per_m, 0.05,
               "The API's list price for output.", reason=f"{api.provider} {api.model}'s list price, {api.date}"),
        # the budget by month
        _field("growth", "Growth in requests a month (%)", "% a month", -99.0, 1000.0, 0.0, 1.0,
               "Each month's requests over the month before, in per cent, compounding month on month.",
               reason="none: this month's traffic every month", flag="--growth"),
        _field("min_copies", "Fewest copies", "copies", 0, 100_000, 1, 1,
               "Autoscaling never goes below this many model copies (0 = off when idle).",
               reason="one copy stays warm"),
        _field("max_copies", "Most copies (0 = no maximum)", "copies", 0, 1_000_000, 0, 1,
               "Autoscaling never goes above this many copies; hours that need more are named as unserved.",
               reason="no maximum"),
        _field("scale_minutes", "Scale-up delay (minutes)", "minutes", 0.0, 60.0, 10.0, 1.0,
               "Minutes a new copy takes to load its weights and warm up: billed before its hour, serving nothing.",
               reason="a large model's weights take minutes to load"),
        *(
            _field(f"pay_{name}", label, unit, low, high, pay[name].value, step, help, reason=pay[name].text)
            for name, (label, unit, low, high, step, help) in PAY_FIELDS.items()
        ),
        # the traffic command
        _field("qps", "Requests per second", "requests/s", 0.0001, 1_000_000.0, 1.0, 1.0,
               "Poisson arrivals at this mean rate.", reason=typed, flag="--qps"),
        _field("concurrency", "Requests in flight", "requests", 1, 100_000, 64, 1,
               "A closed loop: each finished request is replaced at once.", reason=typed, flag="--concurrency"),
        _field("requests", "Requests simulated", "requests", 1, 100_000, 1000, 100,
               "How many requests the simulation runs.", reason="enough for a stable 95th percentile",
               flag="--requests"),
        _field("seed", "Random seed", "", 0, 2**32 - 1, 0, 1, "The arrivals' random draws.", reason="any fixed seed",
               flag="--seed"),
        _field("tp", "GPUs per model copy", "GPUs", 1, 64, 1, 1,
               "The model's weights and KV heads are split across this many GPUs working as one.", reason=typed,
               flag="--tp"),
    ]  # fmt: skip
    return dict(table)


PAY_FIELDS = {  # the ways to pay: label, unit, bounds, step, help; each GPU type has its own preset (core.plan.payment)
    "reserved_1y_discount": (
        "Reserved 1-year discount (share)", "share", 0.0, 0.99, 0.01, "Share off the on-demand price for a 1-year term."
    ),
    "reserved_3y_discount": (
        "Reserved 3-year discount (share)", "share", 0.0, 0.99, 0.01, "Share off the on-demand price for a 3-year term."
    ),
    "server_price": ("Price per 8-GPU server ($)", "$", 1.0, 1e8, 1000.0, "What one server costs to buy."),
    "depreciation_years": ("Depreciation (years)", "years", 0.5, 15.0, 0.5, "Straight-line, no resale value."),
    "gpu_watts": ("Watts per GPU", "W", 1.0, 5000.0, 10.0, "Each GPU's power at full load."),
    "server_watts": ("Server watts besides the GPUs", "W", 0.0, 50_000.0, 100.0, "CPUs, memory, network, fans."),
    "pue": ("PUE (facility ÷ IT power)", "×", 1.0, 5.0, 0.01, "Cooling and power losses on top of the IT load."),
    "dollars_per_kwh": (
        "Electricity ($ per kWh)", "$ per kWh", 0.001, 10.0, 0.005, "The data centre's price of power."
    ),
    "colo_per_kw_month": ("Colocation ($ per kW a month)", "$ per kW a month", 0.0, 10_000.0, 5.0,
                          "Space and power capacity."),
    "ops_share": ("Operations share", "share", 0.0, 5.0, 0.01, "Staff and support, as a share on top of the rest."),
}  # fmt: skip


def field(key: str) -> Field:
    """One number input by its key."""
    return fields()[key]


def argument(key: str) -> Callable[[str], float | int]:
    """An argparse type that reads a command argument by its field's rule: the same bounds and reasons as the page
    (argparse then names the flag: 'argument --rpm: 1e308 cannot be used: it is outside 0.01 … 1,000,000')."""
    f = field(key)

    def read(raw: str) -> float | int:
        try:
            return f.read(raw)
        except Refused as why:
            shown = raw if len(raw) <= 40 else f"{raw[:40]}… ({len(raw):,} characters)"
            raise argparse.ArgumentTypeError(f"{shown} cannot be used: {why} ({f.label})") from None

    read.__name__ = f.label  # what argparse names in its own messages
    return read
