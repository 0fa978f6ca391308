"""A Transformer's shape for memory planning: the config, its weight inventory and Hugging Face config.json parsing.

Pure Python: a `ModelConfig` is built from a preset in `assets/llm_presets.json`, from the calculator's
manual fields, or from an uploaded config.json whose every problem is reported by field name instead of raised.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, fields, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from core.assets import ASSETS

ASSET = ASSETS / "llm_presets.json"
MAX_CONFIG_BYTES = 1_000_000  # the app's upload cap (.streamlit/config.toml maxUploadSize = 1 MB)
MAX_NAME = 60  # characters kept of a model name read from a file


def model_name(raw: object, fallback: str) -> str:
    """A model name read from a file or a link ('meta-llama/Llama-3.1-8B', 'Llama-3.1-8B (edited)'), kept to the
    characters model names use (letters, digits, spaces, . - + / ( )) on one line and shortened: the name is shown in
    sentences, so it must not carry formatting or a web address ('www.' is dropped wherever a link could start)."""
    name = " ".join(re.sub(r"[^A-Za-z0-9./+() -]", "", str(raw)).split())
    while (shorter := re.sub(r"(^|(?<=[ (]))(?i:www\.)", "", name)) != name:
        name = shorter
    return name[:MAX_NAME].strip() or fallback


# Plausibility bounds: a value outside them is a typo or an attack, not a model (the largest public models are far
# inside: 126 layers, d_model 16,384, 256k vocabulary, 256 experts).
LIMITS: dict[str, tuple[int, int]] = {
    "n_layers": (1, 10_000),
    "d_model": (1, 1_000_000),
    "n_heads": (1, 100_000),
    "n_kv_heads": (1, 100_000),
    "head_dim": (1, 100_000),
    "vocab_size": (1, 100_000_000),
    "d_ff": (1, 10_000_000),
    "learned_positions": (0, 100_000_000),
    "kv_lora_rank": (0, 1_000_000),
    "qk_rope_head_dim": (0, 100_000),
    "q_lora_rank": (0, 1_000_000),
    "qk_nope_head_dim": (0, 100_000),
    "v_head_dim": (0, 100_000),
    "sliding_window": (0, 100_000_000),
    "sliding_layers": (0, 10_000),
    "n_experts": (0, 100_000),
    "experts_per_token": (0, 100_000),
    "expert_d_ff": (0, 10_000_000),
    "shared_experts": (0, 100_000),
    "dense_layers": (0, 10_000),
    "norms_per_layer": (0, 16),
    "max_context": (0, 100_000_000),
}
NORMS = ("layernorm", "rmsnorm")
BIASES = ("none", "qkv", "all")


@dataclass(frozen=True)
class ModelConfig:
    """The shape of a decoder-only Transformer, enough to size its weights and its KV cache.

    Attention is MHA/GQA/MQA through `n_kv_heads` (= n_heads, < n_heads, 1), or multi-head latent attention when
    `kv_lora_rank` > 0 (DeepSeek-V2/V3). `sliding_layers` of the `n_layers` keep only the last `sliding_window` tokens.
    A mixture-of-experts MLP has `n_experts` > 0 experts of width `expert_d_ff` on every layer after `dense_layers`.
    `max_context` is the longest context the model is configured for (config.json `max_position_embeddings`; 0 = not
    stated): it limits what the model can serve, not the memory arithmetic.
    """

    name: str
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    vocab_size: int
    d_ff: int
    tied_embeddings: bool = False
    gated_mlp: bool = True
    norm: str = "rmsnorm"
    norms_per_layer: int = 2
    bias: str = "none"
    learned_positions: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    q_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    sliding_window: int = 0
    sliding_layers: int = 0
    n_experts: int = 0
    experts_per_token: int = 0
    expert_d_ff: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    max_context: int = 0
    published_params: float | None = field(default=None, compare=False)
    published_active_params: float | None = field(default=None, compare=False)

    @property
    def is_mla(self) -> bool:
        """True for multi-head latent attention (one compressed latent per layer serves as K and V)."""
        return self.kv_lora_rank > 0

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts MLP."""
        return self.n_experts > 0

    @property
    def attention_kind(self) -> str:
        """'MLA', 'MHA', 'MQA' or 'GQA' (grouped-query attention), in the field's usual words."""
        if self.is_mla:
            return "MLA"
        if self.n_kv_heads == self.n_heads:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"

    @property
    def full_layers(self) -> int:
        """Layers that attend to the whole context."""
        return self.n_layers - self.sliding_layers

    def exceeds_context(self, tokens: int) -> bool:
        """True when `tokens` is longer than the model's stated maximum context (never when none is stated)."""
        return 0 < self.max_context < tokens

    def to_fields(self) -> dict[str, Any]:
        """The config as the calculator's manual fields (everything but the name and the published counts)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in FIELD_NAMES}


FIELD_NAMES = tuple(
    f.name for f in fields(ModelConfig) if f.name not in {"name", "published_params", "published_active_params"}
)


def validate(config: ModelConfig) -> list[str]:
    """Every inconsistency of a config, each message naming the field; an empty list means usable."""
    errors = []
    for name, (low, high) in LIMITS.items():
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int):
            errors.append(f"{name} must be a whole number, got {value!r}.")
        elif not low <= value <= high:
            errors.append(f"{name} = {value:,} is outside the plausible range {low:,} to {high:,}.")
    if errors:
        return errors
    if config.norm not in NORMS:
        errors.append(f"norm must be one of {', '.join(NORMS)}, got {config.norm!r}.")
    if config.bias not in BIASES:
        errors.append(f"bias must be one of {', '.join(BIASES)}, got {config.bias!r}.")
    if config.n_kv_heads > config.n_heads:
        errors.append(
            f"num_key_value_heads ({config.n_kv_heads}) cannot exceed num_attention_heads ({config.n_heads})."
        )
    elif config.n_heads % config.n_kv_heads:
        errors.append(
            f"num_attention_heads ({config.n_heads}) must be a multiple of num_key_value_heads "
            f"({config.n_kv_heads}): each KV head serves a whole group of query heads."
        )
    if config.is_mla and config.qk_rope_head_dim == 0:
        errors.append("qk_rope_head_dim must be set (> 0) for latent attention (kv_lora_rank > 0).")
    if config.sliding_layers > config.n_layers:
        errors.append(f"sliding_layers ({config.sliding_layers}) cannot exceed num_hidden_layers ({config.n_layers}).")
    if config.sliding_layers and not config.sliding_window:
        errors.append("sliding_window must be set (> 0) when some layers use a sliding window.")
    if config.is_moe:
        if not 1 <= config.experts_per_token <= config.n_experts:
            errors.append(
                f"num_experts_per_tok ({config.experts_per_token}) must be between 1 and the number of experts "
                f"({config.n_experts})."
            )
        if config.expert_d_ff == 0:
            errors.append("moe_intermediate_size (expert width) must be set (> 0) for a mixture of experts.")
        if config.dense_layers > config.n_layers:
            errors.append(f"first_k_dense_replace ({config.dense_layers}) cannot exceed the layer count.")
    return errors


# --------------------------------------------------------------------------------------------------- weights
@dataclass(frozen=True)
class WeightRow:
    """One line of the weight inventory: a matrix or vector, its shape, parameters per copy and copies."""

    part: str
    weight: str
    shape: str
    each: int
    copies: int

    @property
    def total(self) -> int:
        """Parameters of all copies."""
        return self.each * self.copies


def _norm_params(config: ModelConfig, width: int) -> int:
    return 2 * width if config.norm == "layernorm" else width


def _attention_rows(c: ModelConfig) -> list[tuple[str, str, int]]:
    """Per-layer attention weights as (weight, shape, parameters)."""
    d, h = c.d_model, c.n_heads
    qkv_bias = c.bias in ("qkv", "all")
    out_bias = c.bias == "all"
    rows: list[tuple[str, str, int]] = []
    if c.is_mla:
        q_width = h * (c.qk_nope_head_dim + c.qk_rope_head_dim)
        if c.q_lora_rank:
            rows += [
                ("W_Q down (q_lora)", f"{d} × {c.q_lora_rank}", d * c.q_lora_rank),
                ("q_lora norm", f"{c.q_lora_rank}", _norm_params(c, c.q_lora_rank)),
                ("W_Q up", f"{c.q_lora_rank} × {q_width}", c.q_lora_rank * q_width),
            ]
        else:
            rows.append(("W_Q", f"{d} × {q_width}", d * q_width))
        latent = c.kv_lora_rank + c.qk_rope_head_dim
        kv_up = h * (c.qk_nope_head_dim + c.v_head_dim)
        rows += [
            ("W_KV down (latent + rope key)", f"{d} × {latent}", d * latent),
            ("latent norm", f"{c.kv_lora_rank}", _norm_params(c, c.kv_lora_rank)),
            ("W_KV up (K and V from latent)", f"{c.kv_lora_rank} × {kv_up}", c.kv_lora_rank * kv_up),
            ("W_O", f"{h * c.v_head_dim} × {d}", h * c.v_head_dim * d),
        ]
        return rows
    q_width, kv_width = h * c.head_dim, c.n_kv_heads * c.head_dim
    rows += [
        ("W_Q", f"{d} × {q_width}", d * q_width + (q_width if qkv_bias else 0)),
        ("W_K", f"{d} × {kv_width}", d * kv_width + (kv_width if qkv_bias else 0)),
        ("W_V", f"{d} × {kv_width}", d * kv_width + (kv_width if qkv_bias else 0)),
        ("W_O", f"{q_width} × {d}", q_width * d + (d if out_bias else 0)),
    ]
    return rows


def _mlp_params(c: ModelConfig, width: int) -> int:
    """Parameters of one MLP (or one expert) of hidden width `width`."""
    matrices = 3 if c.gated_mlp else 2
    bias = (width + c.d_model) if c.bias == "all" else 0
    return matrices * c.d_model * width + bias


def _mlp_shape(c: ModelConfig, width: int) -> str:
    count = "3" if c.gated_mlp else "2"
    return f"{count} × ({c.d_model} × {width})"


def weight_inventory(config: ModelConfig) -> list[WeightRow]:
    """Every weight of the model with its shape and count (the primer §4 parameter table, for this model)."""
    c = config
    d = c.d_model
    rows = [WeightRow("Embedding", "Token embedding E", f"{c.vocab_size} × {d}", c.vocab_size * d, 1)]
    if c.learned_positions:
        rows.append(
            WeightRow("Embedding", "Positional embedding", f"{c.learned_positions} × {d}", c.learned_positions * d, 1)
        )
    for weight, shape, count in _attention_rows(c):
        rows.append(WeightRow("Attention (per layer)", weight, shape, count, c.n_layers))
    moe_layers = c.n_layers - c.dense_layers if c.is_moe else 0
    dense_layers = c.n_layers - moe_layers
    if dense_layers:
        rows.append(
            WeightRow(
                "MLP (per layer)",
                "W_gate, W_up, W_down" if c.gated_mlp else "W_1, W_2",
                _mlp_shape(c, c.d_ff),
                _mlp_params(c, c.d_ff),
                dense_layers,
            )
        )
    if moe_layers:
        rows.append(WeightRow("MoE (per layer)", "Router", f"{d} × {c.n_experts}", d * c.n_experts, moe_layers))
        for n, kind in ((c.n_experts, "routed experts"), (c.shared_experts, "shared expert(s)")):
            if n:
                shape = f"{n} × {_mlp_shape(c, c.expert_d_ff)}"
                rows.append(
                    WeightRow("MoE (per layer)", f"{n} {kind}", shape, n * _mlp_params(c, c.expert_d_ff), moe_layers)
                )
    if c.norms_per_layer:
        rows.append(
            WeightRow(
                "Norms (per layer)",
                f"{c.norms_per_layer} {c.norm}s",
                f"{c.norms_per_layer} × {d}",
                c.norms_per_layer * _norm_params(c, d),
                c.n_layers,
            )
        )
    rows.append(WeightRow("Output", f"Final {c.norm}", f"{d}", _norm_params(c, d), 1))
    if c.tied_embeddings:
        rows.append(WeightRow("Output", "Unembedding U = Eᵀ (tied, shared)", f"{d} × {c.vocab_size}", 0, 1))
    else:
        rows.append(WeightRow("Output", "Unembedding U", f"{d} × {c.vocab_size}", d * c.vocab_size, 1))
    return rows


@lru_cache(maxsize=1024)  # 1,024 × ~0.5 kB
def param_count(config: ModelConfig) -> int:
    """Total parameters computed from the config (tied embeddings counted once); cached (configs are immutable), and
    bounded, since every uploaded or typed config is a new key."""
    return sum(row.total for row in weight_inventory(config))


def active_param_count(config: ModelConfig) -> int:
    """Parameters used per token: all of a dense model; for a mixture of experts only the routed experts chosen."""
    if not config.is_moe:
        return param_count(config)
    idle = config.n_experts - config.experts_per_token
    moe_layers = config.n_layers - config.dense_layers
    return param_count(config) - idle * _mlp_params(config, config.expert_d_ff) * moe_layers


def kaplan_estimate(config: ModelConfig) -> int:
    """The primer's rule of thumb 12 · L · d_model² (attention 4·d², MLP 8·d²; no embeddings)."""
    return 12 * config.n_layers * config.d_model**2


