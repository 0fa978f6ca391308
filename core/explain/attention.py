"""One attention head, step by step (primer §2–5): scores, scaling, causal mask, softmax, weighted sum of values.

Row-vector convention (x @ W). Every function accepts leading batch axes: q, k are (..., T, d_k), v is (..., T, d_v).
The Transformer's forward pass calls `attend` for every head, so the hand example and the trained model share it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def softmax(logits: np.ndarray, axis: int = -1, temperature: float = 1.0, ordered: bool = False) -> np.ndarray:
    """Numerically stable softmax of logits / temperature; -inf entries get probability exactly 0.

    `ordered` sums the denominator strictly first to last (see `matmul`).
    """
    if not temperature > 0:
        raise ValueError("temperature must be a positive number")
    scaled = np.asarray(logits, dtype=np.float64) / temperature
    shifted = scaled - np.max(scaled, axis=axis, keepdims=True)
    weights = np.exp(shifted)
    total = ordered_sum(weights, axis=axis) if ordered else np.sum(weights, axis=axis, keepdims=True)
    return weights / total


def causal_mask(T: int, S: int | None = None) -> np.ndarray:
    """Boolean T × S matrix, True where query i may read key j: j <= i + (S − T), the lower triangle when S = T.

    With S > T the T queries are the newest of S positions, as in a KV-cache step.
    """
    S = T if S is None else S
    return np.tri(T, S, k=S - T, dtype=bool)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b with every entry summed in one fixed order (first term to last), however many rows a has.

    BLAS (and numpy's pairwise sums) add a single row and a block of rows in different orders, so a KV-cache step
    would differ from the full pass in the last bits; this order makes "cached == recomputed" exact.
    """
    total = a[..., :, 0, None] * b[..., 0, None, :]
    for j in range(1, a.shape[-1]):
        total = total + a[..., :, j, None] * b[..., j, None, :]
    return total


def product_for(ordered: bool) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The matrix product to use: fixed-order sums (`matmul`) or BLAS (`np.matmul`, about 2× faster here)."""
    return matmul if ordered else np.matmul


def ordered_sum(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Sum along an axis strictly first to last (keeping the axis), for the same reason as `matmul`."""
    terms = np.moveaxis(x, axis, 0)
    total = terms[0].copy()
    for term in terms[1:]:
        total += term
    return np.expand_dims(total, axis)


def attend(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    scale: bool = True,
    causal: bool = True,
    key_padding: np.ndarray | None = None,
    ordered: bool = False,
) -> dict[str, np.ndarray]:
    """Run one head and return each step the primer prints, named like TransformerLens hook points.

    q holds the T newest of the S positions whose keys and values are in k and v (T = S in a full pass).
    `key_padding` is a boolean (..., S) array, True at padded positions, which no query may read.
    Returns raw QKᵀ (`attn_scores_raw`), scores ÷ √d_k (`attn_scores`), masked scores (`attn_scores_masked`),
    the attention weights (`pattern`) and the weighted sum of values (`z`). `ordered` uses fixed-order sums.
    """
    product = product_for(ordered)
    T, S, d_k = q.shape[-2], k.shape[-2], q.shape[-1]
    raw = product(q, np.swapaxes(k, -1, -2))
    scores = raw / np.sqrt(d_k) if scale else raw
    allowed = causal_mask(T, S) if causal else np.ones((T, S), dtype=bool)
    if key_padding is not None:
        allowed = allowed & ~np.asarray(key_padding, dtype=bool)[..., None, :]
        # A padded query row would see nothing at all; let it read itself so its (ignored) row stays finite.
        allowed = allowed | np.eye(T, S, k=S - T, dtype=bool)
    masked = np.where(allowed, scores, -np.inf)
    pattern = softmax(masked, axis=-1, ordered=ordered)
    return {
        "attn_scores_raw": raw,
        "attn_scores": scores,
        "attn_scores_masked": masked,
        "pattern": pattern,
        "z": product(pattern, v),
    }
