"""The planner's search as a command, for scripts and spreadsheets: one JSON object on stdout.

    python -m core.plan --model llama-3.1-70b --rpm 300 --prompt 1500 --output 400 --ttft 2 --tokens-per-s 20
        [--gpu h100-sxm --gpu mi300x] [--tp 4] [--price h100-sxm=2.49]
        [--workbook plan.xlsx] [--months 12|24|36] [--growth PERCENT] [--shape office-hours|24-7|overnight]

--model is a preset id or a config.json file; no --gpu searches every GPU preset; --tp pins the GPUs per copy;
--price sets your own $/GPU-hour for a GPU (others keep their typical public price). The object holds the cheapest
plan's gpu, gpus_per_copy, copies, gpus, monthly_cost, cost_per_m_input, cost_per_m_output, cost_range ([low, high]
monthly, from the calibration's 25th and 75th percentile errors) and runners_up (the other plans, same keys,
cheapest first); then the budget of that plan (core.plan.budget) over --months (default 12) at --growth percent a
month (default 0), its fleet fixed and sized for the peak, the day following --shape (default office-hours, the
workplace assistant the planner's peak-to-average default describes): realistic_cost_per_m_output (month 1's $ per
1M output tokens on that day, on-demand), way_to_pay (the cheapest over the horizon of on-demand, reserved-1y,
reserved-3y, own, api) and monthly_cost_by_month (that way's cost each month). --workbook also writes the budget as
an xlsx of live formulas (core.plan.workbook). A workload no allowed GPU can serve, or a bad argument, exits non-zero
with one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from core.plan import budget as bg
from core.plan import daily as dl
from core.plan import search as se
from core.plan import serving as sv
from core.plan.kv_memory import gpus
from core.plan.model_config import MAX_CONFIG_BYTES, ModelConfig, parse_config_text, presets

PROG = "python -m core.plan"


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line (no usage block) and exits 2."""

    def error(self, message: str) -> NoReturn:
        fail(message, 2)


def fail(message: str, code: int) -> NoReturn:
    """One line on stderr, then exit with `code`."""
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    raise SystemExit(code)


def _positive(kind: type, what: str) -> Callable[[str], float]:
    """A reader for a positive, finite number of `kind` (int or float), naming the argument when it refuses."""

    def read(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, not {text!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"{what} must be a positive number, not {text!r}")
        return value

    return read


def _price(text: str) -> tuple[str, float]:
    """GPU_ID=DOLLARS_PER_HOUR as (GPU id, price); the engine refuses a price that is not positive and finite."""
    gpu, sep, value = text.partition("=")
    if not sep or not gpu:
        raise argparse.ArgumentTypeError(f"--price takes GPU_ID=DOLLARS_PER_HOUR (e.g. h100-sxm=2.49), not {text!r}")
    try:
        return gpu, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"the price for {gpu} must be a number of dollars per GPU-hour, not {value!r}"
        ) from None