def activation_shapes(config: ModelConfig, tokens: int) -> list[tuple[str, str, int, str]]:
    """The primer §4 activation table for this model at T tokens, all 15 rows in the order of a forward pass:
    (activation, shape, number of values, what it is)."""
    c, t = config, tokens
    dk = c.head_dim if not c.is_mla else c.qk_nope_head_dim + c.qk_rope_head_dim
    dv = c.head_dim if not c.is_mla else c.v_head_dim
    d_ff = c.expert_d_ff if c.is_moe else c.d_ff
    kv = (
        f"{t} × {dk}, {c.n_kv_heads} KV heads"
        if not c.is_mla
        else f"{t} × {c.kv_lora_rank + c.qk_rope_head_dim} latent"
    )
    return [
        ("Input token ids", f"{t}", t, "integers in [0, V)"),
        (
            "Residual stream h⁽⁰⁾ … h⁽ᴸ⁾",
            f"{t} × {c.d_model}",
            t * c.d_model,
            "the running meaning per token, every layer",
        ),
        ("Q per head", f"{t} × {dk}, {c.n_heads} heads", t * dk * c.n_heads, "used once, then discarded"),
        ("K, V per KV head (cached)", kv, 0, "kept in the KV cache for every later token"),
        ("Attention scores QKᵀ", f"{t} × {t} per head", t * t * c.n_heads, "the routing pattern"),
        ("Attention weights (after softmax)", f"{t} × {t} per head", t * t * c.n_heads, "rows sum to 1, causal"),
        ("Attention output, one head", f"{t} × {dv}", t * dv, "weighted sum of V rows"),
        ("Attention output (concat)", f"{t} × {c.n_heads * dv}", t * c.n_heads * dv, "the heads side by side"),
        ("Output of W_O added to the residual", f"{t} × {c.d_model}", t * c.d_model, "written back into the stream"),
        ("MLP hidden", f"{t} × {d_ff}", t * d_ff, "inside the MLP block only"),
        ("MLP output", f"{t} × {c.d_model}", t * c.d_model, "also written back into the stream"),
        ("Final hidden state (after the last norm)", f"{t} × {c.d_model}", t * c.d_model, "input to the unembedding"),
        ("Logits", f"{t} × {c.vocab_size}", t * c.vocab_size, "one row per position"),
        ("Logits of the last token", f"{c.vocab_size}", c.vocab_size, "the row that predicts the next token"),
        ("Next-token probabilities", f"{c.vocab_size}, sums to 1", c.vocab_size, "softmax of the last-token logits"),
    ]


