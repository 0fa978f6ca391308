"""The planner from the command line: simulate one model copy under traffic and print one JSON object.

    python -m core.traffic --model ID|config.json --gpu ID --tp N --weight-bits 16|8|4 --kv fp16|bf16|fp8
        --engine vllm|trtllm|sglang --prompt P --output O (--offline | --concurrency C | --qps Q)
        [--requests N] [--seed S]

Prints output_tokens_per_s, requests_per_s, ttft_mean_s, ttft_p50_s, ttft_p95_s, itl_mean_s, itl_p50_s, itl_p95_s,
max_in_flight (the most requests the engine ran at once) and kv_tokens (the copy's KV cache in tokens). A closed loop
is reported in its steady state: its first C requests, all sent when the run opens, are left out as a warm-up when more
than C are simulated (as the calibration compares it with published closed-loop figures).

Every number is read by the cost page's own rule for its field (core.plan.fields), and a config.json's size is checked
before it is read. Exit codes (core.cli): 0 the figures; 1 the copy cannot run the requests (its weights leave no KV
cache, or one request needs more than the cache holds), in one line naming the limit; 2 a bad argument, in one line
naming it; 3 the simulation stopped at its cap, saying how far it got. Never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

from core.cli import BAD_ARGUMENT, CAPPED, NO_PLAN, OK, OneLineParser, fail
from core.plan import engines, kv_memory
from core.plan import serving as sv
from core.plan import simulator as sim
from core.plan.fields import argument, field
from core.plan.model_config import ModelConfig, model_argument, presets

PROG = "python -m core.traffic"
KEYS = (
    "output_tokens_per_s",
    "requests_per_s",
    "ttft_mean_s",
    "ttft_p50_s",
    "ttft_p95_s",
    "itl_mean_s",
    "itl_p50_s",
    "itl_p95_s",
    "max_in_flight",
    "kv_tokens",
)
KV_TYPES = ("fp16", "bf16", "fp8")


class CannotRun(Exception):
    """The copy cannot run these requests at all (exit 1); the message names the limit."""


def _model(text: str) -> ModelConfig:
    try:
        return model_argument(text)
    except ValueError as why:
        raise argparse.ArgumentTypeError(str(why)) from None


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, type=_model, help=f"a preset id ({', '.join(presets())}) or a config.json")
    p.add_argument("--gpu", required=True, choices=list(kv_memory.gpus()), help="the GPU preset")
    p.add_argument("--tp", required=True, type=argument("tp"), help="GPUs per model copy (tensor parallelism)")
    p.add_argument("--weight-bits", required=True, type=int, choices=kv_memory.WEIGHT_BITS)
    p.add_argument("--kv", required=True, choices=KV_TYPES, help="KV-cache number type")
    p.add_argument("--engine", required=True, choices=list(engines.profiles()), help="the serving engine's rules")
    p.add_argument("--prompt", required=True, type=argument("prompt"), help="prompt tokens per request")
    p.add_argument("--output", required=True, type=argument("answer"), help="answer tokens per request")
    arrivals = p.add_mutually_exclusive_group(required=True)
    arrivals.add_argument("--offline", action="store_true", help="every request at t = 0")
    arrivals.add_argument(
        "--concurrency",
        type=argument("concurrency"),
        help="a closed loop holding C requests in flight (its first C left out as a warm-up)",
    )
    arrivals.add_argument("--qps", type=argument("qps"), help="Poisson arrivals at Q requests per second")
    p.add_argument(
        "--requests", type=argument("requests"), default=field("requests").default, help="requests to simulate"
    )
    p.add_argument("--seed", type=argument("seed"), default=field("seed").default, help="random seed of the arrivals")
    return p


def run(argv: list[str]) -> dict[str, float]:
    """Parse the arguments, simulate, and return the printed figures. SystemExit(2) names a bad argument, CannotRun
    a copy that cannot run the requests, RuntimeError a run its cap stopped."""
    args = _parser().parse_args(argv)
    config = args.model
    if problem := kv_memory.tp_problem(config, args.tp):
        fail(PROG, f"argument --tp: {problem}", BAD_ARGUMENT)
    engine = engines.profile(args.engine)
    setup = sv.Setup(config, kv_memory.gpus()[args.gpu], args.tp, args.weight_bits, args.kv, sv.default_efficiency())
    if args.offline:
        traffic = sim.Traffic("offline", args.requests, args.prompt, args.output, seed=args.seed)
    elif args.concurrency is not None:
        traffic = sim.Traffic("closed", args.requests, args.prompt, args.output, concurrency=args.concurrency)
    else:
        traffic = sim.Traffic("poisson", args.requests, args.prompt, args.output, rate=args.qps, seed=args.seed)
    if problem := sim.traffic_problem(traffic):
        fail(PROG, problem, BAD_ARGUMENT)
    limits = sim.engine_limits(setup, engine)
    if limits.kv_blocks < 1:
        raise CannotRun(f"its weights leave no KV cache on {args.tp} × {setup.gpu.name} under {engine.name}")
    try:
        result = sim.simulate(setup, traffic, limits)
    except ValueError as why:  # one request longer than the cache holds
        raise CannotRun(str(why).removeprefix("prompt: ")) from None
    if not result.complete:
        raise RuntimeError(result.note)
    warm_up = traffic.concurrency if traffic.mode == "closed" and traffic.requests > traffic.concurrency else 0
    summary = result.summary(skip=warm_up)
    return {key: summary[key] for key in KEYS}


def main(argv: list[str] | None = None) -> int:
    """Run the command: 0 with the figures, 1 when the copy cannot run the requests, 2 on a bad argument, 3 when a cap
    stopped the simulation."""
    try:
        figures = run(sys.argv[1:] if argv is None else argv)
    except CannotRun as why:
        fail(PROG, f"cannot run: {why}", NO_PLAN)
    except RuntimeError as why:
        fail(PROG, f"the simulation did not finish: {why}", CAPPED)
    print(json.dumps({key: (int(v) if key in ("max_in_flight", "kv_tokens") else v) for key, v in figures.items()}))
    return OK


if __name__ == "__main__":
    raise SystemExit(main())
