"""The KV cache at work (primer §3) on the single-head layer of §5: prefill, then one token at a time.

Prefill computes Q, K, V for every prompt token and keeps K and V; each later token computes only its own Q, K, V,
appends one K row and one V row and attends over the cache. It uses the same primitives as the forward pass, with the
same summation order (`core.explain.attention.product_for`, `attend`), so with the §5 configuration's fixed-order
sums every cached row equals the full pass to the last bit; `check_against_forward` measures that against the forward
pass recomputed from scratch on the tokens so far. Not to be confused with core/plan/kv_cache.py (deployment memory
model).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.explain.attention import attend, product_for
from core.explain.transformer import Model, forward


@dataclass(frozen=True)
class CacheStep:
    """One step of cached generation: step 0 is the prefill, step s ≥ 1 feeds token number prefill + s."""

    step: int
    fresh: tuple[int, ...]  # positions whose Q, K, V were computed at this step (their K, V rows were appended)
    q: np.ndarray  # fresh queries (n_fresh × d_k): used once for this step's attention, then discarded
    k_cache: np.ndarray  # the whole K cache after this step (t × d_k)
    v_cache: np.ndarray  # the whole V cache after this step (t × d_v)
    pattern: np.ndarray  # weights of the fresh queries over the cache (n_fresh × t)
    out: np.ndarray  # the fresh rows of h¹ = x + attention · W_O (n_fresh × d_model)
    multiply_adds: int  # work done at this step with the cache
    multiply_adds_without_cache: int  # work to recompute the whole sequence so far from scratch

    @property
    def cache_length(self) -> int:
        """Rows in the K (and V) cache after this step."""
        return int(self.k_cache.shape[0])

    @property
    def reused(self) -> tuple[int, ...]:
        """Positions whose K and V rows were read from the cache, not recomputed."""
        return tuple(range(self.fresh[0]))


@dataclass(frozen=True)
class Generation:
    """All steps of a cached run and the outputs they produced, in position order."""

    steps: tuple[CacheStep, ...]

    @property
    def outputs(self) -> np.ndarray:
        """h¹ for every position, stacked from the steps (T × d_model)."""
        return np.vstack([step.out for step in self.steps])

    @property
    def status(self) -> np.ndarray:
        """Cache row × step grid: 2 where the row was computed at that step, 1 where reused, 0 not yet there."""
        T = self.steps[-1].cache_length
        grid = np.zeros((T, len(self.steps)), dtype=int)
        for column, step in enumerate(self.steps):
            grid[list(step.reused), column] = 1
            grid[list(step.fresh), column] = 2
        return grid

    def total_multiply_adds(self, upto: int | None = None) -> tuple[int, int]:
        """Multiply-adds summed over steps 0 … upto (all by default): (with the cache, recomputing every step)."""
        chosen = self.steps[: None if upto is None else upto + 1]
        return sum(s.multiply_adds for s in chosen), sum(s.multiply_adds_without_cache for s in chosen)


def multiply_adds(n_queries: int, n_keys: int, d_model: int, d_head: int) -> int:
    """Multiply-adds of one single-head layer for n_queries new rows attending over n_keys cached rows.

    Q, K, V projections of the new rows, their scores against every key, the weighted sum of values and W_O.
    The full pass computes the whole T × T score matrix before masking, so recomputing counts it whole too.
    """
    projections = 3 * n_queries * d_model * d_head
    attention = 2 * n_queries * n_keys * d_head
    return projections + attention + n_queries * d_head * d_model


def _weights(model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    config = model.config
    if (config.n_layers, config.n_heads, config.d_ff) != (1, 1, 0) or config.layer_norm or config.positions:
        raise ValueError("cached generation is built for the §5 layer: 1 layer, 1 head, no LayerNorm, MLP, positions")
    if config.biases:
        raise ValueError("cached generation is built for the §5 layer, which has no biases")
    p = model.params
    return p["blocks.0.attn.W_Q"], p["blocks.0.attn.W_K"], p["blocks.0.attn.W_V"], p["blocks.0.attn.W_O"]


def generate(model: Model, embeddings: np.ndarray, prefill: int, *, scale: bool = True) -> Generation:
    """Prefill the first `prefill` rows of `embeddings` (T × d_model), then feed the others one at a time.

    With the config's `ordered_sums` (the §5 example's), every step matches the full pass to the last bit.
    """
    W_Q, W_K, W_V, W_O = _weights(model)
    ordered = model.config.ordered_sums  # the forward pass's summation order, so the two can agree exactly
    times = product_for(ordered)
    X = np.asarray(embeddings, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != W_Q.shape[0] or not np.isfinite(X).all():
        raise ValueError(f"embeddings must be a T × {W_Q.shape[0]} matrix of finite numbers")
    T = X.shape[0]
    if not 1 <= prefill <= T:
        raise ValueError(f"the prefill must hold between 1 and {T} tokens")
    d_head = W_Q.shape[1]
    steps, k_cache, v_cache = [], np.empty((0, d_head)), np.empty((0, W_V.shape[1]))
    bounds = [(0, prefill)] + [(t, t + 1) for t in range(prefill, T)]
    for index, (start, stop) in enumerate(bounds):
        x = X[start:stop]
        q = times(x, W_Q)
        k_cache = np.vstack([k_cache, times(x, W_K)])
        v_cache = np.vstack([v_cache, times(x, W_V)])
        steps.append(_step(index, start, stop, q, k_cache, v_cache, x, W_O, scale, ordered))
    return Generation(steps=tuple(steps))


def _step(index, start, stop, q, k_cache, v_cache, x, W_O, scale, ordered) -> CacheStep:
    # The new rows are the newest of the cached positions: the causal mask lets each read itself and the past.
    heads = attend(q, k_cache, v_cache, scale=scale, causal=True, ordered=ordered)
    out = x + product_for(ordered)(heads["z"], W_O)
    d_model, d_head = x.shape[1], q.shape[1]
    arrays = {"q": q, "k_cache": k_cache, "v_cache": v_cache, "pattern": heads["pattern"], "out": out}
    for array in arrays.values():
        array.setflags(write=False)
    return CacheStep(
        step=index,
        fresh=tuple(range(start, stop)),
        multiply_adds=multiply_adds(stop - start, stop, d_model, d_head),
        multiply_adds_without_cache=multiply_adds(stop, stop, d_model, d_head),
        **arrays,
    )


def check_against_forward(model: Model, embeddings: np.ndarray, run: Generation, *, scale: bool = True) -> float:
    """Largest |cached − recomputed| over all steps: each step's fresh rows against forward() on the tokens so far."""
    X = np.asarray(embeddings, dtype=np.float64)
    worst = 0.0
    for step in run.steps:
        stop = step.fresh[-1] + 1
        recomputed = forward(model, embeddings=X[:stop], scale=scale)["blocks.0.hook_resid_post"][step.fresh[0] : stop]
        worst = max(worst, float(np.max(np.abs(step.out - recomputed))))
    return worst


def made_up_rows(reference: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n random input rows for a longer generation than the primer prints: normal with the reference rows' spread.

    Rounded to two decimals like the primer's rows. They are invented, and the page labels them so.
    """
    rows = np.asarray(reference, dtype=np.float64)
    return np.round(np.random.default_rng(seed).normal(0.0, float(rows.std()), (n, rows.shape[1])), 2)


@dataclass(frozen=True)
class CacheShape:
    """The symbols of the §4 KV-cache size formula."""

    L: int  # layers
    T: int  # tokens in the context
    h: int  # heads (with K and V, not grouped-query sharing)
    d_k: int  # per-head dimension
    bytes_per_element: int

    @property
    def bytes(self) -> int:
        """2 · L · T · h · d_k · bytes: K and V for every layer, token and head."""
        return 2 * self.L * self.T * self.h * self.d_k * self.bytes_per_element


PRIMER_7B = CacheShape(L=32, T=32768, h=32, d_k=128, bytes_per_element=2)  # primer §4: a 7B model, FP16, 32K context
