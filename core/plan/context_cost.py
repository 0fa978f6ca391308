"""What a longer context costs one model copy, read from the engine's own curves: one user's KV cache (does it grow in
a straight line, more slowly, or stop growing past a sliding window?), the users a copy carries at the context and at
half of it, and one user's decoding speed at a few context lengths (the serving-time model: every new token reads the
weights and the whole cache). The cost page's sentences about context are written from this, for every model,
custom ones included, so they cannot claim a straight line or a flat speed the curves do not show."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from core.plan import kv_cache as kv
from core.plan.model_config import ModelConfig

SPEED_CONTEXTS = (4096, 32768, 131072)  # the context lengths long-context products are sold at (4K, 32K, 128K)
LINEAR = 1.9  # doubling the context multiplies the cache by at least this: a straight line (block rounding aside)
FLAT = 1.0 + 1e-9  # ... by at most this: the cache has stopped growing


@dataclass(frozen=True)
class ContextCost:
    """One model copy's cost of context at the deployment's context T.

    kv_ratio: one user's cache at 2T over its cache at T (2 = a straight line, 1 = flat). flat_from: the context from
    which one user's cache stays the same to the end of the chart's sweep (a sliding window on every layer), None when
    it keeps growing. users / users_half: the most users one copy carries at T and at T/2. speeds: (context, one user's
    decoding tokens/s) at SPEED_CONTEXTS and T, where the model is built for that context and one user fits."""

    context: int
    half: int
    kv_ratio: float
    flat_from: int | None
    users: int
    users_half: int
    speeds: tuple[tuple[int, float], ...]

    @property
    def growth(self) -> str:
        """'straight', 'slower' or 'flat': how one user's cache grows when the context doubles from T."""
        return "flat" if self.kv_ratio <= FLAT else "straight" if self.kv_ratio >= LINEAR else "slower"

    @property
    def users_ratio(self) -> float | None:
        """Users at T/2 over users at T (None when not even one user fits at T)."""
        return self.users_half / self.users if self.users else None


def flat_from(contexts: np.ndarray, values: np.ndarray) -> int | None:
    """The first context from which `values` stay equal to their last value to the end of the sweep, when that span
    holds at least two points and the last value is positive; None otherwise (the curve keeps moving)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2 or values[-1] <= 0:
        return None
    same = np.isclose(values, values[-1], rtol=1e-12, atol=0.0)
    moving = np.flatnonzero(~same)
    start = 0 if moving.size == 0 else int(moving[-1]) + 1
    return int(contexts[start]) if start < values.size - 1 else None


def one_user_speed(config: ModelConfig, dep: kv.Deployment, context: int) -> float:
    """Decoding tokens/s of one user alone at `context` tokens on this copy (the serving-time model)."""
    at = replace(dep, context=context, prefix=min(dep.prefix, context - 1))
    return float(1.0 / kv.decode_seconds(config, at, np.array([1.0]))[0])


@lru_cache(maxsize=64)  # 64 × ~0.5 kB
def context_cost(config: ModelConfig, dep: kv.Deployment) -> ContextCost:
    """The cost of context for one model copy at the deployment's context (see ContextCost); cached: configs and
    deployments are frozen."""
    t = dep.context
    now = kv.plan(config, dep)
    doubled = kv.plan(config, kv.at_context(dep, 2)).kv_per_user
    half = kv.at_context(dep, 0.5)
    contexts = kv.context_grid(t)
    curve = kv.kv_sweep(config, contexts, dep.kv_dtype, tp=dep.tp, block=dep.block)
    candidates = sorted({*SPEED_CONTEXTS, t})
    built = [c for c in candidates if not config.max_context or c <= config.max_context]
    fits = kv.users_vs_context(config, dep, np.array(built, dtype=np.int64)) >= 1 if built else np.array([])
    speeds = tuple((c, one_user_speed(config, dep, c)) for c, ok in zip(built, fits, strict=True) if ok)
    return ContextCost(
        context=t,
        half=half.context,
        kv_ratio=doubled / now.kv_per_user if now.kv_per_user else 1.0,
        flat_from=flat_from(contexts, curve),
        users=now.max_users,
        users_half=kv.plan(config, half).max_users,
        speeds=speeds,
    )
