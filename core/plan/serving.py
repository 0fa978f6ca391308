"""Serving time and money: prefill and decode time on a GPU, a workload's model copies and bill, build vs buy.

A roofline model by parts, vectorised over batch size and context (numpy). Every forward pass (a prefill, a decode
step, a mixed step of decode tokens and a prompt chunk) costs the sum of:
- weights against matmul FLOPs, their own roofline: max(weight bytes read / (bandwidth × MBU), 2 · N_active · tokens /
  (peak × MFU)); a mixture of experts reads only the experts its routings touch per layer, E · (1 − (1 − k/E)^n);
- KV read against attention FLOPs, their own roofline: max(KV bytes the step's queries read / (bandwidth × MBU),
  attention FLOPs / (peak × MFU)); summed, not one max over the whole step, so a large batch's KV read no longer hides
  under the weight matmuls;
- tensor-parallel collectives: two ring all-reduces per layer of the step's activations, each a latency plus
  2 · (TP − 1)/TP of its bytes over the link at the link's efficiency (NVLink-class fabrics and PCIe apart);
- a fixed cost per layer: kernel launches and synchronisation.
Everything per GPU of one model copy (TP GPUs share weights, heads and FLOPs). Its efficiencies are fitted on published
measurements (core.plan.calibration): its speed is an estimate, not a bound.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache, lru_cache

import numpy as np

from core.assets import ASSETS
from core.plan import kv_memory as kv
from core.plan.model_config import ModelConfig, param_count

ACTIVATION_BYTES = 2.0  # activations travel between GPUs in 16-bit
SECONDS_PER_HOUR = 3600.0


# --------------------------------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class Efficiency:
    """What real engines reach: model FLOPs utilisation and model bandwidth utilisation (shares of the GPU's peaks), a
    fixed cost per layer of every forward pass (kernel launches, synchronisation), in seconds, the all-reduce's
    share of the link's peak and its latency, for NVLink-class fabrics and for PCIe, and what a decode kernel's
    repeated read of a KV head costs as a share of a first read (`reread_share`: 0 served free from cache, 1 from
    memory again; it matters only for kernels that read a KV head once per query head, `Setup.kv_passes`)."""

    mfu: float
    mbu: float
    layer_overhead_s: float = 0.0
    nvlink_efficiency: float = 1.0
    pcie_efficiency: float = 1.0
    nvlink_latency_s: float = 0.0
    pcie_latency_s: float = 0.0
    reread_share: float = 1.0

    def overhead(self, config: ModelConfig) -> float:
        """The fixed cost of one forward pass of this model."""
        return self.layer_overhead_s * config.n_layers

    def link(self, gpu: kv.Gpu) -> tuple[float, float]:
        """(share of the link's peak, seconds of latency) one all-reduce gets on this GPU's link."""
        if is_pcie(gpu):
            return self.pcie_efficiency, self.pcie_latency_s
        return self.nvlink_efficiency, self.nvlink_latency_s


def is_pcie(gpu: kv.Gpu) -> bool:
    """GPUs that talk over PCIe (no NVLink or Infinity Fabric between them)."""
    return gpu.link.startswith("PCIe")


@dataclass(frozen=True)
class Weights:
    """Parameters by how a forward pass reads them: always (attention, dense MLPs, shared experts, the output
    matrix), routed experts (one expert's parameters, on `moe_layers` layers, E experts, k per token), never (the
    input embedding table, of which a step gathers only its tokens' rows)."""

    always: float
    expert: float
    moe_layers: int
    n_experts: int
    per_token: int
    gathered: float


@lru_cache(maxsize=1024)  # 1,024 × ~0.5 kB
def weights(config: ModelConfig) -> Weights:
    """Split the model's parameters into what every step reads and what routing decides."""
    total = float(param_count(config))
    gathered = 0.0 if config.tied_embeddings else float(config.vocab_size * config.d_model)
    if not config.is_moe:
        return Weights(total - gathered, 0.0, 0, 0, 0, gathered)
    expert = float((3 if config.gated_mlp else 2) * config.d_model * config.expert_d_ff)
    moe_layers = config.n_layers - config.dense_layers
    routed = expert * config.n_experts * moe_layers
    return Weights(total - routed - gathered, expert, moe_layers, config.n_experts, config.experts_per_token, gathered)


def experts_touched(w: Weights, tokens: np.ndarray | float) -> np.ndarray:
    """Expected distinct experts per MoE layer that `tokens` routings of k experts each touch: E · (1 − (1 − k/E)^n)."""
    n = np.asarray(tokens, dtype=np.float64)
    if not w.n_experts:
        return np.zeros_like(n)
    return w.n_experts * (1.0 - (1.0 - w.per_token / w.n_experts) ** n)


def active_params(config: ModelConfig) -> float:
    """Parameters one token multiplies (2 FLOPs each): everything read always, plus its k routed experts."""
    w = weights(config)
    return w.always + w.expert * w.per_token * w.moe_layers


def weight_bytes_read(config: ModelConfig, tokens: np.ndarray | float, bits: int) -> np.ndarray:
    """Weight bytes a forward pass over `tokens` tokens reads from memory (whole model copy, all its GPUs)."""
    w = weights(config)
    params = w.always + w.expert * w.moe_layers * experts_touched(w, tokens)
    return params * bits / 8


def _attention_width(config: ModelConfig) -> int:
    """Numbers per head a query multiplies per context position: QKᵀ over d_k plus ·V over d_v (MLA: the latent)."""
    if config.is_mla:  # absorbed latent attention: scores over latent + rope key, values from the latent
        return 2 * config.kv_lora_rank + config.qk_rope_head_dim
    return 2 * config.head_dim


def held_layer_tokens(config: ModelConfig, context: np.ndarray | float) -> np.ndarray:
    """Cached (layer, token) pairs one query attends to at `context`: full layers hold T, sliding layers min(T, W)."""
    t = np.asarray(context, dtype=np.float64)
    held = config.full_layers * t
    if config.sliding_layers:
        held = held + config.sliding_layers * np.minimum(t, config.sliding_window)
    return held


def attention_flops_per_token(config: ModelConfig, context: np.ndarray | float) -> np.ndarray:
    """FLOPs of one new token attending to `context` earlier tokens over all layers (sliding layers capped at W)."""
    return 2.0 * config.n_heads * _attention_width(config) * held_layer_tokens(config, context)


def causal_pairs(config: ModelConfig, prompt: np.ndarray | float) -> np.ndarray:
    """(layer, query, key) pairs of a causal prefill of P tokens: P²/2 per full layer, window-capped on sliding ones."""
    p = np.asarray(prompt, dtype=np.float64)
    pairs = config.full_layers * p**2 / 2
    if config.sliding_layers:
        w = float(config.sliding_window)
        pairs = pairs + config.sliding_layers * np.where(p <= w, p**2 / 2, w**2 / 2 + (p - w) * w)
    return pairs


def prefill_flops(config: ModelConfig, prompt: np.ndarray | float) -> np.ndarray:
    """FLOPs of one prompt of P tokens: 2 · N_active · P + attention over P²/2 causal pairs per layer."""
    p = np.asarray(prompt, dtype=np.float64)
    return 2.0 * active_params(config) * p + 2.0 * config.n_heads * _attention_width(config) * causal_pairs(config, p)


def peak_flops(gpu: kv.Gpu, weight_bits: int) -> float:
    """The GPU's dense peak FLOP/s: FP8 when the weights are 8-bit and the GPU has FP8 tensor cores, else BF16."""
    tflops = gpu.fp8_tflops if weight_bits == 8 and gpu.fp8_tflops else gpu.bf16_tflops
    return tflops * 1e12


def allreduce_seconds(
    gpu: kv.Gpu, tp: int, tokens: np.ndarray | float, d_model: int, layers: int, eff: Efficiency | None = None
) -> np.ndarray:
    """Tensor-parallel communication of one forward pass: two ring all-reduces per layer of tokens × d_model
    activations, each a latency plus 2 · (TP − 1)/TP of its bytes over every GPU's link at the link's efficiency
    (0 with one GPU; without `eff`, the link's peak and no latency)."""
    n = np.asarray(tokens, dtype=np.float64)
    if tp <= 1:
        return np.zeros_like(n)
    if not gpu.link_gb_s:
        raise ValueError(f"{gpu.name} has no GPU-to-GPU link bandwidth in the presets")
    share, latency = eff.link(gpu) if eff else (1.0, 0.0)
    size = n * d_model * ACTIVATION_BYTES
    return 2 * layers * (latency + (2 * (tp - 1) / tp) * size / (gpu.link_gb_s * 1e9 * share))


@dataclass(frozen=True)
class Setup:
    """One model copy: the model, the GPU, GPUs per copy, weight bits, KV type and the efficiencies; `kv_passes` is how
    many times a decode step reads each cached key and value: 1 with a decode-attention kernel that serves a KV head's
    whole query group at once, the group size with one that runs every query head on its own (core.plan.engines:
    TensorRT-LLM before 0.8)."""

    config: ModelConfig
    gpu: kv.Gpu
    tp: int
    weight_bits: int
    kv_dtype: str
    eff: Efficiency
    kv_passes: float = 1.0


def _kv_bytes_per_held(s: Setup) -> float:
    """KV bytes per cached (layer, token) pair on one GPU."""
    return kv.kv_values_per_token_layer(s.config, s.tp) * kv.element_bytes(s.kv_dtype)


def kv_read_factor(s: Setup) -> float:
    """A decode step's KV read as a multiple of the cache it attends to: 1, plus each further pass of a per-query-head
    kernel at `reread_share` of a first read."""
    return 1.0 + (s.kv_passes - 1.0) * s.eff.reread_share


def _weights_part(s: Setup, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(memory, compute) seconds of the weight matmuls of a pass over `tokens` tokens on one GPU."""
    read = weight_bytes_read(s.config, tokens, s.weight_bits) / s.tp
    flops = 2.0 * active_params(s.config) * tokens / s.tp
    return read / (s.gpu.bandwidth_bytes * s.eff.mbu), flops / (peak_flops(s.gpu, s.weight_bits) * s.eff.mfu)


def prefill_seconds(s: Setup, prompt: np.ndarray | float, prompts: int = 1) -> np.ndarray:
    """Time to prefill `prompts` prompts of P tokens together: the weights' roofline (compute at peak × MFU, never
    faster than one read of the weights they touch) plus the attention's (compute-bound: nothing cached yet), the
    all-reduces and the fixed cost."""
    p = np.asarray(prompt, dtype=np.float64)
    memory, compute = _weights_part(s, prompts * p)
    attention = prompts * (prefill_flops(s.config, p) - 2.0 * active_params(s.config) * p) / s.tp
    attention_s = attention / (peak_flops(s.gpu, s.weight_bits) * s.eff.mfu)
    comm = allreduce_seconds(s.gpu, s.tp, prompts * p, s.config.d_model, s.config.n_layers, s.eff)
    return np.maximum(compute, memory) + attention_s + comm + s.eff.overhead(s.config)


def prefill_compute_seconds(s: Setup, prompt: np.ndarray | float) -> np.ndarray:
    """GPU time one prompt adds when its prefill rides along with decode steps (which already read the weights)."""
    flops = prefill_flops(s.config, prompt) / s.tp
    comm = allreduce_seconds(s.gpu, s.tp, prompt, s.config.d_model, s.config.n_layers, s.eff)
    return flops / (peak_flops(s.gpu, s.weight_bits) * s.eff.mfu) + comm


@dataclass(frozen=True)
class Step:
    """One decode step per batch size: seconds, its memory and compute time (all bytes, all FLOPs), its communication
    and fixed parts."""

    seconds: np.ndarray
    memory: np.ndarray
    compute: np.ndarray
    comm: np.ndarray
    fixed: float


def decode_step(s: Setup, batch: np.ndarray | float, context: np.ndarray | float) -> Step:
    """One decode step of `batch` sequences each holding `context` tokens (arrays broadcast together): the weights'
    roofline plus the KV read's roofline, the all-reduces and the fixed cost."""
    b = np.asarray(batch, dtype=np.float64)
    t = np.maximum(np.asarray(context, dtype=np.float64), 1.0)
    weights_memory, weights_compute = _weights_part(s, b)
    bandwidth = s.gpu.bandwidth_bytes * s.eff.mbu
    kv_memory = b * held_layer_tokens(s.config, t) * _kv_bytes_per_held(s) * kv_read_factor(s) / bandwidth
    kv_compute = b * attention_flops_per_token(s.config, t) / s.tp / (peak_flops(s.gpu, s.weight_bits) * s.eff.mfu)
    comm = allreduce_seconds(s.gpu, s.tp, b, s.config.d_model, s.config.n_layers, s.eff)
    fixed = s.eff.overhead(s.config)
    seconds = np.maximum(weights_memory, weights_compute) + np.maximum(kv_memory, kv_compute) + comm + fixed
    return Step(seconds, weights_memory + kv_memory, weights_compute + kv_compute, comm, fixed)


def generation_seconds(s: Setup, batch: int, prompt: int, output: int) -> float:
    """Wall time of a static batch: prefill all prompts (the first output token), then output − 1 decode steps as the
    context grows from P to P + output − 1."""
    steps = decode_step(s, batch, prompt + np.arange(1, max(output, 1))).seconds
    return float(prefill_seconds(s, prompt, batch)[()] + steps.sum())


class StepModel:
    """The same time model for one mixed engine step at a time, in plain floats (the traffic simulator calls it once
    per step): `n_decode` decode tokens whose queries read `decode_held` cached (layer, token) pairs in all, plus a
    prompt chunk of `n_prefill` tokens whose queries read `prefill_held` cached pairs and form `prefill_pairs` new
    causal pairs."""

    def __init__(self, s: Setup) -> None:
        w = weights(s.config)
        self.setup = s
        self._always = w.always * s.weight_bits / 8 / s.tp
        self._expert = w.expert * w.moe_layers * s.weight_bits / 8 / s.tp
        self._n_experts, self._keep = float(w.n_experts), (1.0 - w.per_token / w.n_experts) if w.n_experts else 0.0
        self._bandwidth = s.gpu.bandwidth_bytes * s.eff.mbu
        self._peak = peak_flops(s.gpu, s.weight_bits) * s.eff.mfu
        self._matmul = 2.0 * active_params(s.config) / s.tp
        self._attention = 2.0 * s.config.n_heads * _attention_width(s.config) / s.tp
        self._kv = _kv_bytes_per_held(s)
        self._kv_decode = self._kv * kv_read_factor(s)  # the decode queries' reads; a prompt chunk's reads once
        self._fixed = s.eff.overhead(s.config)
        share, latency = s.eff.link(s.gpu) if s.tp > 1 else (1.0, 0.0)
        layers = 2 * s.config.n_layers
        self._comm_fixed = layers * latency if s.tp > 1 else 0.0
        self._comm_token = (
            layers * (2 * (s.tp - 1) / s.tp) * s.config.d_model * ACTIVATION_BYTES / (s.gpu.link_gb_s * 1e9 * share)
            if s.tp > 1
            else 0.0
        )

    def seconds(
        self, n_decode: float, decode_held: float, n_prefill: float = 0.0, prefill_held: float = 0.0, pairs: float = 0.0
    ) -> float:
        """Seconds of one step (0 tokens: 0)."""
        tokens = n_decode + n_prefill
        if tokens <= 0:
            return 0.0
        read = self._always
        if self._n_experts:
            read += self._expert * self._n_experts * (1.0 - self._keep**tokens)
        weights_s = max(read / self._bandwidth, self._matmul * tokens / self._peak)
        kv_s = max(
            (decode_held * self._kv_decode + prefill_held * self._kv) / self._bandwidth,
            self._attention * (decode_held + pairs) / self._peak,
        )
        return weights_s + kv_s + self._comm_fixed + self._comm_token * tokens + self._fixed

    def pair(self, n_decode: float, decode_held: float, n_prefill: float, pairs: float) -> tuple[float, float]:
        """Seconds of a decode step of `n_decode` tokens, and of the same step with a whole prompt of `n_prefill`
        tokens and `pairs` causal pairs beside it (the analytic queue asks for both at once, many times)."""
        bandwidth, peak = self._bandwidth, self._peak
        fixed = self._comm_fixed + self._fixed
        out = []
        for tokens, held, attended in (
            (n_decode, decode_held, decode_held),
            (n_decode + n_prefill, decode_held, decode_held + pairs),
        ):
            if tokens <= 0:
                out.append(0.0)
                continue
            read = self._always
            if self._n_experts:
                read += self._expert * self._n_experts * (1.0 - self._keep**tokens)
            weights_s = max(read / bandwidth, self._matmul * tokens / peak)
            kv_s = max(held * self._kv_decode / bandwidth, self._attention * attended / peak)
            out.append(weights_s + kv_s + fixed + self._comm_token * tokens)
        return out[0], out[1]

    def decode_line(self, n_decode: int) -> tuple[float, float]:
        """A pure decode step of `n_decode` tokens as a line in the cached (layer, token) pairs its queries read:
        (seconds at none, seconds per pair). A stretch of such steps is a few arithmetic progressions of times."""
        read = self._always
        if self._n_experts:
            read += self._expert * self._n_experts * (1.0 - self._keep**n_decode)
        weights_s = max(read / self._bandwidth, self._matmul * n_decode / self._peak)
        per_pair = max(self._kv_decode / self._bandwidth, self._attention / self._peak)
        return weights_s + self._comm_fixed + self._comm_token * n_decode + self._fixed, per_pair


# --------------------------------------------------------------------------------------------------- presets
@lru_cache(maxsize=4)  # 4 × ~50 kB: the assets read here
def _asset(name: str) -> dict:
    with (ASSETS / name).open(encoding="utf-8") as handle:
        return json.load(handle)


@cache
def default_efficiency() -> Efficiency:
    """The MFU, MBU and per-layer overhead the page starts from, fitted on the published measurements, and the links'
    efficiencies and latencies (stored in assets/gpu_presets.json, checked against the fit by the tests)."""
    d = kv.defaults()
    return Efficiency(
        float(d["mfu"]),
        float(d["bandwidth_efficiency"]),
        float(d["layer_overhead_us"]) * 1e-6,
        nvlink_efficiency=float(d["nvlink_efficiency"]),
        pcie_efficiency=float(d["pcie_efficiency"]),
        nvlink_latency_s=float(d["nvlink_latency_us"]) * 1e-6,
        pcie_latency_s=float(d["pcie_latency_us"]) * 1e-6,
        reread_share=float(d["reread_share"]),
    )


# --------------------------------------------------------------------------------------------------- workload
@dataclass(frozen=True)
class Workload:
    """What the service must carry: peak requests per minute, mean prompt and answer, the latency target, hours."""

    requests_per_minute: float = 60.0
    prompt_tokens: int = 1000
    output_tokens: int = 250
    ttft_s: float = 2.0
    min_tokens_per_s: float = 20.0
    hours_per_month: float = 730.0


@dataclass(frozen=True)
class Sizing:
    """A workload's plan: users per model copy, what limits them, copies and GPUs, the bill and its split.

    Costs are the floor (best case) and throughput the ceiling: the time model is a roofline. None = no batch fits
    the memory or meets the latency target on this setup."""

    batch: int
    limit: str
    kv_users: int
    compute_from: int | None
    step_s: float
    tokens_per_s_user: float
    ttft_s: float
    requests_per_s_copy: float
    prefill_share: float
    copies: int
    gpus: int
    utilisation: float
    monthly_cost: float
    cost_per_m_input: float
    cost_per_m_output: float
    cost_per_request: float
    monthly_requests: float
    load_ttft_p95_s: float = math.nan  # simulated p95s at the peak rate per copy (core.plan.load_sizing), if checked
    load_itl_p95_s: float = math.nan
    load_model: str = ""  # what sized the copies under load: "simulated", "analytic", or "" (the decode step alone)


LIMITS = {
    "memory": "memory for the KV cache",
    "speed": "the tokens/s per user target",
    "ttft": "the time-to-first-token target",
}


def _kv_users(config: ModelConfig, dep: kv.Deployment, context: int) -> int:
    return kv.memory(config, replace(dep, context=context, users=1, prefix=0)).max_users


WHOLE_BATCHES = 65_536  # up to this many users per copy every batch size is evaluated at once; beyond, bracketed


def _alone(s: Setup, context: float, first: float, load: Workload) -> str:
    """Why even one user alone misses the target."""
    alone = float(decode_step(s, 1.0, context).seconds[()])
    return (
        f"no number of copies can meet the target: even one user alone gets {1.0 / alone:,.1f} tokens/s and a first "
        f"token after {first + alone:,.2f} s, short of the target ({load.min_tokens_per_s:,g} tokens/s, "
        f"{load.ttft_s:,g} s); more copies shorten the queue, not one user's own steps"
    )


def _last_ok(ok_at: Callable[[np.ndarray], np.ndarray], n: int, points: int = 4096) -> int:
    """The largest b in 1..n where `ok_at` holds, for a test that holds up to some b and fails beyond (0: nowhere):
    a grid of `points` batch sizes brackets the change, narrowed until the bracket is evaluated whole."""
    lo, hi = 0, n  # holds at lo (0: vacuously), unknown up to hi
    while hi - lo > points:
        grid = np.unique(np.linspace(lo + 1, hi, points).round()).astype(np.float64)
        ok = ok_at(grid)
        if ok.all():
            return hi
        k = int(np.argmin(ok))  # the first batch size where it fails
        lo, hi = (int(grid[k - 1]) if k else lo), int(grid[k]) - 1
    grid = np.arange(lo + 1, hi + 1, dtype=np.float64)
    ok = ok_at(grid) if grid.size else np.zeros(0, dtype=bool)
    return int(grid[ok][-1]) if ok.any() else lo


def _large_batch(
    s: Setup, users: int, context: float, first: float, load: Workload
) -> tuple[int, float, float, int | None]:
    """For a copy holding more users than `WHOLE_BATCHES`: the largest batch meeting the target (0: none), its step's
    seconds, the next batch's tokens/s per user, and the first batch limited by compute (None: none). Speed falls and
    the first token's time grows with the batch, so each test holds up to one batch size and fails beyond."""

    def meets(b: np.ndarray) -> np.ndarray:
        seconds = decode_step(s, b, context).seconds
        return (1.0 / seconds >= load.min_tokens_per_s) & (first + seconds <= load.ttft_s)

    def memory_bound(b: np.ndarray) -> np.ndarray:
        step = decode_step(s, b, context)
        return step.compute < step.memory

    batch = _last_ok(meets, users)
    if batch == 0:
        return 0, 0.0, 0.0, None
    step_s = float(decode_step(s, float(batch), context).seconds[()])
    after = 1.0 / float(decode_step(s, float(batch + 1), context).seconds[()]) if batch < users else math.inf
    memory_until = _last_ok(memory_bound, users)
    return batch, step_s, after, memory_until + 1 if memory_until < users else None


@lru_cache(maxsize=256)  # 256 × ~0.5 kB
def size_workload(
    config: ModelConfig, dep: kv.Deployment, eff: Efficiency, load: Workload
) -> tuple[Sizing | None, str | None]:
    """Size a workload on `dep`'s GPU and TP: the largest batch per copy that fits the KV memory and meets the latency
    target, copies for the peak request rate, and the monthly bill split between prefill (input) and decode (output).

    Returns (sizing, None) or (None, the reason no plan exists)."""
    s = Setup(config, dep.gpu, dep.tp, dep.weight_bits, dep.kv_dtype, eff)
    p, o = load.prompt_tokens, load.output_tokens
    users = _kv_users(config, dep, p + o)
    if users < 1:
        return None, f"not one request of {p + o:,} tokens fits the memory of {dep.tp} × {dep.gpu.name}"
    first = float(prefill_seconds(s, p)[()])
    if users > WHOLE_BATCHES:  # a tiny model holds millions of users: the batch found by bracketing (`_last_ok`)
        batch, step_s, speed_next, compute_from = _large_batch(s, users, p + o / 2, first, load)
        if batch == 0:
            return None, _alone(s, p + o / 2, first, load)
        best = batch - 1
        step = Step(np.array([step_s]), np.zeros(1), np.zeros(1), np.zeros(1), 0.0)
        speed, ttft, best_at = 1.0 / step.seconds, first + step.seconds, 0
    else:
        batches = np.arange(1, users + 1, dtype=np.float64)
        step = decode_step(s, batches, p + o / 2)
        speed = 1.0 / step.seconds
        ttft = first + step.seconds
        ok = (speed >= load.min_tokens_per_s) & (ttft <= load.ttft_s)
        if not ok[0]:
            return None, _alone(s, p + o / 2, first, load)
        best = best_at = int(np.flatnonzero(ok)[-1])
        batch = best + 1
        speed_next = speed[best + 1] if batch < users else math.inf
        bound = np.flatnonzero(step.compute >= step.memory)
        compute_from = int(bound[0]) + 1 if bound.size else None
    limit = "memory" if batch == users else "speed" if speed_next < load.min_tokens_per_s else "ttft"
    per_request = float(prefill_compute_seconds(s, p)[()]) + o * float(step.seconds[best_at]) / batch
    prefill_share = float(prefill_compute_seconds(s, p)[()]) / per_request
    capacity = 1.0 / per_request
    rate = load.requests_per_minute / 60.0
    copies = max(1, math.ceil(rate / capacity - 1e-9))
    monthly = copies * dep.tp * dep.price_per_gpu_hour * load.hours_per_month
    requests = rate * SECONDS_PER_HOUR * load.hours_per_month
    return (
        Sizing(
            batch=batch,
            limit=limit,
            kv_users=users,
            compute_from=compute_from,
            step_s=float(step.seconds[best_at]),
            tokens_per_s_user=float(speed[best_at]),
            ttft_s=float(ttft[best_at]),
            requests_per_s_copy=capacity,
            prefill_share=prefill_share,
            copies=copies,
            gpus=copies * dep.tp,
            utilisation=rate / (copies * capacity),
            monthly_cost=monthly,
            cost_per_m_input=1e6 * monthly * prefill_share / (requests * p) if requests else math.inf,
            cost_per_m_output=1e6 * monthly * (1 - prefill_share) / (requests * o) if requests else math.inf,
            cost_per_request=monthly / requests if requests else math.inf,
            monthly_requests=requests,
        ),
        None,
    )


# --------------------------------------------------------------------------------------------------- build vs buy
@dataclass(frozen=True)
class ApiPrice:
    """An API's list price per 1M input and output tokens, with the provider, model, date and source."""

    id: str
    provider: str
    model: str
    date: str
    input_per_m: float
    output_per_m: float
    source: str


@cache
def api_prices() -> dict[str, ApiPrice]:
    """The API price presets by id, from assets/api_prices.json."""
    return {entry["id"]: ApiPrice(**entry) for entry in _asset("api_prices.json")["prices"]}


@dataclass(frozen=True)
class BreakEven:
    """Monthly cost of self-hosting (whole copies) and of the API against monthly tokens, and where they cross."""

    tokens: np.ndarray
    self_hosted: np.ndarray
    api: np.ndarray
    copy_month: float
    copy_tokens: float
    api_per_token: float
    threshold: float | None


def break_even(sizing: Sizing, load: Workload, input_per_m: float, output_per_m: float, points: int = 400) -> BreakEven:
    """Self-hosting costs whole copies (a step each time a copy fills up); the API costs a straight line per token.

    Within the n-th copy's range ((n−1)·V₁, n·V₁] self-hosting is cheaper from n · c / a on, where c is a copy's
    monthly cost, a the API's price per token at this input:output mix and V₁ a copy's monthly tokens; so it is
    cheaper at volume c / a and above (except just after each new copy) exactly when c / a ≤ V₁, and never otherwise."""
    per_request = load.prompt_tokens + load.output_tokens
    api_per_token = (load.prompt_tokens * input_per_m + load.output_tokens * output_per_m) / 1e6 / per_request
    copy_month = sizing.monthly_cost / sizing.copies
    copy_tokens = sizing.requests_per_s_copy * SECONDS_PER_HOUR * load.hours_per_month * per_request
    threshold = copy_month / api_per_token if api_per_token > 0 and copy_month / api_per_token <= copy_tokens else None
    tokens = np.geomspace(copy_tokens / 1000, copy_tokens * 100, points)
    self_hosted = np.ceil(tokens / copy_tokens - 1e-12) * copy_month
    return BreakEven(tokens, self_hosted, tokens * api_per_token, copy_month, copy_tokens, api_per_token, threshold)
