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
an xlsx of live formulas (core.plan.workbook).

Every number is read by the cost page's own rule for its field (core.plan.fields) and the workbook's path is checked
before any work starts. Exit codes (core.cli): 0 a plan; 1 no plan exists for the workload, in one line on stderr
naming the limit and the nearest plan; 2 a bad argument, in one line naming it. Never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

from core.cli import BAD_ARGUMENT, NO_PLAN, OneLineParser, fail, writable
from core.plan import budget as bg
from core.plan import daily as dl
from core.plan import search as se
from core.plan import serving as sv
from core.plan.fields import argument, field
from core.plan.kv_memory import gpus
from core.plan.model_config import ModelConfig, model_argument, presets

PROG = "python -m core.plan"


def _price(text: str) -> tuple[str, float]:
    """GPU_ID=DOLLARS_PER_HOUR as (GPU id, price), the price read by the page's price field's rule."""
    gpu, sep, value = text.partition("=")
    if not sep or not gpu:
        raise argparse.ArgumentTypeError(f"it takes GPU_ID=DOLLARS_PER_HOUR (e.g. h100-sxm=2.49), not {text!r}")
    if gpu not in gpus():
        raise argparse.ArgumentTypeError(f"{gpu!r} is not a GPU preset ({', '.join(gpus())})")
    try:
        return gpu, argument("price")(value)
    except argparse.ArgumentTypeError as why:
        raise argparse.ArgumentTypeError(f"the price for {gpus()[gpu].name}: {why}") from None


def _model(text: str) -> ModelConfig:
    try:
        return model_argument(text)
    except ValueError as why:
        raise argparse.ArgumentTypeError(str(why)) from None


def parser() -> argparse.ArgumentParser:
    """The command's arguments; every number is read by the cost page's own rule for its field (core.plan.fields)."""
    p = OneLineParser(
        prog=PROG, description="The cheapest GPU plan that meets a workload's peak rate and latency target."
    )
    p.add_argument(
        "--model", required=True, type=_model, help=f"a preset id ({', '.join(presets())}) or a config.json file"
    )
    for key, what in (
        ("rpm", "peak requests per minute"),
        ("prompt", "mean prompt tokens"),
        ("answer", "mean answer tokens"),
        ("ttft", "first token within, seconds"),
        ("speed", "tokens/s each user sees"),
    ):
        p.add_argument(field(key).flag, required=True, type=argument(key), dest=key, help=what)
    p.add_argument("--gpu", action="append", choices=list(gpus()), help="allow this GPU (repeat; default: all)")
    p.add_argument("--tp", type=int, choices=se.TP_CHOICES, help="pin the GPUs per model copy")
    p.add_argument("--price", action="append", type=_price, default=[], help="GPU_ID=DOLLARS_PER_HOUR (repeat)")
    p.add_argument("--workbook", type=writable(".xlsx"), help="also write the budget as an xlsx of live formulas")
    p.add_argument("--months", type=int, choices=bg.HORIZONS, default=12, help="the budget's horizon (default 12)")
    p.add_argument(
        "--growth", type=argument("growth"), default=0.0, help="monthly growth of requests in percent (default 0)"
    )
    p.add_argument("--shape", choices=list(dl.SHAPES), default="office-hours", help="the day's traffic shape")
    return p


def main(argv: list[str] | None = None) -> int:
    """Parse, search, print one JSON object; exit 1 when no allowed GPU can serve the workload (the line names the
    nearest plan), 2 on a bad argument (the line names it). Every check runs before the search."""
    args = parser().parse_args(argv)
    config = args.model
    load = sv.Workload(args.rpm, args.prompt, args.answer, args.ttft, args.speed)
    own = dict(args.price)
    if len(own) != len(args.price):
        fail(PROG, "argument --price: it names the same GPU twice", BAD_ARGUMENT)
    if problem := bg.growth_problem(bg.Growth(args.growth, args.months), load.requests_per_minute):
        fail(PROG, f"argument --growth: {problem} (--months {args.months})", BAD_ARGUMENT)
    try:
        result = se.search(config, load, gpus=args.gpu, tp=args.tp, prices=own)
    except ValueError as error:
        fail(PROG, str(error), BAD_ARGUMENT)
    if result.plan is None:
        fail(PROG, f"no plan: {result.problem}", NO_PLAN)
    plan = result.plan
    model_id = next((key for key, preset in presets().items() if preset == config), None)
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
        name,
        config.name,
        plan.gpu.id,
        plan.tp,
        se.default_settings().engine,
        load,
        dl.Capacity.of(plan, load),
        curve,
        fleet,
        growth,
        payment,
        args.shape,
        typed,
    )
    try:
        args.workbook.write_bytes(wbk.workbook_bytes([(name, inputs, budget)]))
    except OSError as error:
        fail(
            PROG,
            f"argument --workbook: {str(args.workbook)!r} cannot be written: {error.strerror or error}",
            BAD_ARGUMENT,
        )


if __name__ == "__main__":
    sys.exit(main())