def _growth(text: str) -> float:
    """A monthly growth in percent: a finite number above -100."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--growth must be a percentage, not {text!r}") from None
    problem = bg.growth_problem(bg.Growth(value, bg.HORIZONS[0]))
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


def _xlsx(text: str) -> Path:
    """A path ending in .xlsx in a folder that exists."""
    path = Path(text)
    if path.suffix.lower() != ".xlsx":
        raise argparse.ArgumentTypeError(f"--workbook must name an .xlsx file, not {text!r}")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"the folder {str(path.parent)!r} does not exist")
    return path


def parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    p = _Parser(prog=PROG, description="The cheapest GPU plan that meets a workload's peak rate and latency target.")
    p.add_argument("--model", required=True, help=f"a preset id ({', '.join(presets())}) or a config.json file")
    p.add_argument("--rpm", required=True, type=_positive(float, "--rpm"), help="peak requests per minute")
    p.add_argument("--prompt", required=True, type=_positive(int, "--prompt"), help="mean prompt tokens")
    p.add_argument("--output", required=True, type=_positive(int, "--output"), help="mean answer tokens")
    p.add_argument("--ttft", required=True, type=_positive(float, "--ttft"), help="first token within, seconds")
    p.add_argument(
        "--tokens-per-s", required=True, type=_positive(float, "--tokens-per-s"), help="tokens/s each user sees"
    )
    p.add_argument("--gpu", action="append", choices=list(gpus()), help="allow this GPU (repeat; default: all)")
    p.add_argument("--tp", type=int, choices=se.TP_CHOICES, help="pin the GPUs per model copy")
    p.add_argument("--price", action="append", type=_price, default=[], help="GPU_ID=DOLLARS_PER_HOUR (repeat)")
    p.add_argument("--workbook", type=_xlsx, help="also write the budget as an xlsx of live formulas")
    p.add_argument("--months", type=int, choices=bg.HORIZONS, default=12, help="the budget's horizon (default 12)")
    p.add_argument("--growth", type=_growth, default=0.0, help="monthly growth of requests in percent (default 0)")
    p.add_argument("--shape", choices=list(dl.SHAPES), default="office-hours", help="the day's traffic shape")
    return p


def load_model(name: str) -> ModelConfig:
    """A preset by id, or a config.json read from a file; anything else fails in one line."""
    if name in presets():
        return presets()[name]
    path = Path(name)
    if not path.is_file():
        fail(f"--model {name!r} is neither a preset ({', '.join(presets())}) nor a config.json file", 2)
    if path.stat().st_size > MAX_CONFIG_BYTES:
        fail(f"{name} is larger than {MAX_CONFIG_BYTES:,} bytes; a config.json is a few kB", 2)
    report = parse_config_text(path.read_bytes(), name=path.stem)
    if report.config is None:
        fail(f"{name}: {' '.join(report.errors)}", 2)
    return report.config


def main(argv: list[str] | None = None) -> int:
    """Parse, search, print one JSON object; exit 1 when no allowed GPU can serve the workload, 2 on bad input."""
    args = parser().parse_args(argv)
    config = load_model(args.model)
    load = sv.Workload(args.rpm, args.prompt, args.output, args.ttft, args.tokens_per_s)
    own = dict(args.price)
    if len(own) != len(args.price):
        fail("--price names the same GPU twice", 2)
    try:
        result = se.search(config, load, gpus=args.gpu, tp=args.tp, prices=own)
    except ValueError as error:
        fail(str(error), 2)
    if result.plan is None:
        fail(f"no plan: {result.problem}", 1)
    plan = result.plan
    model_id = args.model if args.model in presets() else None
    curve, fleet, growth = dl.shape(args.shape), dl.Fleet(), bg.Growth(args.growth, args.months)
    payment = bg.default_payment(plan.gpu.id, config, model_id, load)
    budget = bg.budget(
        config, model_id, load, plan, curve, fleet, growth, payment, gpus=args.gpu, tp=args.tp, prices=own
    )
    if args.workbook is not None:
        write_workbook(args, config, load, plan, budget, (curve, fleet, growth, payment), own)
    out = plan.summary() | {"runners_up": [c.summary() for c in result.runners_up]}
    out |= {
        "realistic_cost_per_m_output": round(budget.realistic_per_m_output, 4),
        "way_to_pay": budget.cheapest,
        "monthly_cost_by_month": [round(float(v), 2) for v in budget.monthly[budget.cheapest]],
    }
    print(json.dumps(out))
    return 0


def write_workbook(args, config: ModelConfig, load: sv.Workload, plan: se.Candidate, budget: bg.Budget, how, own):
    """The budget as an xlsx of live formulas at --workbook; a path that cannot be written fails in one line."""
    from core.plan import workbook as wbk  # XlsxWriter only when a workbook is asked for

    curve, fleet, growth, payment = how
    name = f"{config.name}, {load.requests_per_minute:g} requests a minute at the peak"
    typed = frozenset({"price_per_gpu_hour"} if plan.gpu.id in own else set())
    inputs = wbk.BudgetInputs(
        name, config.name, plan.gpu.id, plan.tp, se.default_settings().engine, load, dl.Capacity.of(plan, load),
        curve, fleet, growth, payment, args.shape, typed,
    )  # fmt: skip
    try:
        args.workbook.write_bytes(wbk.workbook_bytes([(name, inputs, budget)]))
    except OSError as error:
        fail(f"--workbook {str(args.workbook)!r} cannot be written: {error.strerror or error}", 2)


if __name__ == "__main__":
    sys.exit(main())
