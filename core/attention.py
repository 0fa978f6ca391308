"""One attention head, step by step (primer §2–5): scores, scaling, causal mask, softmax, weighted sum of values.

Row-vector convention (x @ W). Every function accepts leading batch axes: q, k are (..., T, d_k), v is (..., T, d_v).
The Transformer's forward pass calls `attend` for every head, so the hand example and the trained model share it.
"""

from __future__ import annotations

import numpy as np


def softmax(logits: np.ndarray, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """Numerically stable softmax of logits / temperature; -inf entries get probability exactly 0."""
    if not temperature > 0:
        raise ValueError("temperature must be a positive number")
    scaled = np.asarray(logits, dtype=np.float64) / temperature
    shifted = scaled - np.max(scaled, axis=axis, keepdims=True)
    weights = np.exp(shifted)
    return weights / np.sum(weights, axis=axis, keepdims=True)


def causal_mask(T: int) -> np.ndarray:
    """Boolean T × T matrix, True where query i may read key j (j <= i): the lower triangle."""
    return np.tril(np.ones((T, T), dtype=bool))


def attend(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    scale: bool = True,
    causal: bool = True,
    key_padding: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Run one head and return each step the primer prints, named like TransformerLens hook points.

    `key_padding` is a boolean (..., T) array, True at padded positions, which no query may read.
    Returns raw QKᵀ (`attn_scores_raw`), scores ÷ √d_k (`attn_scores`), masked scores (`attn_scores_masked`),
    the attention weights (`pattern`) and the weighted sum of values (`z`).
    """
    T, d_k = q.shape[-2], q.shape[-1]
    raw = q @ np.swapaxes(k, -1, -2)
    scores = raw / np.sqrt(d_k) if scale else raw
    allowed = causal_mask(T) if causal else np.ones((T, T), dtype=bool)
    if key_padding is not None:
        allowed = allowed & ~np.asarray(key_padding, dtype=bool)[..., None, :]
        # A padded query row would see nothing at all; let it read itself so its (ignored) row stays finite.
        allowed = allowed | np.eye(T, dtype=bool)
    masked = np.where(allowed, scores, -np.inf)
    pattern = softmax(masked, axis=-1)
    return {
        "attn_scores_raw": raw,
        "attn_scores": scores,
        "attn_scores_masked": masked,
        "pattern": pattern,
        "z": pattern @ v,
    }
