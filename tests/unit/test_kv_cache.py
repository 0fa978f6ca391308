"""KV-cache and deployment model vs the primer's example, the runtimes' reference figures and independent arithmetic.

Expected values are typed from shared/reference/kv-cache.md and primer §4, or recomputed here from the formulas
written out longhand, never read back from the engine.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.plan import kv_cache as kv
from core.plan.model_config import active_param_count, param_count, presets, reference_models

P = presets()
H100 = kv.gpus()["h100-sxm"]
H100_BYTES = 81_559 * 2**20  # what the driver reports for an "80 GB" H100: 85.5·10⁹ bytes
PRIMER_BYTES = 2 * 32 * 32768 * 32 * 128 * 2  # primer §4, written out


# ------------------------------------------------------------------------------------------------ the primer
def test_primer_example_exactly():
    total = kv.kv_bytes_per_sequence(P["primer-7b"], 32768, "fp16")
    assert total == PRIMER_BYTES == 17_179_869_184
    assert round(kv.to_gb(total), 2) == 17.18
    assert kv.to_gib(total) == 16.0


def test_primer_example_is_the_default_deployment_headline():
    plan = kv.plan(P["primer-7b"], kv.Deployment(gpu=H100))
    assert plan.kv_per_user == PRIMER_BYTES
    assert plan.kv_per_token == 2 * 32 * 32 * 128 * 2


# ------------------------------------------------------------------------------------------------ bytes per token
REFERENCE_BYTES_PER_TOKEN = {  # shared/reference/kv-cache.md, "KV bytes/token at 16 bit"
    "gpt2": 36_864,
    "llama-2-7b": 524_288,
    "llama-3.1-8b": 131_072,
    "llama-3.1-70b": 327_680,
    "mistral-7b": 131_072,
    "gemma-2-9b": 344_064,
    "deepseek-v3": 70_272,
}


@pytest.mark.parametrize(("preset", "expected"), REFERENCE_BYTES_PER_TOKEN.items())
def test_bytes_per_token_matches_reference_table(preset, expected):
    assert kv.kv_bytes_per_token(P[preset], "bf16") == expected


def test_explicit_head_dim_wins_over_hidden_over_heads():
    gemma = P["gemma-2-9b"]
    assert gemma.head_dim == 256 != gemma.d_model // gemma.n_heads
    assert kv.kv_bytes_per_token(gemma) == 2 * 42 * 8 * 256 * 2


@pytest.mark.parametrize(
    ("dtype", "factor"), [("fp32", 2.0), ("fp16", 1.0), ("bf16", 1.0), ("fp8", 0.5), ("int8", 0.5), ("int4", 0.25)]
)
def test_element_types_scale_the_cache(dtype, factor):
    assert kv.kv_bytes_per_token(P["llama-3.1-8b"], dtype) == 131_072 * factor


def test_unknown_element_type_is_refused_by_name():
    with pytest.raises(ValueError, match="fp7"):
        kv.element_bytes("fp7")


# ------------------------------------------------------------------------------------------------ MLA
def test_latent_attention_has_no_factor_two_and_keeps_the_rope_part():
    deepseek = P["deepseek-v3"]
    correct = 61 * (512 + 64) * 2
    buggy = 2 * 61 * 512 * 2  # the published calculator's bug: latent doubled, rope part dropped
    assert kv.kv_bytes_per_token(deepseek) == correct != buggy


def test_latent_is_held_whole_on_every_tensor_parallel_rank():
    deepseek = P["deepseek-v3"]
    assert kv.kv_heads_per_gpu(deepseek, 8) == 1
    assert kv.kv_bytes_per_token(deepseek, tp=8) == kv.kv_bytes_per_token(deepseek, tp=1)
    assert kv.replication(deepseek, 8) == 8


# ------------------------------------------------------------------------------------------------ sliding windows
def test_mistral_window_caps_every_layer():
    mistral = P["mistral-7b"]
    assert kv.kv_bytes_per_sequence(mistral, 1000) == 131_072 * 1000
    assert kv.kv_bytes_per_sequence(mistral, 32768) == 131_072 * 4096
    assert kv.kv_bytes_per_sequence(mistral, 32768) == kv.kv_bytes_per_sequence(mistral, 4096)


def test_gemma_window_caps_half_the_layers():
    gemma = P["gemma-2-9b"]
    per_layer_token = 2 * 8 * 256 * 2
    assert gemma.sliding_layers == 21
    expected = per_layer_token * (21 * 8192 + 21 * 4096)
    assert kv.kv_bytes_per_sequence(gemma, 8192) == expected
    assert kv.kv_bytes_per_sequence(gemma, 8192) < 8192 * kv.kv_bytes_per_token(gemma)


# ------------------------------------------------------------------------------------------------ tensor parallelism
def test_tensor_parallel_splits_kv_heads_then_replicates():
    llama = P["llama-3.1-8b"]  # 8 KV heads
    assert kv.kv_heads_per_gpu(llama, 4) == 2 and kv.replication(llama, 4) == 1
    assert kv.kv_bytes_per_token(llama, tp=4) == 131_072 / 4
    assert kv.kv_heads_per_gpu(llama, 16) == 1 and kv.replication(llama, 16) == 2
    assert kv.kv_bytes_per_token(llama, tp=16) == kv.kv_bytes_per_token(llama, tp=8)


def test_tensor_parallel_sizes_that_cannot_split_heads_are_named():
    assert kv.tp_problem(P["llama-3.1-8b"], 4) is None
    assert "32 attention heads" in kv.tp_problem(P["llama-3.1-8b"], 64)
    assert "28 attention heads" in kv.tp_problem(P["qwen2.5-7b"], 8)
    with pytest.raises(ValueError, match="does not divide"):
        kv.plan(P["qwen2.5-7b"], kv.Deployment(gpu=H100, tp=8))


# ------------------------------------------------------------------------------------------------ paged blocks
@pytest.mark.parametrize(("block", "allocated"), [(1, 1000), (16, 1008), (32, 1024)])
def test_block_rounding(block, allocated):
    llama = P["llama-3.1-8b"]
    assert kv.kv_bytes_per_sequence(llama, 1000, block=block) == 131_072 * allocated
    assert kv.plan(llama, kv.Deployment(gpu=H100, context=1000, block=block)).tokens_allocated == allocated


# ------------------------------------------------------------------------------------------------ deployment
def test_plan_for_the_primer_on_one_h100_by_hand():
    weights = 6_738_415_616 * 2
    budget = 0.9 * H100_BYTES - weights
    users = math.floor(budget / PRIMER_BYTES)
    dep = kv.Deployment(gpu=H100, users=16, efficiency=0.6, mfu=0.5, layer_overhead_s=0.0)
    plan = kv.plan(P["primer-7b"], dep)
    assert plan.weights_gpu == weights
    assert plan.reserve_gpu == pytest.approx(0.1 * H100_BYTES)
    assert plan.max_users == users == 3
    assert plan.replicas == math.ceil(16 / 3) and plan.gpus_needed == 6
    # a decode step reads every weight but the input embedding table (it gathers 3 rows) and 3 users' KV at 32,768
    step = (weights - 32000 * 4096 * 2 + 3 * PRIMER_BYTES) / (3.35e12 * 0.6)
    assert plan.tokens_per_second == pytest.approx(3 / step)
    assert plan.cost_per_million == pytest.approx(1e6 * 2.5 / 3600 / (3 / step))
    assert plan.free_gpu == pytest.approx(0.9 * H100_BYTES - weights - 3 * PRIMER_BYTES)


def test_model_that_does_not_fit_reports_no_users_and_the_smallest_tp():
    dep = kv.Deployment(gpu=H100, context=8192)
    plan = kv.plan(P["llama-3.1-70b"], dep)
    assert not plan.fits and plan.max_users == 0 and plan.gpus_needed is None and plan.cost_per_million is None
    assert kv.smallest_tp(P["llama-3.1-70b"], dep) == 2  # 141 GB of weights: half per GPU fits in 77 GB
    assert kv.fitted_tp(P["llama-3.1-70b"], dep) == 2
    assert kv.smallest_tp(P["llama-3.1-405b"], dep) == 16


def test_prefix_caching_stores_the_shared_prompt_once():
    llama = P["llama-3.1-8b"]
    base = kv.Deployment(gpu=H100, context=8192, users=10)
    shared = kv.plan(llama, replace(base, prefix=4096))
    alone = kv.plan(llama, base)
    assert shared.prefix_gpu == 131_072 * 4096
    assert shared.kv_used_gpu == 131_072 * (4096 + 10 * 4096)
    assert alone.kv_used_gpu == 131_072 * 10 * 8192
    assert shared.max_users > alone.max_users


def test_prefix_sharing_uses_only_whole_blocks():
    llama = P["llama-3.1-8b"]
    plan = kv.plan(llama, kv.Deployment(gpu=H100, context=8192, prefix=1000, block=16))
    assert plan.prefix_gpu == 131_072 * 992  # 62 whole blocks of 16


def test_gpu_options_break_even_of_the_chosen_gpu_is_its_own_price():
    dep = kv.Deployment(gpu=H100, price_per_gpu_hour=3.0)
    options = {option.gpu.id: option for option in kv.gpu_options(P["primer-7b"], dep)}
    assert options["h100-sxm"].break_even_price == pytest.approx(3.0)
    # H200: same compute, more memory and bandwidth: it serves more per GPU, so it may cost more per hour.
    assert options["h200-sxm"].break_even_price > 3.0


def test_mha_equivalent_shows_what_gqa_and_mla_save():
    assert kv.mha_equivalent_bytes_per_token(P["llama-3.1-8b"]) == 4 * kv.kv_bytes_per_token(P["llama-3.1-8b"])
    deepseek = P["deepseek-v3"]
    assert kv.mha_equivalent_bytes_per_token(deepseek) == 61 * 128 * (128 + 64 + 128) * 2
    assert kv.mha_equivalent_bytes_per_token(P["primer-7b"]) == kv.kv_bytes_per_token(P["primer-7b"])


# ------------------------------------------------------------------------------------------------ what-ifs
def test_budget_effects_double_the_context_and_halve_the_cache_type_at_a_tp_that_fits():
    dep = kv.Deployment(gpu=H100, context=32768)
    effects = kv.budget_effects(P["primer-7b"], dep)
    assert effects.tp == 1
    assert effects.doubled.kv_per_user == 2 * PRIMER_BYTES
    assert effects.base.max_users == 3 and effects.fp8.max_users == 7  # 63.5 GB of room: 3 caches of 17.2, 7 of 8.6
    assert effects.mha_bytes_per_token == 2 * 32 * 32 * 128 * 2
    too_big = kv.budget_effects(P["llama-3.1-70b"], kv.Deployment(gpu=H100, context=8192))
    assert too_big.tp == 2 and too_big.base.tp == too_big.doubled.tp == 2  # the fewest GPUs that hold it


def test_cost_per_user_hour_shares_a_copys_gpus_among_its_users():
    plan = kv.plan(P["primer-7b"], kv.Deployment(gpu=H100))  # 3 users on 1 GPU
    assert kv.cost_per_user_hour(plan, 3.0) == pytest.approx(1.0)
    assert kv.cost_per_user_hour(kv.plan(P["llama-3.1-405b"], kv.Deployment(gpu=H100)), 3.0) is None


def test_compared_plans_skip_the_chosen_model_and_size_the_others():
    dep = kv.Deployment(gpu=H100, context=8192)
    rows = kv.compared_plans(P["llama-3.1-8b"], dep, [P["llama-3.1-8b"], P["llama-3.1-70b"], P["gpt2"]])
    assert [(c.name, d.tp) for c, d, _ in rows] == [("Llama-3.1-8B", 1), ("Llama-3.1-70B", 2), ("GPT-2 small", 1)]
    assert all(p == kv.plan(c, d) for c, d, p in rows)


def test_grids_cover_the_chosen_context_and_batch():
    grid = kv.context_grid(32768)
    assert grid[0] == 256 and grid[-1] == 1_048_576 and np.all(np.diff(grid) > 0)
    assert kv.context_grid(4_000_000)[-1] == 8_000_000
    assert list(kv.batch_grid(5)) == [1, 2, 3, 4, 5]
    assert len(kv.batch_grid(10_000)) == 200 and kv.batch_grid(10_000)[-1] == 10_000
    assert kv.at_context(kv.Deployment(gpu=H100, context=1), 0.5).context == 1


# ------------------------------------------------------------------------------------------------ parameters
def test_gpt2_small_exact_count():
    assert param_count(P["gpt2"]) == 124_439_808


def test_tiny_primer_model_counts_736():
    assert param_count(reference_models()["tiny-736"]) == 120 + 2 * 302 + 12 == 736


def test_llama_2_7b_exact_count():
    assert param_count(P["llama-2-7b"]) == 6_738_415_616


@pytest.mark.parametrize("preset", list(P))
def test_parameter_count_within_one_percent_of_published(preset):
    config = P[preset]
    assert config.published_params, f"{preset} has no published count"
    assert param_count(config) == pytest.approx(config.published_params, rel=0.01)


@pytest.mark.parametrize(("preset", "published"), [("mixtral-8x7b", 12.9e9), ("deepseek-v3", 37e9)])
def test_active_parameters_of_mixtures_of_experts(preset, published):
    assert active_param_count(P[preset]) == pytest.approx(published, rel=0.02)
    assert active_param_count(P[preset]) < param_count(P[preset])


def test_weights_memory_by_bit_width():
    assert kv.weights_bytes(7e9, 16) == 14e9
    assert kv.weights_bytes(7e9, 8) == 7e9
    assert kv.weights_bytes(7e9, 4) == 3.5e9


# ------------------------------------------------------------------------------------------------ sweeps
CONTEXTS = np.array([1, 15, 16, 17, 1000, 4095, 4096, 4097, 8192, 32768, 131_072, 1_000_000])


@pytest.mark.parametrize("preset", list(P))
@pytest.mark.parametrize("block", [1, 16])
def test_sweep_equals_the_scalar_formula(preset, block):
    config = P[preset]
    scalar = [kv.kv_bytes_per_sequence(config, int(t), block=block) for t in CONTEXTS]
    np.testing.assert_array_equal(kv.kv_sweep(config, CONTEXTS, block=block), scalar)
    many = kv.kv_sweep_many([config, P["gpt2"]], CONTEXTS, block=block)
    np.testing.assert_array_equal(many[0], scalar)


@pytest.mark.parametrize("preset", ["primer-7b", "mistral-7b", "gemma-2-9b", "deepseek-v3"])
def test_users_sweep_equals_the_plan(preset):
    dep = kv.Deployment(gpu=kv.gpus()["h200-sxm"], tp=8 if preset == "deepseek-v3" else 1, prefix=1000)
    config = P[preset]
    if not kv.plan(config, dep).fits and preset == "deepseek-v3":
        dep = replace(dep, weight_bits=4, gpu=kv.gpus()["mi300x"])
    swept = kv.users_vs_context(config, dep, CONTEXTS[CONTEXTS >= 1000])
    expected = [kv.plan(config, replace(dep, context=int(t))).max_users for t in CONTEXTS[CONTEXTS >= 1000]]
    np.testing.assert_array_equal(swept, expected)


def test_cost_sweep_equals_the_plan_at_its_batch():
    dep = kv.Deployment(gpu=H100, context=4096, users=20)
    plan = kv.plan(P["llama-3.1-8b"], dep)
    tokens, cost = kv.cost_vs_batch(P["llama-3.1-8b"], dep, np.array([plan.batch]))
    assert tokens[0] == pytest.approx(plan.tokens_per_second)
    assert cost[0] == pytest.approx(plan.cost_per_million)


# ------------------------------------------------------------------------------------------------ properties
presets_st = st.sampled_from(list(P))
contexts_st = st.integers(min_value=1, max_value=2_000_000)


@settings(max_examples=60, deadline=None)
@given(presets_st, contexts_st, contexts_st, st.sampled_from([1, 16, 32]))
def test_kv_is_monotone_in_context(preset, a, b, block):
    low, high = sorted((a, b))
    config = P[preset]
    assert (
        0 <= kv.kv_bytes_per_sequence(config, low, block=block) <= kv.kv_bytes_per_sequence(config, high, block=block)
    )


@settings(max_examples=40, deadline=None)
@given(presets_st, contexts_st)
def test_kv_is_monotone_in_bytes_per_element(preset, context):
    sizes = [kv.kv_bytes_per_sequence(P[preset], context, dtype) for dtype in ("int4", "fp8", "fp16", "fp32")]
    assert sizes == sorted(sizes) and sizes[0] > 0


@settings(max_examples=40, deadline=None)
@given(presets_st, st.integers(1, 500), st.integers(1, 500))
def test_throughput_rises_and_cost_falls_with_batch(preset, a, b):
    config = P[preset]
    dep = kv.Deployment(
        gpu=kv.gpus()["mi300x"],
        context=2048,
        weight_bits=4,
        tp=kv.fitted_tp(config, kv.Deployment(gpu=kv.gpus()["mi300x"], context=2048, weight_bits=4)) or 1,
    )
    low, high = sorted((a, b))
    tokens, cost = kv.cost_vs_batch(config, dep, np.array([low, high]))
    assert tokens[0] <= tokens[1] and cost[0] >= cost[1] > 0


@settings(max_examples=40, deadline=None)
@given(presets_st, contexts_st, contexts_st, st.sampled_from(list(kv.gpus())))
def test_users_never_negative_and_never_grow_with_context(preset, a, b, gpu):
    low, high = sorted((a, b))
    dep = kv.Deployment(gpu=kv.gpus()[gpu])
    users = kv.users_vs_context(P[preset], dep, np.array([low, high]))
    assert (users >= 0).all() and users[0] >= users[1]


@given(st.floats(min_value=1.0, max_value=1e18, allow_nan=False))
def test_gb_and_gib_are_consistent(n_bytes):
    assert kv.to_gb(n_bytes) * 1e9 == pytest.approx(n_bytes)
    assert kv.to_gib(n_bytes) * 2**30 == pytest.approx(n_bytes)
    assert kv.to_gb(n_bytes) / kv.to_gib(n_bytes) == pytest.approx(2**30 / 1e9)
    assert kv.to_gb(n_bytes) > kv.to_gib(n_bytes)  # a GB is smaller than a GiB, so there are more of them
