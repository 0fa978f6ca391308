"""Serving engines' defaults (vLLM, TensorRT-LLM, SGLang) as frozen profiles, and the KV-cache memory each gives a GPU.

An engine decides how much memory the KV cache gets (vLLM and SGLang: a fraction of TOTAL memory less the weights and
the runtime; TensorRT-LLM: a fraction of the memory FREE after them), its block size, how many sequences one step runs,
how many prompt tokens a step takes (chunked prefill), what it reserves for an answer at admission and what it does when
the cache runs full. The profiles live in assets/engine_profiles.json, each default with its reason and source.

Sits on KV memory (core.plan.kv_memory); the traffic simulator builds on it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import cache

from core.assets import ASSETS
from core.plan import kv_memory as kv
from core.plan.model_config import ModelConfig, param_count

ASSET = ASSETS / "engine_profiles.json"
RULES = ("total", "free")
PREEMPTION = ("recompute", "none")


@dataclass(frozen=True)
class EngineProfile:
    """One engine's defaults, read like vLLM's CacheConfig / SchedulerConfig: each field's reason is in `reasons`.

    memory_rule 'total': KV = fraction · total − weights − runtime; 'free': KV = fraction · (total − weights − runtime).
    admission_reserve: the share of a request's answer whose blocks must be free before it is admitted (0 = prompt only,
    1 = prompt and whole answer). preemption 'recompute': the newest running request gives its blocks back and is
    recomputed later; 'none': never needed, the reserve guarantees the blocks."""

    id: str
    name: str
    version: str
    docs: str
    memory_rule: str
    memory_fraction: float
    fraction_by_tp: tuple[tuple[int, float], ...]
    runtime_gib: float
    block_tokens: int
    max_batch: int
    token_budget: int
    small_gpu_max_batch: int
    small_gpu_token_budget: int
    small_gpu_below_gib: float
    small_gpu_names: tuple[str, ...]
    admission_reserve: float
    preemption: str
    reasons: tuple[tuple[str, str], ...]
    group_aware_decode_since: str = ""  # first version whose decode attention reads a KV head once per query group

    def fraction(self, tp: int = 1) -> float:
        """The memory fraction at this tensor-parallel size (SGLang lowers it as TP grows)."""
        value = self.memory_fraction
        for at_least, fraction in self.fraction_by_tp:
            if tp >= at_least:
                value = fraction
        return value

    def small(self, gpu: kv.Gpu) -> bool:
        """Whether the engine picks its smaller batch defaults on this GPU (by memory, or by name)."""
        return gpu.memory_bytes / kv.GIB < self.small_gpu_below_gib or any(n in gpu.name for n in self.small_gpu_names)

    def limits(self, gpu: kv.Gpu) -> tuple[int, int]:
        """(most sequences per step, prompt-and-decode tokens per step) this engine defaults to on `gpu`."""
        if self.small(gpu):
            return self.small_gpu_max_batch, self.small_gpu_token_budget
        return self.max_batch, self.token_budget

    def kv_passes(self, version: str, config: ModelConfig) -> float:
        """How many times a decode step of this engine `version` reads each cached key and value: the query heads per
        KV head before `group_aware_decode_since` (each query head reads its KV head again), else 1. A version that
        does not start with a number (unstated, or a product's own) counts as a recent one."""
        if not self.group_aware_decode_since or _version(version) is None:
            return 1.0
        if _version(version) >= _version(self.group_aware_decode_since):
            return 1.0
        return 1.0 if config.is_mla else config.n_heads / max(config.n_kv_heads, 1)

    def reason(self, field: str) -> str:
        """Why this default is what it is, with its source."""
        return dict(self.reasons)[field]


def _profile(entry: dict) -> EngineProfile:
    if entry["memory_rule"] not in RULES or entry["preemption"] not in PREEMPTION:
        raise ValueError(f"{entry['id']}: unknown memory rule or preemption")
    return EngineProfile(
        id=entry["id"],
        name=entry["name"],
        version=entry["version"],
        docs=entry["docs"],
        memory_rule=entry["memory_rule"],
        memory_fraction=float(entry["memory_fraction"]),
        fraction_by_tp=tuple((int(tp), float(f)) for tp, f in entry["fraction_by_tp"]),
        runtime_gib=float(entry["runtime_gib"]),
        block_tokens=int(entry["block_tokens"]),
        max_batch=int(entry["max_batch"]),
        token_budget=int(entry["token_budget"]),
        small_gpu_max_batch=int(entry["small_gpu_max_batch"]),
        small_gpu_token_budget=int(entry["small_gpu_token_budget"]),
        small_gpu_below_gib=float(entry["small_gpu_below_gib"]),
        small_gpu_names=tuple(entry["small_gpu_names"]),
        admission_reserve=float(entry["admission_reserve"]),
        preemption=entry["preemption"],
        reasons=tuple(entry["reasons"].items()),
        group_aware_decode_since=str(entry.get("group_aware_decode_since", "")),
    )


def _version(text: str) -> tuple[int, ...] | None:
    """'0.6.1' -> (0, 6, 1); None when the text does not start with a version number."""
    match = re.match(r"(\d+(?:\.\d+)*)", text.strip())
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def by_name(name: str) -> EngineProfile:
    """The profile whose name opens `name` ('TensorRT-LLM', 'vLLM', 'SGLang', 'TensorRT-LLM (NVIDIA NIM)')."""
    for p in profiles().values():
        if name.startswith(p.name):
            return p
    raise ValueError(f"engine: unknown engine {name!r}; choose one of {', '.join(p.name for p in profiles().values())}")


@cache
def profiles() -> dict[str, EngineProfile]:
    """The engine profiles by id (vllm, trtllm, sglang), from assets/engine_profiles.json."""
    with ASSET.open(encoding="utf-8") as handle:
        return {entry["id"]: _profile(entry) for entry in json.load(handle)["engines"]}


def profile(engine_id: str) -> EngineProfile:
    """One profile by id; ValueError names the field and the choices."""
    try:
        return profiles()[engine_id]
    except KeyError:
        raise ValueError(f"engine: unknown engine {engine_id!r}; choose one of {', '.join(profiles())}") from None


def kv_budget_bytes(
    engine: EngineProfile, total: float, weights: float, runtime: float | None = None, tp: int = 1
) -> float:
    """KV-cache bytes one GPU gets under the engine's rule, from its total memory, its share of the weights and the
    runtime memory (activations, graphs, context; the profile's estimate when None). Negative: nothing fits."""
    other = weights + (engine.runtime_gib * kv.GIB if runtime is None else runtime)
    if engine.memory_rule == "free":
        return engine.fraction(tp) * (total - other)
    return engine.fraction(tp) * total - other


def kv_capacity_tokens(
    engine: EngineProfile, config: ModelConfig, gpu: kv.Gpu, tp: int, weight_bits: int, kv_dtype: str
) -> int:
    """Tokens the KV cache of one model copy holds (whole blocks), every layer counted at full width."""
    problem = kv.tp_problem(config, tp)
    if problem:
        raise ValueError(f"tp: {problem}")
    weights_gpu = kv.weights_bytes(param_count(config), weight_bits) / tp
    budget = kv_budget_bytes(engine, gpu.memory_bytes, weights_gpu, tp=tp)
    per_token = kv.kv_bytes_per_token(config, kv_dtype, tp=tp)
    if budget <= 0:
        return 0
    return int(budget // (per_token * engine.block_tokens)) * engine.block_tokens


def with_engine(dep: kv.Deployment, engine_id: str) -> kv.Deployment:
    """The deployment served by this engine: its id and its KV memory rule (the fraction stays the deployment's
    utilisation, the page's 'Memory the engine may use'); ValueError names an unknown engine."""
    return replace(dep, engine=profile(engine_id).id, memory_rule=profile(engine_id).memory_rule)


def for_deployment(dep: kv.Deployment) -> EngineProfile:
    """The deployment's engine with the deployment's own memory settings: its fraction (utilisation) at every TP,
    its block size and no runtime beyond the reserve, so the simulator's KV cache is the one the memory rule gives."""
    return replace(
        profile(dep.engine),
        memory_fraction=dep.utilisation,
        fraction_by_tp=(),
        block_tokens=dep.block,
        runtime_gib=0.0,
    )
