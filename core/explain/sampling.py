"""From next-token logits to a choice (primer §4–5): temperature, greedy, top-k, top-p and seeded sampling.

Pure numpy on one vector of V logits. Filters run in the usual order: temperature, then top-k, then top-p on the
top-k survivors; the sampler draws from what is left, renormalised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.explain.attention import softmax

TEMPERATURE_RANGE = (0.05, 5.0)  # the walkthrough's slider: low enough to look greedy, high enough to look uniform


@dataclass(frozen=True)
class Distribution:
    """Next-token probabilities before and after filtering, and the greedy pick."""

    probs: np.ndarray  # softmax(logits / τ) over the whole vocabulary
    kept: np.ndarray  # True for tokens that survive top-k and top-p
    final: np.ndarray  # probs renormalised over the kept tokens (0 elsewhere): what the sampler draws from
    greedy: int  # the most likely token (lowest id on a tie): what greedy decoding picks at any temperature

    @property
    def ranking(self) -> np.ndarray:
        """Token ids from most to least likely (ties by id), for charts sorted by probability."""
        return np.argsort(-self.probs, kind="stable")


def _check_probs(probs: np.ndarray) -> np.ndarray:
    values = np.asarray(probs, dtype=np.float64)
    if values.ndim != 1 or values.size == 0 or not np.isfinite(values).all() or (values < 0).any():
        raise ValueError("probabilities must be a non-empty vector of finite, non-negative numbers")
    if not values.sum() > 0:
        raise ValueError("probabilities must not all be zero")
    return values


def top_k_mask(probs: np.ndarray, k: int) -> np.ndarray:
    """True for the k most likely tokens (ties broken by lower id); k = 0 or k ≥ V keeps every token."""
    values = _check_probs(probs)
    if k < 0:
        raise ValueError("top-k must be 0 (off) or a positive number of tokens")
    keep = np.zeros(values.size, dtype=bool)
    keep[np.argsort(-values, kind="stable")[: k if 0 < k < values.size else values.size]] = True
    return keep


def top_p_mask(probs: np.ndarray, p: float) -> np.ndarray:
    """True for the smallest set of most likely tokens whose probabilities add up to at least p (nucleus).

    p = 1 keeps every token; probabilities are renormalised first, so the mask does not depend on their total.
    """
    values = _check_probs(probs)
    if not 0 < p <= 1:
        raise ValueError("top-p must lie in (0, 1]")
    if p >= 1:
        return np.ones(values.size, dtype=bool)
    order = np.argsort(-values, kind="stable")
    cumulative = np.cumsum(values[order]) / values.sum()
    n_keep = min(int(np.searchsorted(cumulative, p, side="left")) + 1, values.size)
    keep = np.zeros(values.size, dtype=bool)
    keep[order[:n_keep]] = True
    return keep


def next_token_distribution(
    logits: np.ndarray, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0
) -> Distribution:
    """Softmax at temperature τ (stable down to τ = 0.05 with logits of ±1000), then top-k and top-p filtering."""
    values = np.asarray(logits, dtype=np.float64)
    if values.ndim != 1 or values.size == 0 or not np.isfinite(values).all():
        raise ValueError("logits must be a non-empty vector of finite numbers")
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError("temperature must be a positive, finite number")
    probs = softmax(values, temperature=temperature)
    after_k = top_k_mask(probs, top_k)
    kept = after_k & top_p_mask(np.where(after_k, probs, 0.0), top_p)
    final = np.where(kept, probs, 0.0)
    final = final / final.sum()
    for array in (probs, kept, final):
        array.setflags(write=False)
    return Distribution(probs=probs, kept=kept, final=final, greedy=int(np.argmax(probs)))


def sample(probs: np.ndarray, seed: int, n: int = 1) -> np.ndarray:
    """The first n draws of a seeded sampler (inverse CDF on numpy's PCG64 uniforms).

    Reproducible and prefix-stable: the first n draws do not change when more are asked for. A token of
    probability 0 is never drawn.
    """
    values = _check_probs(probs)
    if n < 0:
        raise ValueError("the number of draws must be 0 or more")
    cdf = np.cumsum(values)
    uniforms = np.random.default_rng(seed).random(n)
    return np.searchsorted(cdf, uniforms * cdf[-1], side="right")
