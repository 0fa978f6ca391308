"""Engine profiles: every default has its reason and source, the memory rules by hand, and bad ids named."""

from __future__ import annotations

import pytest

from core.plan import calibration, engines
from core.plan import kv_cache as kv
from core.plan.model_config import param_count, presets

H100 = kv.gpus()["h100-sxm"]
A100 = kv.gpus()["a100-80"]
FIELDS = ("memory_rule", "memory_fraction", "block_tokens", "max_batch", "token_budget", "admission_reserve")


def test_three_engines_each_default_with_a_reason_a_version_and_docs():
    profiles = engines.profiles()
    assert set(profiles) == {"vllm", "trtllm", "sglang"}
    for p in profiles.values():
        assert p.version and p.docs.startswith("https://")
        for field in (*FIELDS, "preemption", "runtime_gib"):
            assert len(p.reason(field)) > 40, (p.id, field)


def test_memory_rules_by_hand():
    gib = kv.GIB
    vllm, trt, sgl = (engines.profile(e) for e in ("vllm", "trtllm", "sglang"))
    # vLLM: 0.9 of TOTAL less weights and runtime; TensorRT-LLM: 0.9 of what is FREE after them
    assert engines.kv_budget_bytes(vllm, 80 * gib, 16 * gib, 2 * gib) == pytest.approx((72 - 18) * gib)
    assert engines.kv_budget_bytes(trt, 80 * gib, 16 * gib, 2 * gib) == pytest.approx(0.9 * 62 * gib)
    # SGLang's static fraction falls with TP
    assert sgl.fraction(1) == 0.88 and sgl.fraction(2) == 0.87 and sgl.fraction(4) == 0.85 and sgl.fraction(8) == 0.81


def test_trtllm_gives_a_big_model_on_one_gpu_far_more_cache_than_vllm():
    config = presets()["llama-3.1-70b"]
    vllm = engines.kv_capacity_tokens(engines.profile("vllm"), config, H100, 1, 8, "fp8")
    trt = engines.kv_capacity_tokens(engines.profile("trtllm"), config, H100, 1, 8, "fp8")
    assert trt > 1.3 * vllm > 0
    assert vllm % 16 == 0 and trt % 32 == 0


def test_trtllm_runtime_memory_is_what_its_logged_run_held_besides_the_weights():
    """31.84 GiB total, 17.83 GiB free when the cache was sized, Llama-3.1-8B in FP8: the rest is weights + runtime."""
    (logged,) = [e for e in calibration._asset()["kv_capacity"] if e["engine_id"] == "trtllm"]
    weights = kv.weights_bytes(param_count(presets()[logged["model"]]), 8) / kv.GIB
    held = float(logged["gpu_name"].split("total ")[1].split(" GiB")[0]) - logged["free_gib"]
    assert engines.profile("trtllm").runtime_gib == pytest.approx(held - weights, abs=0.1)


def test_batch_defaults_follow_the_gpu():
    vllm = engines.profile("vllm")
    assert vllm.limits(H100) == (1024, 8192)
    assert vllm.limits(A100) == (256, 2048)  # vLLM keeps the small defaults on A100s
    assert vllm.limits(kv.gpus()["l4"]) == (256, 2048)
    assert engines.profile("sglang").limits(kv.gpus()["l4"])[1] == 2048  # under 25,000 MB: 2048-token chunks


def test_unknown_engine_is_named():
    with pytest.raises(ValueError, match="engine: unknown engine 'tgi'"):
        engines.profile("tgi")
