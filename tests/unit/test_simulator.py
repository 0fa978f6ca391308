"""The traffic simulator against what can be worked out by hand: one request alone, a closed loop of one, an M/D/1
queue; and its refusals, caps and determinism."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.plan import engines
from core.plan import kv_cache as kv
from core.plan import serving as sv
from core.plan import simulator as sim
from core.plan.model_config import presets

P = presets()
SETUP = sv.Setup(P["llama-3.1-8b"], kv.gpus()["h100-sxm"], 1, 16, "bf16", sv.default_efficiency())
VLLM = sim.engine_limits(SETUP, engines.profile("vllm"))


def test_one_request_alone_gets_its_prefill_then_one_decode_step_per_token():
    result = sim.simulate(SETUP, sim.Traffic("offline", 1, 1000, 20), VLLM)
    assert result.complete and result.ttft[0] == pytest.approx(float(sv.prefill_seconds(SETUP, 1000)), rel=1e-9)
    steps = sv.decode_step(SETUP, 1, 1000 + np.arange(1, 20)).seconds
    np.testing.assert_allclose(result.itl, steps, rtol=1e-9)  # every gap is one decode step at its context


def test_a_closed_loop_of_one_equals_the_static_model():
    result = sim.simulate(SETUP, sim.Traffic("closed", 5, 2000, 100, concurrency=1), VLLM)
    static = sv.generation_seconds(SETUP, 1, 2000, 100)
    np.testing.assert_allclose(result.e2e, static, rtol=1e-9)
    assert result.summary()["output_tokens_per_s"] == pytest.approx(100 / static, rel=1e-9)
    assert result.summary()["max_in_flight"] == 1


def test_constant_service_times_wait_as_in_an_m_d_1_queue():
    one_at_a_time = replace(VLLM, max_batch=1)  # every request takes the same time S: prefill + one decode step
    service = sv.generation_seconds(SETUP, 1, 100, 2)
    rho = 0.5
    result = sim.simulate(SETUP, sim.Traffic("poisson", 20_000, 100, 2, rate=rho / service, seed=7), one_at_a_time)
    waiting = result.ttft.mean() - float(sv.prefill_seconds(SETUP, 100))
    assert waiting == pytest.approx(rho * service / (2 * (1 - rho)), rel=0.05)  # Pollaczek-Khinchine, D service


def test_load_queues_first_tokens_and_slows_every_token():
    light = sim.simulate(SETUP, sim.Traffic("poisson", 300, 1000, 100, rate=1, seed=1), VLLM).summary()
    heavy = sim.simulate(SETUP, sim.Traffic("poisson", 300, 1000, 100, rate=60, seed=1), VLLM).summary()
    assert heavy["ttft_p95_s"] > 3 * light["ttft_p95_s"] and heavy["itl_mean_s"] > 1.5 * light["itl_mean_s"]
    assert heavy["max_in_flight"] > light["max_in_flight"]


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    traffic = sim.Traffic("poisson", 200, 500, 50, rate=20, seed=3)
    a, b = (sim.simulate(SETUP, traffic, VLLM).summary() for _ in range(2))
    assert a == b
    assert sim.simulate(SETUP, replace(traffic, seed=4), VLLM).summary() != a


def test_trtllm_reserves_whole_answers_and_vllm_preempts_when_the_cache_fills():
    small = replace(VLLM, kv_blocks=400)  # 6,400 tokens: a handful of 1,000 + 500-token requests
    vllm = sim.simulate(SETUP, sim.Traffic("offline", 30, 1000, 500), small)
    trt = sim.simulate(SETUP, sim.Traffic("offline", 30, 1000, 500), replace(small, reserve=1.0, preempts=False))
    assert vllm.complete and trt.complete
    assert vllm.running.max() > trt.running.max()  # admitting on the prompt alone lets more in at first ...
    assert trt.running.max() == 6400 // 1500  # ... reserving prompt and answer caps the batch at what fits whole
    assert (vllm.kv_blocks_used <= 400).all() and (trt.kv_blocks_used <= 400).all()


def test_queue_and_kv_use_are_logged_over_time():
    result = sim.simulate(SETUP, sim.Traffic("offline", 100, 1000, 50), replace(VLLM, max_batch=16))
    assert result.times.size == result.waiting.size == result.kv_blocks_used.size and np.all(np.diff(result.times) > 0)
    # the first step's 8,192-token budget takes eight whole prompts and part of a ninth
    assert result.waiting[0] == 100 - 9 and result.waiting[-1] == 0 and result.running.max() == 16


def test_a_capped_run_says_how_far_it_got():
    result = sim.simulate(SETUP, sim.Traffic("offline", 50, 1000, 200), VLLM, max_steps=20)
    assert not result.complete and "step cap (20 steps)" in result.note and "of 50 requests finished" in result.note


@pytest.mark.parametrize(
    ("traffic", "field"),
    [
        (sim.Traffic("poisson", 10, 100, 10, rate=0.0), "qps"),
        (sim.Traffic("poisson", 10, 100, 10, rate=float("inf")), "qps"),
        (sim.Traffic("poisson", 10, 100, 10, rate=float("nan")), "qps"),
        (sim.Traffic("offline", 100_001, 100, 10), "requests"),
        (sim.Traffic("closed", 10, 100, 10, concurrency=0), "concurrency"),
        (sim.Traffic("offline", 10, 0, 10), "prompt"),
        (sim.Traffic("offline", 10, 100, 0), "output"),
        (sim.Traffic("offline", 10, 10_000_000, 10), "prompt"),
    ],
)
def test_bad_inputs_are_refused_with_the_field_named(traffic, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        sim.simulate(SETUP, traffic, VLLM)
