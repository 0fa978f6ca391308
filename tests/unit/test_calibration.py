"""The serving-time model against published measurements: every point printed, the medians asserted (≤ 25 %), the
stored MFU/MBU/overhead defaults equal to the fit, and engines' logged KV capacities reproduced within 5 %."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.plan import calibration as cal
from core.plan import engines
from core.plan import kv_cache as kv
from core.plan import serving as sv

TARGET = 0.25


def test_the_set_covers_what_a_planner_needs():
    points = cal.points()
    assert len(points) >= 12
    assert any(cal.model(p.model).is_moe for p in points)
    assert any(p.tp > 1 for p in points)
    assert any(p.batch == 1 and p.metric == "latency" for p in points)
    assert any(p.kind == "throughput" and p.batch >= 256 for p in points)
    vendors = {kv.gpus()[p.gpu].name.split()[0] for p in points}
    assert {"AMD"} < vendors and len(vendors) >= 2
    for p in points:
        assert p.source.startswith("https://") and p.published and p.engine and p.engine_version
    assert {p.metric for p in points} == {"throughput", "latency"}


def test_predicted_vs_measured_medians_within_target(capsys):
    eff = sv.default_efficiency()
    errs = cal.errors(eff)
    with capsys.disabled():
        print(f"\n{'point':48s} {'measured':>12s} {'predicted':>12s} {'error':>7s}  unit")
        for point, err in zip(cal.points(), errs, strict=True):
            predicted = cal.predict(point, eff)
            print(f"{point.id:48s} {point.measured:12.4g} {predicted:12.4g} {err:+7.1%}  {cal.UNITS[point.kind]}")
        throughput, latency = cal.medians(errs)
        print(f"median |error|: throughput {throughput:.1%}, latency {latency:.1%} (target {TARGET:.0%}); {eff}")
    assert throughput <= TARGET
    assert latency <= TARGET


def test_stored_defaults_are_the_fit():
    fitted, pair = cal.fit()
    stored = sv.default_efficiency()
    assert fitted.mfu == pytest.approx(stored.mfu)
    assert fitted.mbu == pytest.approx(stored.mbu)
    assert fitted.layer_overhead_s == pytest.approx(stored.layer_overhead_s)
    assert pair == pytest.approx(cal.medians(cal.errors(stored)))


def test_stored_reread_share_is_the_fit_at_the_stored_efficiencies():
    """The share of a per-query-head kernel's repeated KV reads is fitted after MFU, MBU and the per-layer cost; the
    stored four are a fixed point of both fits."""
    stored = sv.default_efficiency()
    assert cal.fit_reread_share(stored) == pytest.approx(stored.reread_share)
    assert 0.0 < stored.reread_share < 1.0  # neither free nor a full read: the L2 cache serves part of the repeats


def test_the_old_tensorrt_llm_decode_kernel_reads_a_gqa_cache_once_per_query_head():
    """TensorRT-LLM before 0.8 (no XQA kernel): Llama-2-70B's 64 query heads over 8 KV heads read it 8 times; the
    7B (one query head per KV head) and newer versions once."""
    trt = engines.profile("trtllm")
    assert trt.kv_passes("0.6.1", cal.model("llama-2-70b")) == 8
    assert trt.kv_passes("0.6.1", cal.model("llama-2-7b")) == 1
    assert trt.kv_passes("0.19", cal.model("llama-2-70b")) == trt.kv_passes("NIM 1.8.0", cal.model("llama-2-70b")) == 1
    point = next(p for p in cal.points() if p.id == "trtllm-h100-llama-2-70b-tp4-b480-128-2048")
    eff = sv.default_efficiency()
    s = cal.setup_of(point, eff)
    assert s.kv_passes == 8 and sv.kv_read_factor(s) == pytest.approx(1 + 7 * eff.reread_share)
    once = cal.predict(point, eff) / cal.predict(point, replace(eff, reread_share=0.0))
    assert once < 0.8  # the repeated reads cost a fifth or more of its speed


def test_errors_move_with_the_settings():
    base = cal.errors(sv.default_efficiency())
    slower = cal.errors(sv.Efficiency(0.2, 0.4, 0.0))
    assert not np.allclose(base, slower)


def test_logged_kv_capacities_reproduced_within_5_percent(capsys):
    rows = cal.capacities()
    assert len(rows) >= 3
    with capsys.disabled():
        for row in rows:
            print(f"\n{row.id:32s} logged {row.logged:>9,} predicted {row.predicted:>9,} ({row.error:+.2%})", end="")
        print()
    for row in rows:
        assert abs(row.error) <= 0.05, row


def test_measured_faster_counts_the_throughput_points_the_model_under_predicts():
    errs = cal.errors(sv.default_efficiency())
    faster, measured = cal.measured_faster(errs)
    expected = [e < 0 for p, e in zip(cal.points(), errs, strict=True) if p.metric == "throughput"]
    assert (faster, measured) == (sum(expected), len(expected))
    assert cal.measured_faster(np.full(len(errs), 0.1)) == (0, measured)
