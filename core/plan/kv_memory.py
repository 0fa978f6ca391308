"""KV-cache memory of real LLMs: bytes per token, per user and per GPU, the GPU presets, a deployment's settings and
how many users one model copy's memory holds. The bottom of the planner: the time model and the plan build on it.

Bytes internally (float64, exact for every whole-byte case); `GB` = 10⁹ and `GIB` = 2³⁰ only at the edges. A GPU's
memory is what its driver reports (MiB), not the size on the box. The formulas
are the serving runtimes' (shared/reference/kv-cache.md): 2 · L · n_kv · head_dim · bytes per token for MHA/GQA/MQA,
L · (kv_lora_rank + qk_rope_head_dim) · bytes for latent attention, min(T, W) tokens on sliding-window layers,
max(1, n_kv // TP) KV heads per GPU, paged blocks and a vLLM-style utilisation budget.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from core.assets import ASSETS
from core.plan.model_config import ModelConfig, param_count

ASSET = ASSETS / "gpu_presets.json"
GB = 1e9  # decimal gigabyte: what vendors sell
GIB = 2.0**30  # binary gibibyte: what nvidia-smi and most tools print
MIB = 2.0**20  # binary mebibyte: the unit the GPU drivers report memory in
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
    """One accelerator: its size as sold (the GB on the box) and its memory as the driver reports it (MiB), peak
    bandwidth, dense BF16 and FP8 throughput (0 = no FP8), the GPU-to-GPU link tensor parallelism uses (GB/s each way),
    and the sources."""

    id: str
    name: str
    memory_gb: float
    bandwidth_tb_s: float
    bf16_tflops: float
    source: str
    memory_mib: float = 0.0
    memory_source: str = ""
    memory_kind: str = ""  # HBM2, HBM2e, HBM3, HBM3e (binary gigabytes on the box) or GDDR6
    fp8_tflops: float = 0.0
    link: str = ""
    link_gb_s: float = 0.0
    link_source: str = ""

    @property
    def memory_bytes(self) -> float:
        """Memory in bytes as the driver reports it (MiB = 2²⁰ bytes): HBM parts carry binary gigabytes, so an
        '80 GB' H100 holds 81,559 MiB = 85.5·10⁹ bytes. Falls back to the size as sold (10⁹ bytes) without a figure."""
        return self.memory_mib * MIB if self.memory_mib else self.memory_gb * GB

    @property
    def is_hbm(self) -> bool:
        """High-bandwidth memory (stacked, sold in binary gigabytes), as opposed to GDDR cards such as the L4."""
        return self.memory_kind.startswith("HBM")

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
    engine: str = "vllm"  # the serving engine's id (core.plan.engines): its batch limits, reserve and preemption
    memory_rule: str = "total"  # 'total': KV = utilisation · memory − weights; 'free': utilisation · (memory − weights)


def kv_budget(dep: Deployment, weights_gpu: float) -> float:
    """KV-cache bytes one GPU gets under the deployment's engine rule: vLLM and SGLang give it a fraction of the TOTAL
    memory less the weights, TensorRT-LLM a fraction of the memory FREE after the weights (negative: nothing fits)."""
    total = dep.gpu.memory_bytes
    if dep.memory_rule == "free":
        return dep.utilisation * (total - weights_gpu)
    return dep.utilisation * total - weights_gpu


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


@dataclass(frozen=True)
class Memory:
    """One GPU of one model copy: the weights' share, the engine's reserve, the KV budget, the shared prefix's and one
    user's own KV bytes, and how many users fit (0 when not even one does)."""

    weights_gpu: float
    reserve_gpu: float
    budget_gpu: float
    prefix_gpu: float
    unique_gpu: float
    max_users: int

    @property
    def fits(self) -> bool:
        """At least one user fits beside the weights and the shared prefix."""
        return self.max_users > 0


def memory(config: ModelConfig, dep: Deployment) -> Memory:
    """Split one GPU's memory for this deployment and count the users it holds; ValueError names an impossible one."""
    problem = tp_problem(config, dep.tp)
    if problem:
        raise ValueError(problem)
    if not 0 < dep.utilisation <= 1:
        raise ValueError("utilisation must be in (0, 1]")
    weights_gpu = weights_bytes(param_count(config), dep.weight_bits) / dep.tp
    total = dep.gpu.memory_bytes
    budget = kv_budget(dep, weights_gpu)
    width_gpu = kv_values_per_token_layer(config, dep.tp) * element_bytes(dep.kv_dtype)
    prefix_gpu = config.full_layers * _shared_prefix_tokens(dep, dep.block) * width_gpu
    unique_gpu = kv_bytes_per_sequence(config, dep.context, dep.kv_dtype, tp=dep.tp, block=dep.block) - prefix_gpu
    if unique_gpu <= 0 or dep.users < 1:
        raise ValueError(scenario_problem(dep) or "each user needs at least one token of their own")
    fits = budget > prefix_gpu + unique_gpu
    users = int((budget - prefix_gpu) // unique_gpu) if fits else 0
    return Memory(weights_gpu, total - weights_gpu - budget, budget, prefix_gpu, unique_gpu, users)
