"""The traffic simulator against published measurements under load: every point printed (throughput, time to first
token and inter-token latency, predicted against measured), and the targets asserted: throughput median |error| ≤ 10 %
with no point off by more than 1.5×, TTFT and ITL under load (≥ 50 in flight or ≥ 16 requests/s) median |error|
≤ 25 %, logged KV capacities within 5 % under the engines' memory rules."""

from __future__ import annotations

from functools import cache

import numpy as np

from core.plan import calibration as cal
from core.plan import engines
from core.plan import kv_cache as kv
from core.plan import serving as sv
from core.plan import simulator as sim

THROUGHPUT_MEDIAN = 0.10
THROUGHPUT_WORST = 1.5
LATENCY_MEDIAN = 0.25


@cache
def rows() -> list:
    return cal.online_errors(sv.default_efficiency())


def test_the_online_set_has_eight_points_from_two_engines_with_sources():
    points = cal.online_points()
    assert len(points) >= 8 and len({p.engine_id for p in points}) >= 2
    assert sum(p.loaded for p in points) >= 6
    for p in points:
        assert (
            p.source.startswith("https://") and p.published and p.engine_version and p.statistic in {"mean", "median"}
        )


def _throughput_errors(capsys) -> np.ndarray:
    eff = sv.default_efficiency()
    static = [(p.id, e) for p, e in zip(cal.points(), cal.errors(eff), strict=True) if p.metric == "throughput"]
    online = [(p.id, e["throughput"]) for p, _, e in rows() if "throughput" in e]
    with capsys.disabled():
        print(f"\n{'throughput point':50s} {'error':>8s}")
        for name, err in static + online:
            print(f"{name:50s} {err:+8.1%}")
    return np.array([e for _, e in static + online])


def test_throughput_median_within_10_percent(capsys):
    errs = _throughput_errors(capsys)
    with capsys.disabled():
        print(f"throughput median |error| {np.median(np.abs(errs)):.1%} (target {THROUGHPUT_MEDIAN:.0%})")
    assert np.median(np.abs(errs)) <= THROUGHPUT_MEDIAN


def test_no_throughput_point_off_by_more_than_one_and_a_half(capsys):
    """TensorRT-LLM 0.6.1's Llama-2-70B points were 1.7-1.8x too fast until its decode kernel (one pass over the KV
    cache per query head, before XQA in 0.8) was modelled: core.plan.engines, Efficiency.reread_share."""
    ratios = 1 + _throughput_errors(capsys)
    assert np.all((ratios <= THROUGHPUT_WORST) & (ratios >= 1 / THROUGHPUT_WORST))


def _latency(capsys, name: str) -> float:
    loaded = [(p, got, e) for p, got, e in rows() if p.loaded]
    with capsys.disabled():
        print(f"\n{'online point':45s} {'load':>8s} {'measured':>9s} {'predicted':>9s} {'error':>8s}  ({name}, s)")
        for p, got, e in rows():
            load = f"C={p.concurrency}" if p.concurrency else f"{p.rate:g}/s"
            measured, predicted = getattr(p, f"{name}_s"), getattr(got, f"{name}_s")
            mark = "" if p.loaded else "  (not under load)"
            print(f"{p.id:45s} {load:>8s} {measured:9.4f} {predicted:9.4f} {e[name]:+8.1%}{mark}")
        median = float(np.median([abs(e[name]) for _, _, e in loaded]))
        print(f"{name} under load: median |error| {median:.1%} over {len(loaded)} points (target {LATENCY_MEDIAN:.0%})")
    return median


def test_inter_token_latency_under_load_within_25_percent(capsys):
    assert _latency(capsys, "itl") <= LATENCY_MEDIAN


def test_time_to_first_token_under_load_within_25_percent(capsys):
    """Closed loops in their steady state (calibration.WARM_UP); TensorRT-LLM's cache after the buffers its logged run
    held (engine_profiles.json, runtime_gib), which sets how many long requests decode at once."""
    assert _latency(capsys, "ttft") <= LATENCY_MEDIAN


def test_logged_kv_capacities_within_5_percent_under_the_engines_rules():
    rows_ = cal.capacities()
    assert {r.engine for r in rows_} >= {"vLLM", "SGLang", "TensorRT-LLM"}
    assert all(abs(r.error) <= 0.05 for r in rows_)


def test_the_published_closed_loop_is_the_steady_state_not_the_opening_burst():
    """calibration.WARM_UP: Llama-3.3-70B at 50 in flight was published far below what counting the burst gives."""
    point = next(p for p in cal.online_points() if p.id.endswith("70b-fp8-5000-500-c50"))
    engine, config = engines.profile(point.engine_id), cal.model(point.model)
    setup = sv.Setup(config, kv.gpus()[point.gpu], point.tp, point.weight_bits, point.kv_dtype, sv.default_efficiency())
    result = sim.simulate(setup, point.traffic(), sim.engine_limits(setup, engine))
    with_burst, steady = result.summary()["ttft_mean_s"], result.summary(skip=point.concurrency)["ttft_mean_s"]
    assert with_burst > 2 * point.ttft_s and abs(steady - point.ttft_s) <= LATENCY_MEDIAN * point.ttft_s
    assert cal.predict_online(point, sv.default_efficiency()).ttft_s == steady