# --------------------------------------------------------------------------------------------------- presets
def _from_preset(entry: dict[str, Any]) -> ModelConfig:
    report = parse_config_dict(entry["config"], name=entry["name"], architecture=entry.get("architecture"))
    if report.config is None:
        raise ValueError(f"preset {entry['id']}: {report.errors}")
    return replace(
        report.config,
        published_params=entry.get("published_params"),
        published_active_params=entry.get("published_active_params"),
    )


@cache
def _asset() -> dict[str, Any]:
    with ASSET.open(encoding="utf-8") as handle:
        return json.load(handle)


@cache
def presets() -> dict[str, ModelConfig]:
    """The deployable model presets by id, in the asset's order (the primer's 7B first)."""
    return {entry["id"]: _from_preset(entry) for entry in _asset()["models"]}


@cache
def reference_models() -> dict[str, ModelConfig]:
    """Reference points that are not deployment candidates (the primer's 736-parameter model)."""
    return {entry["id"]: _from_preset(entry) for entry in _asset()["reference_models"]}


def preset_sources(preset_id: str) -> dict[str, str]:
    """Where each figure of a preset comes from."""
    for entry in _asset()["models"] + _asset()["reference_models"]:
        if entry["id"] == preset_id:
            return dict(entry["sources"])
    raise KeyError(preset_id)


