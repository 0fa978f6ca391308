"""The attention primitives: the causal mask for cached steps and the fixed-order product behind the exact KV cache."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from core.explain.attention import attend, causal_mask, matmul, ordered_sum


def test_causal_mask_for_a_full_pass_and_for_the_newest_rows():
    assert np.array_equal(causal_mask(3), np.tril(np.ones((3, 3), dtype=bool)))
    # The 2 newest of 4 positions: row 0 is position 2 (reads keys 0-2), row 1 is position 3 (reads all).
    assert causal_mask(2, 4).tolist() == [[True, True, True, False], [True, True, True, True]]
    assert np.array_equal(causal_mask(5, 5)[-2:], causal_mask(2, 5))


@given(rows=st.integers(1, 12), inner=st.integers(1, 40), cols=st.integers(1, 12), seed=st.integers(0, 1000))
def test_fixed_order_product_is_a_product_and_row_independent(rows, inner, cols, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((rows, inner)), rng.standard_normal((inner, cols))
    full = matmul(a, b)
    np.testing.assert_allclose(full, a @ b, rtol=1e-12, atol=1e-12)
    # Each row alone gives the same bits as inside the block: the property the KV cache relies on.
    assert all(np.array_equal(matmul(a[i : i + 1], b)[0], full[i]) for i in range(rows))


def test_ordered_sum_adds_first_to_last_and_ignores_trailing_zeros():
    x = np.random.default_rng(1).standard_normal((3, 11))
    padded = np.concatenate([x, np.zeros((3, 9))], axis=1)
    assert np.array_equal(ordered_sum(x), ordered_sum(padded))
    np.testing.assert_allclose(ordered_sum(x)[:, 0], x.sum(axis=1), rtol=1e-14)


def test_one_cached_query_matches_its_row_of_the_full_pass_bit_for_bit():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((9, 4)) for _ in range(3))
    full = attend(q, k, v, ordered=True)
    last = attend(q[-1:], k, v, ordered=True)  # the newest query against every cached key
    assert np.array_equal(last["pattern"][0], full["pattern"][-1])
    assert np.array_equal(last["z"][0], full["z"][-1])
