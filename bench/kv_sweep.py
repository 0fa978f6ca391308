"""Time of the calculator's sweeps: a 1,000-point context sweep of the KV cache for 4 models (the main chart) and a
1,000-point batch sweep of the serving-time model for 4 models (decode step per batch size). Target ≤ 5 ms each.

Run: .venv/bin/python -m bench.kv_sweep [repeats]. Prints the median over repeats, for the one-call sweep of all four
models and for four separate per-model sweeps (16-token block rounding, sliding-window caps, MoE routing, TP
all-reduces), then the target and PASS or MISS.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from core.plan import serving
from core.plan.kv_cache import gpus, kv_sweep, kv_sweep_many
from core.plan.model_config import presets

MODELS = ("llama-3.1-70b", "mistral-7b", "gemma-2-27b", "deepseek-v3")  # GQA, sliding window, mixed layers, MLA
TARGET_MS = 5.0


def median_ms(work: object, repeats: int) -> float:
    """Median wall time of work() in milliseconds after one warm-up call."""
    work()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(repeats: int = 200) -> None:
    configs = [presets()[name] for name in MODELS]
    contexts = np.unique(np.geomspace(256, 1_048_576, 1000).round().astype(np.int64))  # 1,000 distinct lengths
    assert len(contexts) == 1000
    together = median_ms(lambda: kv_sweep_many(configs, contexts, "fp16", block=16), repeats)
    separate = median_ms(lambda: [kv_sweep(c, contexts, "fp16", block=16) for c in configs], repeats)
    print(f"1,000-point context sweep, {len(configs)} models ({', '.join(MODELS)}), median of {repeats}:")
    print(f"  one vectorised call : {together:7.3f} ms")
    print(f"  four per-model calls: {separate:7.3f} ms")
    verdict = "PASS" if max(together, separate) <= TARGET_MS else "MISS"
    print(f"  target              : {TARGET_MS:7.3f} ms  -> {verdict}")

    eff = serving.default_efficiency()
    setups = [  # each model on the GPUs per copy it needs: one H100 for the dense ones, 8 for the 671B MoE
        serving.Setup(c, gpus()["h100-sxm"], tp, 16, "fp16", eff) for c, tp in zip(configs, (4, 1, 1, 8), strict=True)
    ]
    batches = np.arange(1, 1001)
    decode = median_ms(lambda: [serving.decode_step(s, batches, 4096).seconds for s in setups], repeats)
    print(f"1,000-point batch sweep of the decode-step time model, {len(setups)} models at 4,096 tokens:")
    print(f"  four per-model calls: {decode:7.3f} ms")
    print(f"  target              : {TARGET_MS:7.3f} ms  -> {'PASS' if decode <= TARGET_MS else 'MISS'}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
