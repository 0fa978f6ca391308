"""Time of the traffic simulator: 1,000 requests through one model copy, for each arrival mode. Target ≤ 0.5 s each,
on one core.

Run: .venv/bin/python -m bench.simulator [repeats]. Llama-3.1-8B in BF16 on one H100 under vLLM's defaults, 1,000-token
prompts and 250-token answers: Poisson arrivals at 10 requests/s (a busy but stable copy), a closed loop of 64 in flight
and all 1,000 offline. Prints the median wall time over repeats, the simulated steps, then the target and PASS or MISS.
"""

from __future__ import annotations

import statistics
import sys
import time

from core.plan import engines, serving
from core.plan import simulator as sim
from core.plan.kv_cache import gpus
from core.plan.model_config import presets

TARGET_S = 0.5
TRAFFIC = (
    sim.Traffic("poisson", 1000, 1000, 250, rate=10.0, seed=0),
    sim.Traffic("closed", 1000, 1000, 250, concurrency=64),
    sim.Traffic("offline", 1000, 1000, 250),
)


def main(repeats: int = 5) -> None:
    setup = serving.Setup(presets()["llama-3.1-8b"], gpus()["h100-sxm"], 1, 16, "bf16", serving.default_efficiency())
    limits = sim.engine_limits(setup, engines.profile("vllm"))
    print(f"1,000 requests, Llama-3.1-8B BF16 on one H100, vLLM defaults, 1,000 + 250 tokens; median of {repeats}:")
    worst = 0.0
    for traffic in TRAFFIC:
        sim.simulate(setup, traffic, limits)  # warm-up
        times, steps = [], 0
        for _ in range(repeats):
            start = time.perf_counter()
            result = sim.simulate(setup, traffic, limits)
            times.append(time.perf_counter() - start)
            steps = result.steps
        median = statistics.median(times)
        worst = max(worst, median)
        print(f"  {traffic.mode:8s}: {median:6.3f} s  ({steps:,} steps simulated)")
    print(f"  target  : {TARGET_S:6.3f} s  -> {'PASS' if worst <= TARGET_S else 'MISS'}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
