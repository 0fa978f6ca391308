"""KV-cache and deployment memory / cost model for real LLMs: bytes per token, per user, per GPU, users and $ per token.

Bytes internally (float64, exact for every whole-byte case); `GB` = 10⁹ and `GIB` = 2³⁰ only at the edges. The formulas
are the serving runtimes' (shared/reference/kv-cache.md): 2 · L · n_kv · head_dim · bytes per token for MHA/GQA/MQA,
L · (kv_lora_rank + qk_rope_head_dim) · bytes for latent attention, min(T, W) tokens on sliding-window layers,
max(1, n_kv // TP) KV heads per GPU, paged blocks, a vLLM-style utilisation budget and a memory-bandwidth decode bound.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

from core.model_config import ModelConfig, param_count

ASSET = Path(__file__).resolve().parent.parent / "assets" / "gpu_presets.json"
GB = 1e9  # decimal gigabyte: what vendors sell
GIB = 2.0**30  # binary gibibyte: what nvidia-smi and most tools print
DTYPE_BYTES: dict[str, float] = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
WEIGHT_BITS = (16, 8, 4)
TP_OPTIONS = (1, 2, 4, 8, 16, 32, 64)


def to_gb(n_bytes: float) -> float:
    """Bytes in decimal gigabytes (10⁹)."""
    return n_bytes / GB


def to_gib(n_bytes: float) -> float:
    """Bytes in binary gibibytes (2³⁰)."""
    return n_bytes / GIB


def element_bytes(dtype: str) -> float:
    """Bytes per stored K/V element for a KV-cache type name (fp32, fp16, bf16, fp8, int8, int4)."""
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise ValueError(f"unknown KV element type {dtype!r}; choose one of {', '.join(DTYPE_BYTES)}") from None


# --------------------------------------------------------------------------------------------------- KV size
def kv_heads_per_gpu(config: ModelConfig, tp: int = 1) -> int:
    """KV heads each GPU holds under tensor parallelism: max(1, n_kv // TP) (1 for a latent, held whole)."""
    return 1 if config.is_mla else max(1, config.n_kv_heads // tp)


def kv_values_per_token_layer(config: ModelConfig, tp: int = 1) -> int:
    """Numbers cached per token per layer on one GPU: 2 · heads · head_dim (K and V), or the latent (no factor 2)."""
    if config.is_mla:
        return config.kv_lora_rank + config.qk_rope_head_dim
    return 2 * kv_heads_per_gpu(config, tp) * config.head_dim


def kv_bytes_per_token(config: ModelConfig, dtype: str = "fp16", tp: int = 1) -> float:
    """KV bytes one new token adds on one GPU across all layers, before any sliding-window cap."""
    return config.n_layers * kv_values_per_token_layer(config, tp) * element_bytes(dtype)


def replication(config: ModelConfig, tp: int) -> float:
    """Copies of each KV value stored across a TP group: 1 when heads split evenly, TP / n_kv when TP > n_kv."""
    if config.is_mla:
        return float(tp)
    return tp * kv_heads_per_gpu(config, tp) / config.n_kv_heads


def tp_problem(config: ModelConfig, tp: int) -> str | None:
    """Why a tensor-parallel size cannot run this model (heads must split evenly), or None when it can."""
    if config.n_heads % tp:
        return f"tensor parallelism {tp} does not divide the {config.n_heads} attention heads"
    if not config.is_mla and config.n_kv_heads % tp and tp % config.n_kv_heads:
        return f"tensor parallelism {tp} and the {config.n_kv_heads} KV heads do not divide one another"
    return None


def _rounded(tokens: np.ndarray | int, block: int) -> np.ndarray:
    """Tokens actually allocated when memory comes in blocks of `block` tokens: ceil(T / block) · block."""
    return np.ceil(np.asarray(tokens, dtype=np.float64) / block) * block


def kv_sweep(
    config: ModelConfig, contexts: np.ndarray, dtype: str = "fp16", *, tp: int = 1, block: int = 1
) -> np.ndarray:
    """KV bytes of one sequence on one GPU for every context length in `contexts` (vectorised, block-rounded)."""
    t = np.asarray(contexts, dtype=np.float64)
    per_token_layer = kv_values_per_token_layer(config, tp) * element_bytes(dtype)
    held = config.full_layers * _rounded(t, block)
    if config.sliding_layers:
        held = held + config.sliding_layers * _rounded(np.minimum(t, config.sliding_window), block)
    return held * per_token_layer


def kv_sweep_many(
    configs: list[ModelConfig], contexts: np.ndarray, dtype: str = "fp16", *, block: int = 1
) -> np.ndarray:
    """KV bytes per sequence for several models at once: shape (models, contexts)."""
    t = np.asarray(contexts, dtype=np.float64)
    b = element_bytes(dtype)
    width = np.array([kv_values_per_token_layer(c) * b for c in configs])[:, None]
    full = np.array([c.full_layers for c in configs], dtype=np.float64)[:, None]
    sliding = np.array([c.sliding_layers for c in configs], dtype=np.float64)[:, None]
    window = np.array([c.sliding_window or np.inf for c in configs])[:, None]
    held = full * _rounded(t, block)[None, :] + sliding * _rounded(np.minimum(t[None, :], window), block)
    return held * width


def kv_bytes_per_sequence(
    config: ModelConfig, context: int, dtype: str = "fp16", *, tp: int = 1, block: int = 1
) -> float:
    """KV bytes of one sequence of `context` tokens on one GPU (sliding layers capped, blocks rounded up)."""
    return float(kv_sweep(config, np.array([context]), dtype, tp=tp, block=block)[0])


# --------------------------------------------------------------------------------------------------- hardware
@dataclass(frozen=True)
class Gpu:
    """One accelerator: memory as sold (decimal GB), peak bandwidth, dense BF16 and FP8 throughput (0 = no FP8), the
    GPU-to-GPU link tensor parallelism uses (GB/s each way), and the sources."""

    id: str
    name: str
    memory_gb: float
    bandwidth_tb_s: float
    bf16_tflops: float
    source: str
    fp8_tflops: float = 0.0
    link: str = ""
    link_gb_s: float = 0.0
    link_source: str = ""

    @property
    def memory_bytes(self) -> float:
        """Memory in bytes (vendors' GB are 10⁹ bytes)."""
        return self.memory_gb * GB

    @property
    def bandwidth_bytes(self) -> float:
        """Peak memory bandwidth in bytes per second."""
        return self.bandwidth_tb_s * 1e12


@cache
def _asset() -> dict:
    with ASSET.open(encoding="utf-8") as handle:
        return json.load(handle)


@cache
def gpus() -> dict[str, Gpu]:
    """The GPU presets by id, from assets/gpu_presets.json."""
    return {entry["id"]: Gpu(**entry) for entry in _asset()["gpus"]}


@cache
def defaults() -> dict[str, float | str]:
    """The calculator's documented starting assumptions (utilisation, block, efficiency, price, GPU)."""
    return {key: value for key, value in _asset()["defaults"].items() if key != "reasons"}


def default_reasons() -> dict[str, str]:
    """Why each default is what it is."""
    return dict(_asset()["defaults"]["reasons"])


# --------------------------------------------------------------------------------------------------- deployment
@dataclass(frozen=True)
class Deployment:
    """A serving plan: GPU type, tensor-parallel size per model copy, the workload and the engine's settings."""

    gpu: Gpu
    tp: int = 1
    context: int = 32768
    users: int = 16
    prefix: int = 0
    kv_dtype: str = "fp16"
    weight_bits: int = 16
    utilisation: float = 0.9
    block: int = 16
    efficiency: float = 0.9
    price_per_gpu_hour: float = 2.5
    mfu: float = 0.47
    layer_overhead_s: float = 135e-6


@dataclass(frozen=True)
class Plan:
    """Everything the calculator reports for one model under one deployment (bytes, counts, seconds, dollars).

    Per-GPU figures are for one GPU of one model copy (replica = TP GPUs). Cost is the best case for the load: the
    decode step comes from the calibrated serving-time model (core.serving) with every user at the full context, full
    batches and no queueing or idle time.
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


def weights_bytes(params: float, bits: int) -> float:
    """Memory of the weights at `bits` bits per parameter (16, 8 or 4)."""
    return params * bits / 8


def _shared_prefix_tokens(dep: Deployment, block: int) -> float:
    """Prefix tokens stored once per replica with prefix caching: only whole blocks can be shared."""
    return math.floor(min(dep.prefix, dep.context) / block) * block


def scenario_problem(dep: Deployment) -> str | None:
    """Why a deployment's numbers cannot be computed (no users; a shared prefix that fills the whole context, leaving
    no token of a user's own), or None: the users-per-GPU arithmetic divides by each user's own tokens."""
    if dep.users < 1:
        return "the number of concurrent users must be at least 1"
    if dep.context < 1:
        return "the context per user must be at least 1 token"
    if _shared_prefix_tokens(dep, dep.block) >= dep.context:
        return (
            f"the shared prompt ({dep.prefix:,} tokens) fills the whole context per user ({dep.context:,} tokens), "
            "leaving no tokens of a user's own; make the shared prompt shorter than the context"
        )
    return None


@lru_cache(maxsize=4096)
def plan(config: ModelConfig, dep: Deployment) -> Plan:
    """Memory per GPU (weights / KV / reserve / free), whether it fits, max users, tokens/s and $ per 1M tokens.

    Cached: configs and deployments are frozen, and the page asks for the same plans on every rerun.
    """
    problem = tp_problem(config, dep.tp)
    if problem:
        raise ValueError(problem)
    if not 0 < dep.utilisation <= 1:
        raise ValueError("utilisation must be in (0, 1]")
    params = param_count(config)
    weights = weights_bytes(params, dep.weight_bits)
    weights_gpu = weights / dep.tp
    memory = dep.gpu.memory_bytes
    reserve = (1 - dep.utilisation) * memory
    budget = dep.utilisation * memory - weights_gpu
    b = element_bytes(dep.kv_dtype)
    width_gpu = kv_values_per_token_layer(config, dep.tp) * b
    shared = _shared_prefix_tokens(dep, dep.block)
    per_user_gpu = kv_bytes_per_sequence(config, dep.context, dep.kv_dtype, tp=dep.tp, block=dep.block)
    prefix_gpu = config.full_layers * shared * width_gpu
    unique_gpu = per_user_gpu - prefix_gpu
    if unique_gpu <= 0 or dep.users < 1:
        raise ValueError(scenario_problem(dep) or "each user needs at least one token of their own")
    fits = budget > prefix_gpu + unique_gpu
    max_users = int((budget - prefix_gpu) // unique_gpu) if fits else 0
    batch = min(dep.users, max_users)
    replicas = math.ceil(dep.users / max_users) if max_users else None
    kv_used = (prefix_gpu + batch * unique_gpu) if batch else 0.0
    free = memory - reserve - weights_gpu - kv_used
    step = tokens = cost = None
    if batch:
        step = float(decode_seconds(config, dep, np.array([batch]))[0])
        tokens = batch / step
        cost = 1e6 * dep.price_per_gpu_hour * dep.tp / 3600 / tokens
    full_user = kv_bytes_per_sequence(config, dep.context, dep.kv_dtype, block=dep.block)
    return Plan(
        params=params,
        weights_bytes=weights,
        weights_gpu=weights_gpu,
        reserve_gpu=reserve,
        kv_budget_gpu=budget,
        kv_per_token=kv_bytes_per_token(config, dep.kv_dtype),
        kv_per_user=full_user,
        kv_per_user_gpu=unique_gpu,
        prefix_gpu=prefix_gpu,
        tokens_allocated=float(_rounded(dep.context, dep.block)),
        replication=replication(config, dep.tp),
        heads_per_gpu=kv_heads_per_gpu(config, dep.tp),
        fits=fits,
        max_users=max_users,
        batch=batch,
        replicas=replicas,
        gpus_needed=replicas * dep.tp if replicas else None,
        kv_used_gpu=kv_used,
        free_gpu=free,
        kv_total=(replicas or 0) * dep.tp * prefix_gpu + dep.users * unique_gpu * dep.tp,
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
    budget = dep.utilisation * dep.gpu.memory_bytes - weights_gpu
    width_gpu = kv_values_per_token_layer(config, dep.tp) * element_bytes(dep.kv_dtype)
    shared = np.floor(np.minimum(dep.prefix, t) / dep.block) * dep.block
    prefix = config.full_layers * shared * width_gpu
    unique = kv_sweep(config, t, dep.kv_dtype, tp=dep.tp, block=dep.block) - prefix
    own = unique > 0  # a prefix filling the whole context leaves no per-user tokens: no finite count there
    users = np.floor(np.divide(budget - prefix, unique, out=np.zeros_like(unique), where=own))
    return np.where(own & (budget > prefix + unique), users, 0.0)


def decode_seconds(config: ModelConfig, dep: Deployment, batches: np.ndarray) -> np.ndarray:
    """One decode step of one copy for each batch size, every user at the full context (core.serving's time model)."""
    from core import serving  # the time model builds on this module's KV sizes

    eff = serving.Efficiency(dep.mfu, dep.efficiency, dep.layer_overhead_s)
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
