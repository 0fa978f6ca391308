"""Temperature, greedy, top-k, top-p and seeded sampling on the primer's illustrative logits (§5) and at random."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.explain.primer import hand_example
from core.explain.sampling import next_token_distribution, sample, top_k_mask, top_p_mask

LOGITS = hand_example().illustrative_logits
WORDS = hand_example().vocabulary
finite_logits = arrays(np.float64, st.integers(2, 30), elements=st.floats(-50, 50))


def test_primer_probabilities_at_temperature_one():
    dist = next_token_distribution(LOGITS, temperature=1.0)
    printed = {"mat": 0.31, "floor": 0.23, "on": 0.16}
    for word, value in printed.items():
        assert round(float(dist.probs[WORDS.index(word)]), 2) == value
    assert [WORDS[i] for i in dist.ranking[:3]] == ["mat", "floor", "on"]
    assert WORDS[dist.greedy] == "mat"
    assert dist.kept.all() and np.array_equal(dist.final, dist.probs)


def test_temperature_sharpens_and_flattens():
    mat = WORDS.index("mat")
    cold, warm, hot = (next_token_distribution(LOGITS, temperature=t).probs[mat] for t in (0.05, 1.0, 5.0))
    assert cold > 0.99 and cold > warm > hot > 1 / len(WORDS)


def test_top_k_keeps_the_k_most_likely():
    dist = next_token_distribution(LOGITS, top_k=3)
    assert sorted(WORDS[i] for i in np.flatnonzero(dist.kept)) == ["floor", "mat", "on"]
    np.testing.assert_allclose(dist.final.sum(), 1.0)
    np.testing.assert_allclose(dist.final[dist.kept], dist.probs[dist.kept] / dist.probs[dist.kept].sum())


def test_top_p_is_the_smallest_nucleus():
    probs = next_token_distribution(LOGITS).probs
    mask = top_p_mask(probs, 0.5)  # mat 0.31 + floor 0.23 = 0.54 ≥ 0.5, mat alone is not
    assert sorted(WORDS[i] for i in np.flatnonzero(mask)) == ["floor", "mat"]
    assert top_p_mask(probs, 0.31).sum() == 1
    assert top_p_mask(probs, 1.0).all()


@settings(max_examples=200, deadline=None)
@given(finite_logits, st.floats(0.05, 5), st.integers(0, 40), st.floats(0.01, 1.0))
def test_filters_are_consistent(logits, temperature, k, p):
    dist = next_token_distribution(logits, temperature, top_k=k, top_p=p)
    kept = np.flatnonzero(dist.kept)
    assert 1 <= kept.size <= (k if 0 < k < logits.size else logits.size)
    np.testing.assert_allclose(dist.final.sum(), 1.0)
    assert (dist.final[~dist.kept] == 0).all()
    # Every kept token is at least as likely as every dropped one, and the greedy pick always survives.
    if kept.size < logits.size:
        assert dist.probs[dist.kept].min() >= dist.probs[~dist.kept].max()
    assert dist.kept[dist.greedy]


def test_seeded_sampling_is_reproducible_and_prefix_stable():
    probs = next_token_distribution(LOGITS).probs
    first = sample(probs, seed=7, n=50)
    assert np.array_equal(first, sample(probs, seed=7, n=50))
    assert np.array_equal(first[:10], sample(probs, seed=7, n=10))
    assert not np.array_equal(first, sample(probs, seed=8, n=50))


def test_sampling_follows_the_distribution_and_skips_zeros():
    dist = next_token_distribution(LOGITS, top_k=3)
    draws = sample(dist.final, seed=0, n=20_000)
    assert set(draws.tolist()) <= set(np.flatnonzero(dist.kept).tolist())
    frequencies = np.bincount(draws, minlength=len(WORDS)) / draws.size
    np.testing.assert_allclose(frequencies, dist.final, atol=0.015)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: next_token_distribution(LOGITS, temperature=0), "temperature"),
        (lambda: next_token_distribution(LOGITS, temperature=float("nan")), "temperature"),
        (lambda: next_token_distribution(np.array([1.0, np.nan])), "finite"),
        (lambda: top_k_mask(np.ones(3), -1), "top-k"),
        (lambda: top_p_mask(np.ones(3), 0.0), "top-p"),
        (lambda: sample(np.zeros(3), seed=0), "zero"),
    ],
)
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