# --------------------------------------------------------------------------------------------------- parsing
@dataclass(frozen=True)
class ParseReport:
    """The outcome of reading a config.json: the config (None when unusable) and what was read, assumed, wrong."""

    config: ModelConfig | None
    used: tuple[str, ...] = ()
    assumed: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


ALIASES: dict[str, tuple[str, ...]] = {
    "n_layers": ("num_hidden_layers", "n_layer", "num_layers", "n_layers"),
    "d_model": ("hidden_size", "n_embd", "d_model", "dim"),
    "n_heads": ("num_attention_heads", "n_head", "num_heads", "n_heads"),
    "n_kv_heads": ("num_key_value_heads", "num_kv_heads", "n_head_kv", "n_kv_heads"),
    "head_dim": ("head_dim",),
    "vocab_size": ("vocab_size", "padded_vocab_size"),
    "d_ff": ("intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"),
    "learned_positions": ("n_positions",),
    "kv_lora_rank": ("kv_lora_rank",),
    "qk_rope_head_dim": ("qk_rope_head_dim",),
    "q_lora_rank": ("q_lora_rank",),
    "qk_nope_head_dim": ("qk_nope_head_dim",),
    "v_head_dim": ("v_head_dim",),
    "n_experts": ("num_local_experts", "n_routed_experts", "num_experts"),
    "experts_per_token": ("num_experts_per_tok", "moe_top_k"),
    "expert_d_ff": ("moe_intermediate_size",),
    "shared_experts": ("n_shared_experts",),
    "dense_layers": ("first_k_dense_replace",),
    "sliding_window": ("sliding_window",),
    "max_context": ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length"),
}
PLAIN_MLP_TYPES = {"gpt2", "gpt_neox", "gptj", "gpt_bigcode", "opt", "bloom", "falcon", "phi"}
LAYERNORM_TYPES = PLAIN_MLP_TYPES
BIAS_ALL_TYPES = {"gpt2", "gpt_neox", "gptj", "gpt_bigcode", "opt", "bloom", "phi"}


