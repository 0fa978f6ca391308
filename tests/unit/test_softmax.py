"""The shared softmax: rows sum to 1, stable at temperature 0.05 with logits up to ±1000, masked entries get 0."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.explain.attention import softmax

big_logits = arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 25)), elements=st.floats(-1e3, 1e3))


@settings(max_examples=300, deadline=None)
@given(big_logits, st.floats(0.05, 5.0))
def test_rows_sum_to_one_without_overflow(logits, temperature):
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        probs = softmax(logits, axis=-1, temperature=temperature)
    assert np.isfinite(probs).all() and (probs >= 0).all()
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_extreme_logits_at_the_lowest_temperature():
    logits = np.array([1e3, 999.0, -1e3, 0.0])
    with np.errstate(over="raise", invalid="raise"):
        probs = softmax(logits, temperature=0.05)
    # A gap of 1 at τ = 0.05 is a factor e^20 between the two leaders; the rest vanish.
    np.testing.assert_allclose(probs[1] / probs[0], np.exp(-20.0), rtol=1e-12)
    assert probs[2] == 0.0
    np.testing.assert_allclose(probs.sum(), 1.0, rtol=0, atol=1e-15)


@settings(max_examples=100, deadline=None)
@given(big_logits, st.floats(-500, 500))
def test_shift_invariance(logits, shift):
    np.testing.assert_allclose(softmax(logits + shift), softmax(logits), atol=1e-12)


def test_minus_infinity_gets_exactly_zero():
    probs = softmax(np.array([[0.3, -np.inf, 0.1]]))
    assert probs[0, 1] == 0.0
    np.testing.assert_allclose(probs.sum(), 1.0)
