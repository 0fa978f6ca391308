"""The serving-time model on hand-computed cases: a dense 8B and a MoE decode step, a prefill, a TP all-reduce; the
workload's bill and the build-vs-buy break-even."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from core.plan import kv_cache as kv
from core.plan import serving as sv
from core.plan.model_config import presets

P = presets()
H100 = kv.gpus()["h100-sxm"]
EFF = sv.Efficiency(mfu=0.5, mbu=0.8)  # no fixed overhead: the roofline alone
LLAMA_8B_PARAMS = 8_030_261_248  # Llama 3.1 8B, published count
LLAMA_EMBEDDING = 128_256 * 4096  # the input table a step only gathers rows of


def setup(model: str, tp: int = 1, bits: int = 16, eff: sv.Efficiency = EFF) -> sv.Setup:
    return sv.Setup(P[model], H100, tp, bits, "bf16", eff)


def test_dense_8b_decode_step_by_hand():
    # 16 users at 4,096 tokens: every weight but the embedding table once, plus 16 caches of 4,096 × 131,072 bytes.
    read = (LLAMA_8B_PARAMS - LLAMA_EMBEDDING) * 2 + 16 * 4096 * 131_072
    flops = 16 * (2 * (LLAMA_8B_PARAMS - LLAMA_EMBEDDING) + 2 * 32 * 256 * 32 * 4096)  # 2·h·(d_k+d_v)·L·T per token
    step = sv.decode_step(setup("llama-3.1-8b"), 16, 4096)
    assert float(step.memory) == pytest.approx(read / (3.35e12 * 0.8), rel=1e-12)
    assert float(step.compute) == pytest.approx(flops / (989e12 * 0.5), rel=1e-12)
    assert float(step.seconds) == pytest.approx(read / (3.35e12 * 0.8), rel=1e-12)  # memory-bound: 8.8 ms
    assert float(step.seconds) == pytest.approx(8.806e-3, rel=1e-3)


def test_moe_decode_step_reads_only_the_experts_its_batch_touches():
    # Mixtral 8x7B at batch 4: each of 32 layers touches 8 · (1 − (1 − 2/8)^4) = 5.46875 of its 8 experts.
    expert = 3 * 4096 * 14336
    always = 46_702_792_704 - 8 * 32 * expert - 32000 * 4096
    touched = 8 * (1 - 0.75**4)
    assert touched == 5.46875
    kv_bytes = 4 * 1000 * 131_072
    read = (always + 32 * touched * expert) * 2 + kv_bytes
    step = sv.decode_step(setup("mixtral-8x7b"), 4, 1000)
    assert float(step.memory) == pytest.approx(read / (3.35e12 * 0.8), rel=1e-12)
    # one token alone reads its 2 experts; a large batch reads all 8 (the whole model but the embedding table)
    w = sv.weights(P["mixtral-8x7b"])
    assert float(sv.experts_touched(w, 1)) == pytest.approx(2.0)
    assert float(sv.experts_touched(w, 10_000)) == pytest.approx(8.0)
    assert sv.active_params(P["mixtral-8x7b"]) == always + 2 * 32 * expert


def test_prefill_by_hand_is_compute_bound_and_never_faster_than_one_weight_read():
    p = 2048
    flops = 2 * (LLAMA_8B_PARAMS - LLAMA_EMBEDDING) * p + 2 * 32 * 256 * 32 * p**2 / 2
    assert float(sv.prefill_flops(P["llama-3.1-8b"], p)) == pytest.approx(flops, rel=1e-12)
    assert float(sv.prefill_seconds(setup("llama-3.1-8b"), p)) == pytest.approx(flops / (989e12 * 0.5), rel=1e-12)
    # a 4-token prompt's matmuls are bound by reading the weights once; its attention is its own (compute) roofline
    weights = (LLAMA_8B_PARAMS - LLAMA_EMBEDDING) * 2
    attention = 2 * 32 * 256 * 32 * 4**2 / 2 / (989e12 * 0.5)
    assert float(sv.prefill_seconds(setup("llama-3.1-8b"), 4)) == pytest.approx(weights / (3.35e12 * 0.8) + attention)


def test_tp_all_reduce_by_hand():
    # Llama-3.1-70B over 4 H100s, batch 8: 2 all-reduces × 80 layers, each moving 2·(4−1)/4 of 8 × 8192 × 2 bytes over
    # a 450 GB/s NVLink.
    expected = 2 * 80 * (2 * 3 / 4) * (8 * 8192 * 2) / 450e9
    assert float(sv.allreduce_seconds(H100, 4, 8, 8192, 80)) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(69.9e-6, rel=1e-3)
    step = sv.decode_step(setup("llama-3.1-70b", tp=4), 8, 1000)
    assert float(step.comm) == pytest.approx(expected)
    assert float(sv.allreduce_seconds(H100, 1, 8, 8192, 80)) == 0.0


def test_fp8_weights_use_the_fp8_peak_and_halve_the_bytes():
    assert sv.peak_flops(H100, 8) == 1979e12 and sv.peak_flops(H100, 16) == 989e12
    assert sv.peak_flops(kv.gpus()["a100-80"], 8) == 312e12  # no FP8 tensor cores: 8-bit weights compute in BF16
    w16 = sv.weight_bytes_read(P["llama-3.1-8b"], 1, 16)
    assert float(sv.weight_bytes_read(P["llama-3.1-8b"], 1, 8)) == pytest.approx(float(w16) / 2)


def test_fixed_overhead_is_paid_per_layer_and_pass():
    eff = replace(EFF, layer_overhead_s=100e-6)
    plain = sv.decode_step(setup("llama-3.1-8b"), 1, 100).seconds
    slow = sv.decode_step(setup("llama-3.1-8b", eff=eff), 1, 100).seconds
    assert float(slow - plain) == pytest.approx(32 * 100e-6)


def test_decode_is_vectorised_over_batch_and_context():
    batches = np.arange(1, 65)
    step = sv.decode_step(setup("llama-3.1-8b"), batches[:, None], np.array([1000, 8000])[None, :])
    assert step.seconds.shape == (64, 2)
    assert np.all(np.diff(step.seconds, axis=0) > 0) and np.all(step.seconds[:, 1] > step.seconds[:, 0])


# ------------------------------------------------------------------------------------------------ workload
DEP = kv.Deployment(gpu=H100, tp=1, weight_bits=16, kv_dtype="fp16", price_per_gpu_hour=2.5)
LOAD = sv.Workload(requests_per_minute=600, prompt_tokens=1000, output_tokens=250, ttft_s=2, min_tokens_per_s=20)


def test_workload_bill_splits_into_input_and_output_and_per_request():
    sizing, reason = sv.size_workload(P["llama-3.1-8b"], DEP, EFF, LOAD)
    assert reason is None
    requests = 600 / 60 * 3600 * 730
    assert sizing.monthly_requests == pytest.approx(requests)
    assert sizing.monthly_cost == sizing.copies * 1 * 2.5 * 730
    split = sizing.cost_per_m_input * requests * 1000 / 1e6 + sizing.cost_per_m_output * requests * 250 / 1e6
    assert split == pytest.approx(sizing.monthly_cost)
    assert sizing.cost_per_request == pytest.approx(sizing.monthly_cost / requests)
    assert sizing.copies == math.ceil(10 / sizing.requests_per_s_copy)
    assert 0 < sizing.utilisation <= 1 and sizing.tokens_per_s_user >= 20 and sizing.ttft_s <= 2


def test_latency_target_limits_the_batch():
    loose, _ = sv.size_workload(P["llama-3.1-8b"], DEP, EFF, replace(LOAD, min_tokens_per_s=1))
    tight, _ = sv.size_workload(P["llama-3.1-8b"], DEP, EFF, replace(LOAD, min_tokens_per_s=80))
    assert tight.batch < loose.batch and tight.limit == "speed" and loose.limit == "memory"
    assert tight.cost_per_m_output > loose.cost_per_m_output


def test_unreachable_target_and_no_memory_are_named():
    none, reason = sv.size_workload(P["llama-3.1-8b"], DEP, EFF, replace(LOAD, min_tokens_per_s=100_000))
    assert none is None and "short of the target" in reason
    none, reason = sv.size_workload(P["llama-3.1-70b"], DEP, EFF, LOAD)
    assert none is None and "fits the memory" in reason


def test_break_even_is_a_copys_cost_over_the_api_price_per_token():
    sizing, _ = sv.size_workload(P["llama-3.1-8b"], DEP, EFF, LOAD)
    cheap = sv.break_even(sizing, LOAD, 0.15, 0.60)
    per_token = (1000 * 0.15 + 250 * 0.60) / 1e6 / 1250
    assert cheap.api_per_token == pytest.approx(per_token)
    copy = 2.5 * 730
    expected = copy / per_token
    if expected <= cheap.copy_tokens:
        assert cheap.threshold == pytest.approx(expected)
    else:
        assert cheap.threshold is None
    dear = sv.break_even(sizing, LOAD, 10.0, 40.0)
    assert dear.threshold == pytest.approx(copy / ((1000 * 10 + 250 * 40) / 1e6 / 1250))
    free = sv.break_even(sizing, LOAD, 1e-6, 1e-6)
    assert free.threshold is None  # never cheaper than a nearly free API
    assert np.all(np.diff(dear.self_hosted) >= 0) and np.all(np.diff(dear.api) > 0)


def test_api_price_presets_name_provider_date_and_source():
    prices = sv.api_prices()
    assert len(prices) >= 3
    for price in prices.values():
        assert price.provider and price.date and price.source.startswith("https://")
        assert 0 < price.input_per_m <= price.output_per_m


def test_deepseek_v3_at_16_users_reads_well_under_half_its_experts():
    config = P["deepseek-v3"]
    w = sv.weights(config)
    touched = 256 * (1 - (1 - 8 / 256) ** 16)
    assert float(sv.experts_touched(w, 16)) == pytest.approx(touched) and touched < 103
    full = float(sv.weight_bytes_read(config, 1e6, 8))
    assert float(sv.weight_bytes_read(config, 16, 8)) < 0.5 * full
    step = kv.decode_seconds(config, kv.Deployment(gpu=kv.gpus()["h200-sxm"], tp=8, context=4096), np.array([16, 64]))
    assert step[0] < step[1]


def test_all_reduce_pays_a_latency_and_the_links_efficiency_pcie_apart_from_nvlink():
    eff = sv.Efficiency(
        0.5, 0.8, 0.0, nvlink_efficiency=0.5, pcie_efficiency=0.25, nvlink_latency_s=1e-5, pcie_latency_s=4e-5
    )
    size = 8 * 8192 * 2
    nvlink = 2 * 80 * (1e-5 + (2 * 3 / 4) * size / (450e9 * 0.5))
    assert float(sv.allreduce_seconds(H100, 4, 8, 8192, 80, eff)) == pytest.approx(nvlink, rel=1e-12)
    l40s = kv.gpus()["l40s"]
    pcie = 2 * 80 * (4e-5 + (2 * 3 / 4) * size / (32e9 * 0.25))
    assert sv.is_pcie(l40s) and not sv.is_pcie(H100)
    assert float(sv.allreduce_seconds(l40s, 4, 8, 8192, 80, eff)) == pytest.approx(pcie, rel=1e-12)


def test_kv_read_no_longer_hides_under_the_weight_matmuls():
    # a compute-bound large batch: the step is the matmuls' time plus the KV read's, not the larger of the two
    s = setup("llama-3.1-8b", bits=8)
    step = sv.decode_step(s, 512, 4096)
    w_mem, w_compute = (float(x) for x in sv._weights_part(s, np.float64(512)))
    kv_read = 512 * 32 * 4096 * 2 * 8 * 128 * 2 / (3.35e12 * 0.8)
    assert w_compute > w_mem
    assert float(step.seconds) == pytest.approx(w_compute + kv_read, rel=1e-9)


def test_step_model_matches_the_vectorised_prefill_and_decode():
    s = setup("mixtral-8x7b", tp=2, eff=sv.default_efficiency())
    model = sv.StepModel(s)
    held = float(sv.held_layer_tokens(s.config, 1500))
    assert model.seconds(8, 8 * held) == pytest.approx(float(sv.decode_step(s, 8, 1500).seconds), rel=1e-9)
    pairs = float(sv.causal_pairs(s.config, 3000))
    assert model.seconds(0, 0, 3000, 0, pairs) == pytest.approx(float(sv.prefill_seconds(s, 3000)), rel=1e-9)