class _Reader:
    """Reads fields from a config dict by alias, recording which were used and every problem by name."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.used: list[str] = []
        self.errors: list[str] = []

    def find(self, key: str) -> tuple[str | None, Any]:
        for alias in ALIASES[key]:
            if alias in self.data and self.data[alias] is not None:
                return alias, self.data[alias]
        return None, None

    def integer(self, key: str, *, minimum: int = 1) -> int | None:
        alias, value = self.find(key)
        if alias is None:
            return None
        self.used.append(alias)
        low, high = LIMITS[key]
        low = max(low, minimum)
        if isinstance(value, bool) or not isinstance(value, int | float):
            kind = "text" if isinstance(value, str) else type(value).__name__
            self.errors.append(f"{alias} must be a whole number, got {kind} {value!r:.40}.")
            return None
        if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
            self.errors.append(f"{alias} must be a whole number, got {value!r}.")
            return None
        if not low <= value <= high:
            reason = "must be positive" if value < low else "is not a plausible size"
            digits = len(str(abs(int(value)))) if isinstance(value, int) else 0
            shown = (
                f"{value:,.0f}"
                if abs(value) < 1e15
                else f"a {digits:,}-digit number"
                if digits > 300
                else f"{value:.3g}"
            )
            self.errors.append(f"{alias} = {shown} {reason} (allowed {low:,} to {high:,}).")
            return None
        return int(value)


def _merged(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A multimodal config's `text_config` overlaid on the top level (the language model's fields live there)."""
    text = raw.get("text_config")
    if isinstance(text, dict):
        return {**raw, **text}, ["text_config (the language model of a multimodal config)"]
    return raw, []


