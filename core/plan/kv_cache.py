"""The deployment plan of the cost page: one model copy's memory (core.plan.kv_memory) and decode time
(core.plan.serving) turned into users, replicas, tokens/s and $ per 1M tokens, GPU options and budget effects.

It sits above both: the memory formulas and the time model never import it. The memory names are re-exported so a
page reads one module for its plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from core.plan import serving
from core.plan.kv_memory import (
    DTYPE_BYTES,
    GB,
    GIB,
    TP_OPTIONS,
    WEIGHT_BITS,
    Deployment,
    Gpu,
    Memory,
    _rounded,
    default_reasons,
    defaults,
    element_bytes,
    gpus,
    kv_budget,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    kv_heads_per_gpu,
    kv_sweep,
    kv_sweep_many,
    kv_values_per_token_layer,
    memory,
    replication,
    scenario_problem,
    to_gb,
    to_gib,
    tp_problem,
    weights_bytes,
)
from core.plan.model_config import ModelConfig, param_count

# The memory names a page reads through its plan, and this module's own.
__all__ = [
    "DTYPE_BYTES",
    "GB",
    "GIB",
    "TP_OPTIONS",
    "WEIGHT_BITS",
    "BudgetEffects",
    "Deployment",
    "Gpu",
    "GpuOption",
    "Memory",
    "Plan",
    "at_context",
    "batch_grid",
    "budget_effects",
    "compared_plans",
    "context_grid",
    "cost_per_user_hour",
    "cost_vs_batch",
    "decode_seconds",
    "default_reasons",
    "defaults",
    "element_bytes",
    "fitted_tp",
    "gpu_options",
    "gpus",
    "kv_bytes_per_sequence",
    "kv_bytes_per_token",
    "kv_heads_per_gpu",
    "kv_sweep",
    "kv_sweep_many",
    "kv_values_per_token_layer",
    "memory",
    "mha_equivalent_bytes_per_token",
    "plan",
    "replication",
    "scenario_problem",
    "smallest_tp",
    "to_gb",
    "to_gib",
    "tp_problem",
    "users_vs_context",
    "weights_bytes",
]


@dataclass(frozen=True)
class Plan:
    """Everything the calculator reports for one model under one deployment (bytes, counts, seconds, dollars).

    Per-GPU figures are for one GPU of one model copy (replica = TP GPUs). Cost is the best case for the load: the
    decode step comes from the calibrated serving-time model (core.plan.serving) with every user at the full context,
    full batches and no queueing or idle time.
    """

    params: int
    weights_bytes: float
    weights_gpu: float
    reserve_gpu: float
    kv_budget_gpu: float
    kv_per_token: float
    kv_per_user: float
    kv_per_user_gpu: float
    prefix_gpu: float
    tokens_allocated: float
    replication: float
    heads_per_gpu: int
    fits: bool
    max_users: int
    batch: int
    replicas: int | None
    gpus_needed: int | None
    kv_used_gpu: float
    free_gpu: float
    kv_total: float
    step_seconds: float | None
    tokens_per_second: float | None
    cost_per_million: float | None

    @property
    def users_per_gpu(self) -> float:
        """Concurrent users one GPU carries at this context (a replica's users / TP)."""
        return self.max_users / self.tp if self.tp else 0.0

    tp: int = 1


@lru_cache(maxsize=4096)  # 4,096 × ~0.5 kB
def plan(config: ModelConfig, dep: Deployment) -> Plan:
    """Memory per GPU (weights / KV / reserve / free), whether it fits, max users, tokens/s and $ per 1M tokens.

    Cached: configs and deployments are frozen, and the page asks for the same plans on every rerun.
    """
    m = memory(config, dep)
    params = param_count(config)
    weights = weights_bytes(params, dep.weight_bits)
    max_users = m.max_users
    batch = min(dep.users, max_users)
    replicas = math.ceil(dep.users / max_users) if max_users else None
    kv_used = (m.prefix_gpu + batch * m.unique_gpu) if batch else 0.0
    free = dep.gpu.memory_bytes - m.reserve_gpu - m.weights_gpu - kv_used
    step = tokens = cost = None
    if batch:
        step = float(decode_seconds(config, dep, np.array([batch]))[0])
        tokens = batch / step
        cost = 1e6 * dep.price_per_gpu_hour * dep.tp / 3600 / tokens
    full_user = kv_bytes_per_sequence(config, dep.context, dep.kv_dtype, block=dep.block)
    return Plan(
        params=params,
        weights_bytes=weights,
        weights_gpu=m.weights_gpu,
        reserve_gpu=m.reserve_gpu,
        kv_budget_gpu=m.budget_gpu,
        kv_per_token=kv_bytes_per_token(config, dep.kv_dtype),
        kv_per_user=full_user,
        kv_per_user_gpu=m.unique_gpu,
        prefix_gpu=m.prefix_gpu,
        tokens_allocated=float(_rounded(dep.context, dep.block)),
        replication=replication(config, dep.tp),
        heads_per_gpu=kv_heads_per_gpu(config, dep.tp),
        fits=m.fits,
        max_users=max_users,
        batch=batch,
        replicas=replicas,
        gpus_needed=replicas * dep.tp if replicas else None,
        kv_used_gpu=kv_used,
        free_gpu=free,
        kv_total=(replicas or 0) * dep.tp * m.prefix_gpu + dep.users * m.unique_gpu * dep.tp,
        step_seconds=step,
        tokens_per_second=tokens,
        cost_per_million=cost,
        tp=dep.tp,
    )


def smallest_tp(config: ModelConfig, dep: Deployment) -> int | None:
    """The smallest valid tensor-parallel size at which one user at this context fits, or None up to 64 GPUs."""
    for tp in TP_OPTIONS:
        if tp_problem(config, tp) is None and plan(config, replace(dep, tp=tp)).fits:
            return tp
    return None


def users_vs_context(config: ModelConfig, dep: Deployment, contexts: np.ndarray) -> np.ndarray:
    """Maximum concurrent users of one replica for each context length (0 where not even one fits)."""
    t = np.asarray(contexts, dtype=np.float64)
    weights_gpu = weights_bytes(param_count(config), dep.weight_bits) / dep.tp
    budget = kv_budget(dep, weights_gpu)
    width_gpu = kv_values_per_token_layer(config, dep.tp) * element_bytes(dep.kv_dtype)
    shared = np.floor(np.minimum(dep.prefix, t) / dep.block) * dep.block
    prefix = config.full_layers * shared * width_gpu
    unique = kv_sweep(config, t, dep.kv_dtype, tp=dep.tp, block=dep.block) - prefix
    own = unique > 0  # a prefix filling the whole context leaves no per-user tokens: no finite count there
    users = np.floor(np.divide(budget - prefix, unique, out=np.zeros_like(unique), where=own))
    return np.where(own & (budget > prefix + unique), users, 0.0)


def decode_seconds(config: ModelConfig, dep: Deployment, batches: np.ndarray) -> np.ndarray:
    """One decode step of one copy for each batch size, every user at the full context (the serving-time model)."""
    eff = replace(serving.default_efficiency(), mfu=dep.mfu, mbu=dep.efficiency, layer_overhead_s=dep.layer_overhead_s)
    setup = serving.Setup(config, dep.gpu, dep.tp, dep.weight_bits, dep.kv_dtype, eff)
    return serving.decode_step(setup, np.asarray(batches, dtype=np.float64), dep.context).seconds


def cost_vs_batch(config: ModelConfig, dep: Deployment, batches: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tokens/s of one replica at full batch and $ per 1M output tokens (best case for the load) per batch size."""
    n = np.asarray(batches, dtype=np.float64)
    step = decode_seconds(config, dep, n)
    tokens = n / step
    return tokens, 1e6 * dep.price_per_gpu_hour * dep.tp / 3600 / tokens


@dataclass(frozen=True)
class GpuOption:
    """One GPU type sized for the model: the smallest TP that fits, its users and tokens/s per GPU, break-even price."""

    gpu: Gpu
    tp: int | None
    users_per_gpu: float
    tokens_per_second_per_gpu: float | None
    break_even_price: float | None
    users_per_copy: int = 0


def gpu_options(config: ModelConfig, dep: Deployment) -> list[GpuOption]:
    """For every GPU preset: smallest TP that fits, and the hourly price at which it matches the chosen GPU's $/token.

    Cost per token = price / (tokens/s per GPU), so GPU B is cheaper per token than the chosen GPU A exactly when
    price_B < price_A · (tokens/s per GPU of B) / (tokens/s per GPU of A).
    """
    if not plan(config, dep).fits:
        tp = smallest_tp(config, dep)
        dep = replace(dep, tp=tp) if tp else dep
    reference = plan(config, dep)
    ref_rate = reference.tokens_per_second / dep.tp if reference.tokens_per_second else None
    rows = []
    for gpu in gpus().values():
        candidate = replace(dep, gpu=gpu)
        tp = smallest_tp(config, candidate)
        if tp is None:
            rows.append(GpuOption(gpu, None, 0.0, None, None))
            continue
        p = plan(config, replace(candidate, tp=tp))
        rate = p.tokens_per_second / tp if p.tokens_per_second else None
        even = dep.price_per_gpu_hour * rate / ref_rate if (rate and ref_rate) else None
        rows.append(GpuOption(gpu, tp, p.users_per_gpu, rate, even, p.max_users))
    return rows


def mha_equivalent_bytes_per_token(config: ModelConfig, dtype: str = "fp16") -> float:
    """KV bytes per token the same model would need with plain multi-head attention (every head keeps its K and V)."""
    if config.is_mla:
        per_layer = config.n_heads * (config.qk_nope_head_dim + config.qk_rope_head_dim + config.v_head_dim)
    else:
        per_layer = 2 * config.n_heads * config.head_dim
    return config.n_layers * per_layer * element_bytes(dtype)


def fitted_tp(config: ModelConfig, dep: Deployment) -> int | None:
    """The TP to compare a model at: the chosen one if the model fits there, else the smallest that fits.

    Falls back to the chosen TP when nothing up to 64 GPUs fits, and None when the heads cannot split over it.
    """
    valid = tp_problem(config, dep.tp) is None
    if valid and plan(config, dep).fits:
        return dep.tp
    return smallest_tp(config, dep) or (dep.tp if valid else None)


# --------------------------------------------------------------------------------------------------- what-ifs
def at_context(dep: Deployment, factor: float) -> Deployment:
    """The same deployment at `factor` × its context (at least one token): the 'double / halve the context' lines.

    A shared prompt longer than the new context is shortened to leave each user one token of their own."""
    context = max(1, int(dep.context * factor))
    return replace(dep, context=context, prefix=min(dep.prefix, context - 1))


def context_grid(context: int, points: int = 240) -> np.ndarray:
    """Context lengths the charts sweep: log-spaced from 256 tokens to 1M tokens or twice the chosen context."""
    return np.unique(np.geomspace(256, max(1_048_576, 2 * context), points).astype(np.int64))


def batch_grid(max_users: int, points: int = 200) -> np.ndarray:
    """Batch sizes the cost chart sweeps: every size from 1 to the users that fit, thinned to at most `points`."""
    return np.unique(np.linspace(1, max_users, min(max_users, points)).astype(np.int64))


def compared_plans(
    config: ModelConfig, dep: Deployment, others: list[ModelConfig]
) -> list[tuple[ModelConfig, Deployment, Plan]]:
    """The chosen model's plan, then each other model's at the chosen TP or the smallest that holds it (or skipped)."""
    rows = [(config, dep, plan(config, dep))]
    for other in others:
        tp = fitted_tp(other, dep) if other != config else None
        if tp is not None:
            other_dep = replace(dep, tp=tp)
            rows.append((other, other_dep, plan(other, other_dep)))
    return rows


def cost_per_user_hour(p: Plan, price_per_gpu_hour: float) -> float | None:
    """GPU cost of serving one concurrent user for an hour (a copy's GPUs shared by its users), None if none fit."""
    return price_per_gpu_hour * p.tp / p.max_users if p.max_users else None


@dataclass(frozen=True)
class BudgetEffects:
    """The finance what-ifs for one model, all at `tp` GPUs per copy (the chosen TP, or the fewest that hold it)."""

    tp: int
    base: Plan
    doubled: Plan
    fp8: Plan
    mha_bytes_per_token: float


def budget_effects(config: ModelConfig, dep: Deployment) -> BudgetEffects:
    """What doubling the context, an FP8 cache and plain multi-head attention would do to this deployment."""
    tp = fitted_tp(config, dep) or dep.tp
    at_tp = replace(dep, tp=tp)
    return BudgetEffects(
        tp=tp,
        base=plan(config, at_tp),
        doubled=plan(config, at_context(at_tp, 2)),
        fp8=plan(config, replace(at_tp, kv_dtype="fp8")),
        mha_bytes_per_token=mha_equivalent_bytes_per_token(config, dep.kv_dtype),
    )
