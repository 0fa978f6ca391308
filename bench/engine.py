"""The full ablation sweep (16 head subsets + attention off × the whole corpus, every slot scored) in the numpy engine
against the same sweep in torch with the same weights, batched as Hugging Face-style code runs it (one padded batch of
the corpus per configuration) and one sentence at a time. Targets: numpy sweep ≤ 50 ms; batched torch / numpy ≥ 3×.

Run: .venv/bin/python -m bench.engine [repeats]. Prints medians after a warm-up, checks that both sweeps give the same
scores, and lists the recorded training time of every shipped model (`--train` also retrains one model, timed).
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np
import torch

from core.explain.analysis import ablation_sweep
from core.explain.training import torch_model, train
from core.explain.transformer import Intervention, forward
from core.explain.weights import family, trained_model
from core.explain.world import corpus

TARGET_MS = 50.0
TARGET_BATCHED_RATIO = 3.0


def timings_ms(work: object, repeats: int) -> tuple[float, float, float]:
    """Median and best wall time and median CPU time of work(), in milliseconds, after one warm-up call. On a shared
    machine the best wall time and the CPU time are the least disturbed by other processes."""
    work()
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        work()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return statistics.median(wall), min(wall), statistics.median(cpu)


def torch_sweep(module: torch.nn.Module, removed_sets: tuple, batched: bool = False) -> dict[str, np.ndarray]:
    """The same sweep with the torch module, every slot scored the same way: one sentence at a time, or (batched) the
    whole right-padded corpus in one call per configuration, as a Hugging Face-style batched forward does."""
    data = corpus()
    rule, bigram, copula = [], [], []
    held = data.slot_copula & data.slot_held_out
    ids = torch.tensor(data.ids)
    with torch.no_grad():
        for removed in removed_sets:
            intervention = Intervention(attention="off") if removed is None else Intervention(zero_heads=removed)
            if batched:
                top = module(ids, intervention).argmax(-1).numpy()[data.slot_sentence, data.slot_position]
            else:
                tops = [
                    module(torch.tensor(data.ids[row : row + 1, :length]), intervention)[0].argmax(-1).numpy()
                    for row, length in enumerate(data.lengths)
                ]
                top = np.array([tops[s][p] for s, p in zip(data.slot_sentence, data.slot_position, strict=True)])
            right_class = (top[:, None] == data.slot_class).any(axis=1)
            rule.append(right_class[held].mean())
            copula.append(right_class[data.slot_copula].mean())
            bigram.append((top == data.slot_target)[~data.slot_copula].mean())
    return {"rule_accuracy": np.array(rule), "bigram_top1": np.array(bigram), "copula_class_accuracy": np.array(copula)}


def main(argv: list[str]) -> None:
    repeats = int(next((a for a in argv if a.isdigit()), "20"))
    torch.set_num_threads(1)  # tiny tensors: one thread is torch's fastest setting here
    model = trained_model()
    data = corpus()
    sweep = ablation_sweep(model)
    print(f"corpus: {len(data.types)} sentence types, {data.n_slots} slots; {len(sweep.removed)} configurations")

    numpy_ms, numpy_best, numpy_cpu = timings_ms(lambda: ablation_sweep(model), repeats)
    one_pass = timings_ms(lambda: forward(model, data.ids, lengths=data.lengths), repeats)
    module = torch_model(model)
    batched = timings_ms(lambda: torch_sweep(module, sweep.removed, batched=True), repeats)
    single = timings_ms(lambda: torch_sweep(module, sweep.removed), max(1, repeats // 10))

    for is_batched in (True, False):
        for name, values in torch_sweep(module, sweep.removed, batched=is_batched).items():
            if not np.array_equal(values, getattr(sweep, name)):
                raise SystemExit(f"numpy and torch sweeps disagree on {name}")
    print("numpy and torch sweeps (batched and per sentence) give identical scores for every configuration")
    print(f"load average (1 min) {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; wall median / best, CPU median")
    n = len(sweep.removed)
    rows = (
        (f"numpy sweep ({n} configurations stacked, {len(data.types)} sequences)", (numpy_ms, numpy_best, numpy_cpu)),
        ("  one numpy forward pass over the corpus, full trace", one_pass),
        (f"torch sweep batched ({n} calls, padded corpus each)", batched),
        (f"torch sweep per sentence ({n * len(data.types)} calls)", single),
    )
    for label, (median, best, cpu) in rows:
        print(f"{label:<55} {median:8.2f} / {best:8.2f} / {cpu:8.2f} ms")
    ours = (numpy_ms, numpy_best, numpy_cpu)
    for label, theirs in (("batched torch", batched), ("per-sentence torch", single)):
        ratios = [t / o for t, o in zip(theirs, ours, strict=True)]
        print(f"ratio {label} / numpy: {ratios[0]:.1f}× wall median, {ratios[1]:.1f}× best wall, {ratios[2]:.1f}× CPU")
    for label, value in (("wall median", numpy_ms), ("best wall", numpy_best), ("CPU median", numpy_cpu)):
        print(
            f"target numpy sweep ≤ {TARGET_MS:.0f} ms, {label}: {value:.1f} ms "
            f"{'PASS' if value <= TARGET_MS else 'MISS'}"
        )
    ratio = batched[2] / numpy_cpu  # CPU time: the figure least disturbed by other processes on a shared machine
    verdict = "PASS" if ratio >= TARGET_BATCHED_RATIO else "MISS"
    print(f"target batched torch / numpy ≥ {TARGET_BATCHED_RATIO:.0f}× (CPU median): {ratio:.1f}× {verdict}")

    seconds = [model.metadata["training_seconds"], *(m.metadata["training_seconds"] for m in family())]
    print(
        f"recorded training time per model (1 thread, {model.metadata['steps']} steps): "
        f"main {seconds[0]:.1f} s, family {min(seconds[1:]):.1f}–{max(seconds[1:]):.1f} s "
        f"(target ≤ 60 s: {'PASS' if max(seconds) <= 60 else 'MISS'})"
    )
    if "--train" in argv:
        start, cpu = time.perf_counter(), time.process_time()
        retrained, _ = train(int(model.metadata["seed"]))
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        same = all(np.array_equal(retrained.params[k], model.params[k]) for k in model.params)
        print(f"retrained the main model in {elapsed:.1f} s wall, {cpu:.1f} s CPU; identical weights: {same}")


if __name__ == "__main__":
    main(sys.argv[1:])