def parse_config_dict(
    raw: Any, *, name: str = "Uploaded config", architecture: dict[str, Any] | None = None
) -> ParseReport:
    """Read a Hugging Face config.json dict into a ModelConfig, saying what was used, assumed and wrong."""
    if not isinstance(raw, dict):
        kind = "a list" if isinstance(raw, list) else type(raw).__name__
        return ParseReport(None, errors=(f"config.json must be a JSON object {{...}}, got {kind}.",))
    data, used_extra = _merged(raw)
    reader = _Reader(data)
    assumed: list[str] = []
    model_type = str(data.get("model_type", "")).lower()

    values: dict[str, int | None] = {}
    for key in ("n_layers", "d_model", "n_heads"):
        values[key] = reader.integer(key)
        if values[key] is None and reader.find(key)[0] is None:
            reader.errors.append(f"{ALIASES[key][0]} is missing: it is required.")
    for key in ALIASES:
        if key in values:
            continue
        minimum = 0 if LIMITS[key][0] == 0 else 1
        values[key] = reader.integer(key, minimum=minimum)
    if reader.errors:
        return ParseReport(None, tuple(reader.used), tuple(assumed), tuple(reader.errors))

    n_layers, d_model, n_heads = values["n_layers"], values["d_model"], values["n_heads"]
    assert n_layers is not None and d_model is not None and n_heads is not None
    n_kv = values["n_kv_heads"]
    if n_kv is None:
        if data.get("multi_query") is True:
            n_kv = 1
            reader.used.append("multi_query")
        else:
            n_kv = n_heads
            assumed.append(f"num_key_value_heads missing: assumed {n_heads} (= heads, plain multi-head attention).")
    head_dim = values["head_dim"]
    if head_dim is None:
        if d_model % n_heads:
            return ParseReport(
                None,
                tuple(reader.used),
                tuple(assumed),
                (
                    f"hidden_size ({d_model}) is not divisible by num_attention_heads ({n_heads}) and no head_dim is "
                    "given.",
                ),
            )
        head_dim = d_model // n_heads
        assumed.append(f"head_dim missing: assumed hidden_size / num_attention_heads = {head_dim}.")
    vocab = values["vocab_size"]
    if vocab is None:
        vocab = 32000
        assumed.append("vocab_size missing: assumed 32,000 (affects the weights only, not the KV cache).")
    d_ff = values["d_ff"]
    if d_ff is None:
        d_ff = 4 * d_model
        assumed.append(f"intermediate_size missing: assumed 4 × hidden_size = {d_ff:,}.")

    tied_raw = data.get("tie_word_embeddings")
    if isinstance(tied_raw, bool):
        tied = tied_raw
        reader.used.append("tie_word_embeddings")
    elif tied_raw is None:
        tied = model_type in {"gpt2", "gemma", "gemma2", "gemma3"}
        assumed.append(
            f"tie_word_embeddings missing: assumed {'tied' if tied else 'untied'} for "
            f"model_type '{model_type or 'unknown'}'."
        )
    else:
        return ParseReport(
            None,
            tuple(reader.used),
            tuple(assumed),
            (f"tie_word_embeddings must be true or false, got {tied_raw!r:.40}.",),
        )

    max_context = values["max_context"] or 0
    if not max_context:
        assumed.append("max_position_embeddings missing: the maximum context is not known, so it is not checked.")
    window = values["sliding_window"] or 0
    sliding_layers = 0
    if window:
        layer_types = data.get("layer_types")
        if data.get("use_sliding_window") is False:
            assumed.append("sliding_window is set but use_sliding_window is false: no layer is capped.")
            window = 0
        elif isinstance(layer_types, list) and all(isinstance(t, str) for t in layer_types):
            sliding_layers = sum(1 for t in layer_types if "sliding" in t)
            reader.used.append("layer_types")
        elif model_type.startswith("gemma2"):
            sliding_layers = (n_layers + 1) // 2
            assumed.append("Gemma-2 alternates sliding-window and global layers: half the layers are capped.")
        else:
            sliding_layers = n_layers
            assumed.append(f"sliding_window {window:,} applies to every layer (Mistral-style).")
        if not sliding_layers:
            window = 0

    learned = values["learned_positions"] or 0
    if learned and model_type not in {"gpt2", "gpt_bigcode", "opt"}:
        learned = 0
    mla_rank = values["kv_lora_rank"] or 0
    n_experts = values["n_experts"] or 0
    experts_per_token = values["experts_per_token"] or 0
    expert_d_ff = values["expert_d_ff"] or 0
    if n_experts and not expert_d_ff:
        expert_d_ff = d_ff
        assumed.append(f"moe_intermediate_size missing: each expert assumed as wide as intermediate_size ({d_ff:,}).")

    arch = architecture or {}
    gated = arch.get("gated_mlp", model_type not in PLAIN_MLP_TYPES)
    norm = arch.get("norm", "layernorm" if model_type in LAYERNORM_TYPES else "rmsnorm")
    bias = arch.get("bias")
    if bias is None:
        if data.get("attention_bias") is True:
            bias = "qkv"
        elif model_type in BIAS_ALL_TYPES:
            bias = "all"
        else:
            bias = "qkv" if model_type.startswith("qwen2") else "none"
    norms_per_layer = arch.get("norms_per_layer", 4 if model_type.startswith("gemma2") else 2)
    if architecture is None:
        assumed.append(
            f"Not in config.json, inferred from model_type '{model_type or 'unknown'}': "
            f"{'gated' if gated else 'plain'} MLP, {norm}, {norms_per_layer} norms per layer, biases: {bias}."
        )

    config = ModelConfig(
        name=model_name(data.get("_name_or_path") or data.get("model_type") or "", "your model")
        if architecture is None
        else name,
        n_layers=n_layers,
        d_model=d_model,
        n_heads=n_heads,
        n_kv_heads=n_kv,
        head_dim=head_dim,
        vocab_size=vocab,
        d_ff=d_ff,
        tied_embeddings=tied,
        gated_mlp=bool(gated),
        norm=str(norm),
        norms_per_layer=int(norms_per_layer),
        bias=str(bias),
        learned_positions=learned,
        kv_lora_rank=mla_rank,
        qk_rope_head_dim=values["qk_rope_head_dim"] or 0,
        q_lora_rank=values["q_lora_rank"] or 0,
        qk_nope_head_dim=values["qk_nope_head_dim"] or 0,
        v_head_dim=values["v_head_dim"] or 0,
        sliding_window=window,
        sliding_layers=sliding_layers,
        n_experts=n_experts,
        experts_per_token=experts_per_token,
        expert_d_ff=expert_d_ff if n_experts else 0,
        shared_experts=values["shared_experts"] or 0,
        dense_layers=values["dense_layers"] or 0,
        max_context=max_context,
    )
    errors = validate(config)
    used = tuple(dict.fromkeys(used_extra + reader.used + (["model_type"] if model_type else [])))
    return ParseReport(None if errors else config, used, tuple(assumed), tuple(errors))


