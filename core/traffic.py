"""The planner from the command line: simulate one model copy under traffic and print one JSON object.

    python -m core.traffic --model ID|config.json --gpu ID --tp N --weight-bits 16|8|4 --kv fp16|bf16|fp8
        --engine vllm|trtllm|sglang --prompt P --output O (--offline | --concurrency C | --qps Q)
        [--requests N] [--seed S]

Prints output_tokens_per_s, requests_per_s, ttft_mean_s, ttft_p50_s, ttft_p95_s, itl_mean_s, itl_p50_s, itl_p95_s,
max_in_flight (the most requests the engine ran at once) and kv_tokens (the copy's KV cache in tokens). A closed loop
is reported in its steady state: its first C requests, all sent when the run opens, are left out as a warm-up when more
than C are simulated (as the calibration compares it with published closed-loop figures). A bad argument exits with
status 2 and one line on stderr naming the field; a run stopped by its cap exits with status 3 and says how far it got.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from core.plan import engines, kv_memory, model_config
from core.plan import serving as sv
from core.plan import simulator as sim

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


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line (no usage block) with status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise SystemExit(_fail(message))


def _fail(message: str, status: int = 2) -> int:
    print(f"error: {message}", file=sys.stderr)
    return status


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m core.traffic", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="a preset id or the path of a Hugging Face config.json")
    p.add_argument("--gpu", required=True, help=f"one of {', '.join(kv_memory.gpus())}")
    p.add_argument("--tp", required=True, type=int, help="GPUs per model copy (tensor parallelism)")
    p.add_argument("--weight-bits", required=True, type=int, choices=kv_memory.WEIGHT_BITS)
    p.add_argument("--kv", required=True, choices=KV_TYPES, help="KV-cache number type")
    p.add_argument("--engine", required=True, help=f"one of {', '.join(engines.profiles())}")
    p.add_argument("--prompt", required=True, type=int, help="prompt tokens per request")
    p.add_argument("--output", required=True, type=int, help="answer tokens per request")
    arrivals = p.add_mutually_exclusive_group(required=True)
    arrivals.add_argument("--offline", action="store_true", help="every request at t = 0")
    arrivals.add_argument(
        "--concurrency", type=int, help="a closed loop holding C requests in flight (its first C left out as a warm-up)"
    )
    arrivals.add_argument("--qps", type=float, help="Poisson arrivals at Q requests per second")
    p.add_argument("--requests", type=int, default=1000, help="requests to simulate (default 1,000)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the arrivals (default 0)")
    return p


def _model(value: str) -> model_config.ModelConfig:
    if value in model_config.presets():
        return model_config.presets()[value]
    path = Path(value)
    if not path.is_file():
        raise ValueError(f"model: {value!r} is neither a preset ({', '.join(model_config.presets())}) nor a file")
    report = model_config.parse_config_text(path.read_bytes(), name=path.stem)
    if report.config is None:
        raise ValueError(f"model: {value} cannot be read: {' '.join(report.errors)}")
    return report.config


def run(argv: list[str]) -> dict[str, float]:
    """Parse the arguments, simulate, and return the printed figures; ValueError names a bad field."""
    args = _parser().parse_args(argv)
    config = _model(args.model)
    if args.gpu not in kv_memory.gpus():
        raise ValueError(f"gpu: unknown GPU {args.gpu!r}; choose one of {', '.join(kv_memory.gpus())}")
    if args.tp < 1:
        raise ValueError(f"tp: must be at least 1, not {args.tp}")
    if args.qps is not None and not (math.isfinite(args.qps) and args.qps > 0):
        raise ValueError(f"qps: the request rate must be a finite number above 0, not {args.qps}")
    engine = engines.profile(args.engine)
    setup = sv.Setup(config, kv_memory.gpus()[args.gpu], args.tp, args.weight_bits, args.kv, sv.default_efficiency())
    if args.offline:
        traffic = sim.Traffic("offline", args.requests, args.prompt, args.output, seed=args.seed)
    elif args.concurrency is not None:
        traffic = sim.Traffic("closed", args.requests, args.prompt, args.output, concurrency=args.concurrency)
    else:
        traffic = sim.Traffic("poisson", args.requests, args.prompt, args.output, rate=args.qps, seed=args.seed)
    problem = sim.traffic_problem(traffic)
    if problem:
        raise ValueError(problem)
    limits = sim.engine_limits(setup, engine)
    if limits.kv_blocks < 1:
        raise ValueError(f"model: its weights leave no KV cache on {args.tp} × {setup.gpu.name} under {engine.name}")
    result = sim.simulate(setup, traffic, limits)
    if not result.complete:
        raise RuntimeError(result.note)
    warm_up = traffic.concurrency if traffic.mode == "closed" and traffic.requests > traffic.concurrency else 0
    summary = result.summary(skip=warm_up)
    return {key: summary[key] for key in KEYS}


def main(argv: list[str] | None = None) -> int:
    """Run the command; 0 on success, 2 on a bad argument, 3 when a cap stopped the simulation."""
    try:
        figures = run(sys.argv[1:] if argv is None else argv)
    except ValueError as error:
        return _fail(str(error))
    except RuntimeError as error:
        return _fail(f"the simulation did not finish: {error}", 3)
    print(json.dumps({key: (int(v) if key in ("max_in_flight", "kv_tokens") else v) for key, v in figures.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
