"""KV-cache generation (primer §3) on the §5 layer: outputs as recomputed, one fresh K/V row per step, work saved."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.explain.kv_generation import (
    PRIMER_7B,
    check_against_forward,
    generate,
    made_up_rows,
    multiply_adds,
)
from core.explain.transformer import HAND_CONFIG, PRIMER_CONFIG, forward, hand_model, random_model

H_LAST = [-0.363, 0.011, 0.837, -0.250, 0.328]  # primer §5, Step 7
SAT_WEIGHTS = [0.296, 0.286, 0.418]  # primer §5, Step 4, third row


@pytest.fixture(scope="module")
def hand():
    model = hand_model()
    return model, np.array(model.params["E"][model.token_ids])


@pytest.mark.parametrize("prefill", [1, 2, 3])
def test_cached_run_reproduces_the_primer(hand, prefill):
    model, X = hand
    run = generate(model, X, prefill)
    np.testing.assert_allclose(run.outputs[-1], H_LAST, atol=5e-4)
    np.testing.assert_allclose(run.steps[-1].pattern[-1], SAT_WEIGHTS, atol=5e-4)
    assert len(run.steps) == 1 + (3 - prefill)


def test_prefill_of_the_whole_prompt_is_the_forward_pass_to_the_last_bit(hand):
    model, X = hand
    run = generate(model, X, prefill=3)
    trace = forward(model, embeddings=X)
    assert np.array_equal(run.outputs, trace["blocks.0.hook_resid_post"])
    assert np.array_equal(run.steps[0].pattern, trace["blocks.0.attn.hook_pattern"][0])
    assert check_against_forward(model, X, run) == 0.0


def test_each_step_computes_one_row_and_reuses_the_rest(hand):
    model, X = hand
    X = np.vstack([X, made_up_rows(X, 4, seed=0)])
    run = generate(model, X, prefill=2)
    assert [step.cache_length for step in run.steps] == [2, 3, 4, 5, 6, 7]
    assert run.steps[0].fresh == (0, 1) and run.steps[0].q.shape == (2, 5)
    for before, after in zip(run.steps, run.steps[1:], strict=False):
        assert after.q.shape == (1, 5) and after.fresh == (before.cache_length,)
        assert after.reused == tuple(range(before.cache_length))
        # The cached rows are carried over untouched; only one K row and one V row are appended.
        assert np.array_equal(after.k_cache[:-1], before.k_cache)
        assert np.array_equal(after.v_cache[:-1], before.v_cache)
        np.testing.assert_allclose(after.pattern.sum(), 1.0)
    assert run.status[:, 0].tolist() == [2, 2, 0, 0, 0, 0, 0]
    assert run.status[:, 3].tolist() == [1, 1, 1, 1, 2, 0, 0]


def test_multiply_adds_by_hand_for_the_primer_example(hand):
    model, X = hand
    run = generate(model, X, prefill=1)
    d = 5  # d_model = d_k = d_v = 5
    # Generating "sat" with the cache: its own Q, K, V (3 · 5·5), 3 scores and a blend of 3 values (3·5 each), W_O.
    assert run.steps[2].multiply_adds == 3 * d * d + 3 * d + 3 * d + d * d
    # Without the cache all three rows are redone: 3 rows of projections, a 3 × 3 score matrix, 3 blends, 3 · W_O.
    assert run.steps[2].multiply_adds_without_cache == 3 * (3 * d * d) + 9 * d + 9 * d + 3 * d * d
    cached, recomputed = run.total_multiply_adds()
    assert cached < recomputed
    assert run.total_multiply_adds(upto=0) == (run.steps[0].multiply_adds, run.steps[0].multiply_adds)


def test_the_cache_saves_more_the_longer_the_generation():
    per_token = [multiply_adds(1, t, 64, 64) for t in range(1, 200)]
    redone = [multiply_adds(t, t, 64, 64) for t in range(1, 200)]
    # With the cache each step costs a constant plus 2·d_k per cached row; without, it grows with t².
    assert np.all(np.diff(per_token) == 2 * 64)
    assert redone[-1] / per_token[-1] > 100


@settings(max_examples=60, deadline=None)
@given(
    d_model=st.integers(2, 12),
    d_head=st.integers(1, 12),
    T=st.integers(1, 12),
    data=st.data(),
    seed=st.integers(0, 10_000),
    scale=st.booleans(),
)
def test_cached_equals_recomputed_for_random_weights(d_model, d_head, T, data, seed, scale):
    config = replace(HAND_CONFIG, vocab_size=4, d_model=d_model, d_head=d_head)  # the §5 layer, other sizes
    model = random_model(config, seed=seed)
    X = np.random.default_rng(seed).standard_normal((T, d_model))
    prefill = data.draw(st.integers(1, T))
    run = generate(model, X, prefill, scale=scale)
    recomputed = forward(model, embeddings=X, scale=scale)["blocks.0.hook_resid_post"]
    # The engine sums every product in one fixed order (core.explain.attention.matmul), so one new row against the cache
    # and the full pass agree to the last bit, whatever the prefill length.
    assert np.array_equal(run.outputs, recomputed)
    assert check_against_forward(model, X, run, scale=scale) == 0.0


def test_only_the_section_5_layer_is_accepted():
    with pytest.raises(ValueError, match="1 layer, 1 head"):
        generate(random_model(PRIMER_CONFIG), np.zeros((3, 6)), 1)
    with pytest.raises(ValueError, match="prefill"):
        generate(random_model(HAND_CONFIG), np.zeros((3, 5)), 4)


def test_made_up_rows_are_seeded_and_shaped_like_the_primer(hand):
    _, X = hand
    rows = made_up_rows(X, 5, seed=3)
    assert rows.shape == (5, 5) and np.array_equal(rows, made_up_rows(X, 5, seed=3))
    assert np.array_equal(rows, np.round(rows, 2)) and not np.array_equal(rows, made_up_rows(X, 5, seed=4))


def test_primer_cache_size_example():
    # §4: 2 · 32 · 32768 · 32 · 128 · 2 bytes ≈ 17 GB.
    assert round(PRIMER_7B.bytes / 1e9) == 17
    assert PRIMER_7B.bytes == 2 * 32 * 32 * 128 * 2 * 32 * 1024