def parse_config_text(text: str | bytes, *, name: str = "Uploaded config") -> ParseReport:
    """Parse the text of a config.json (upload or paste); size, encoding and JSON errors become messages."""
    if len(text) > MAX_CONFIG_BYTES:
        return ParseReport(
            None,
            errors=(
                f"The file is {len(text):,} bytes; a config.json is a few kB and the limit is {MAX_CONFIG_BYTES:,} "
                "bytes.",
            ),
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            return ParseReport(None, errors=(f"The file is not UTF-8 text ({error.reason} at byte {error.start}).",))
    if not text.strip():
        return ParseReport(None, errors=("The config is empty: paste or upload the contents of a config.json.",))
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        return ParseReport(
            None, errors=(f"The text is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}.",)
        )
    except RecursionError:
        return ParseReport(None, errors=("The JSON is nested too deeply to be a config.json.",))
    except ValueError:  # Python refuses to read an integer of more than 4,300 digits
        return ParseReport(None, errors=("The file holds a number with thousands of digits: no model is that big.",))
    return parse_config_dict(raw, name=name)


def config_from_fields(values: dict[str, Any], *, name: str = "Custom model") -> tuple[ModelConfig | None, list[str]]:
    """A ModelConfig from the calculator's manual fields, or None and the messages naming the wrong fields."""
    try:
        config = ModelConfig(name=name, **{key: values[key] for key in FIELD_NAMES})
    except (KeyError, TypeError) as error:
        return None, [f"Missing or unknown field: {error}."]
    if not config.is_moe:
        config = replace(config, experts_per_token=0, expert_d_ff=0, shared_experts=0, dense_layers=0)
    if not config.sliding_window or not config.sliding_layers:
        config = replace(config, sliding_window=0, sliding_layers=0)
    errors = validate(config)
    return (None, errors) if errors else (config, [])


def model_argument(text: str) -> ModelConfig:
    """A command's --model: a preset id, or a config.json file of at most MAX_CONFIG_BYTES (its size checked before
    it is read); ValueError says in one line why it cannot be used."""
    if text in presets():
        return presets()[text]
    path = Path(text)
    if not path.is_file():
        raise ValueError(f"{text!r} is neither a preset ({', '.join(presets())}) nor a config.json file")
    size = path.stat().st_size
    if size > MAX_CONFIG_BYTES:
        raise ValueError(f"{text} is {size:,} bytes, larger than {MAX_CONFIG_BYTES:,}; a config.json is a few kB")
    report = parse_config_text(path.read_bytes(), name=path.stem)
    if report.config is None:
        raise ValueError(f"{text}: {' '.join(report.errors)}")
    return report.config
