"""The cost page's scenario vocabulary: its choices and their labels, every number field with its bounds and default,
the engine settings' defaults, and the page's own memory between runs (one session entry)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import streamlit as st

from core.plan import budget, daily, engines, search, serving
from core.plan import kv_cache as kv
from core.plan.engines import profiles
from core.plan.fields import PAY_FIELDS, fields
from core.plan.model_config import (
    BIASES,
    NORMS,
    ModelConfig,
    presets,
)
from ui.kv_cost.own_model import (
    CUSTOM,
    FIELD_KEYS,
)

DEFAULTS = kv.defaults()
COMPARE_DEFAULT = ["llama-3.1-8b", "llama-3.1-70b", "mistral-7b", "deepseek-v3"]
MAX_COMPARE = 4  # models compared beside the current one
VIEWS = ("KV vs context", "Memory per GPU", "Users vs context", "Cost vs batch")
BLOCKS = tuple(sorted({engine.block_tokens for engine in profiles().values()}))  # the engines' own block sizes
BLOCK_HELP = (
    "Memory is handed out in pages of this many tokens ("
    + ", ".join(f"{engine.name} {engine.block_tokens}" for engine in profiles().values())
    + ", by default)."
)
LINK_NOTES = "kv_link_notes"
MEMORY = "kv_memory"  # the page's own memory between runs (`memory`)
OWN_MODEL_OPEN = "kv_own_model_open"
OWN_MODEL_LABEL = "Your own model: upload or paste a Hugging Face config.json, or edit every size"
ENGINE_OPEN = "kv_engine_open"
CALCULATOR = "calculator"  # the link key that opens the memory calculator ("open")
CALCULATOR_OPEN = "open"
CALCULATOR_OPEN_KEY = "kv_calculator_open"
CALCULATOR_LABEL = "The memory behind the plan: the primer's KV-cache formula, users per GPU and models side by side"
CALCULATOR_KEYS = {"kv_dtype", "w_bits", "gpu", "context", "users", "compare", "view"}  # a link with one opens it
ENGINE_LABEL = "Engine settings: GPUs per model copy, shared prompt, memory use and speed"
SECTION = "kv_section"
SECTIONS = (  # the planner's sections below the side-by-side table, one drawn at a time
    "Workload and bill",
    "Build vs buy",
    "Calibration",
    "Budget by month",
    "Memory levers",
    "Model anatomy",
    "Sources",
    "Latency under load",
)
SEARCH = "search"  # GPUs per copy left to the planner's search (the default); a number pins it
ALLOWED_GPUS = "gpus"  # the GPU types the search may use (default: every preset)
LOAD_AS = "load_as"  # the peak load given as requests a minute (the default) or as users waiting at once
LOAD_LABELS = {"rpm": "Requests a minute", "in_flight": "Users waiting at once"}
PIN_TP = "pin_tp"  # GPUs per copy pinned by the reader, or SEARCH
SAME_MODEL = "same"  # the API default: the cheapest listed API serving the plan's own model
PLAN_LABEL = "Plan a deployment: what do you know about the traffic?"
SCENARIO = "scenario"  # the link key, once per kept scenario of the budget's comparison
MAX_SCENARIOS = 4  # scenarios kept beside the page as it is now
SCENARIO_NAME_CHARS = 60
NOW = "This page now"  # the comparison's own row: the page's scenario as it stands
SIZES = ("context", "users")  # the scenario's sizes, drawn inside the page's fragment
AUTO = "auto"  # GPUs per model copy chosen by the page: the fewest that hold the model and one user


def _usual(name: str) -> object:
    """A model field's most common value among the presets."""
    values = [getattr(c, name) for c in presets().values()]
    return max(values, key=values.count)


def _unusual(name: str) -> str:
    """The presets whose field differs from the most common value, each with its value: 'Gemma-2-9B: 4, Gemma-2-27B:
    4' (read from the presets, so a help text names what the page really holds)."""
    usual = _usual(name)
    return ", ".join(f"{c.name}: {getattr(c, name):,}" for c in presets().values() if getattr(c, name) != usual)


FIELD_LABELS = {
    "n_layers": ("Layers L", "How many Transformer blocks are stacked; each keeps its own K and V for every token."),
    "d_model": ("Width d_model", "How many numbers describe each token inside the model (the residual stream)."),
    "n_heads": ("Attention heads h", "How many attention heads each layer runs side by side."),
    "n_kv_heads": (
        "KV heads",
        "How many distinct K/V pairs each layer stores per token. Equal to the heads = classic multi-head; fewer = "
        "grouped-query attention (GQA); 1 = multi-query (MQA). Fewer KV heads, smaller cache.",
    ),
    "head_dim": ("Head size d_k", "Numbers per head in each K or V vector (often d_model / h, not always)."),
    "vocab_size": ("Vocabulary V", "How many different tokens the model knows; sets the embedding's size."),
    "d_ff": ("MLP width d_ff", "Hidden width of each layer's MLP block (dense layers)."),
    "tied_embeddings": ("Tied embeddings", "The output matrix reuses the input embedding (U = Eᵀ), saving V·d_model."),
    "gated_mlp": ("Gated MLP", "Three MLP matrices (gate, up, down) as in Llama; off = two (W₁, W₂) as in GPT-2."),
    "norm": ("Norm type", "LayerNorm has a scale and a shift per number; RMSNorm only a scale."),
    "norms_per_layer": (
        "Norms per layer",
        f"Normalisations inside each block ({_usual('norms_per_layer')} usually; {_unusual('norms_per_layer')}).",
    ),
    "bias": ("Biases", "Which projections carry a bias vector: none, only Q/K/V, or all (GPT-2)."),
    "learned_positions": (
        "Learned positions",
        f"Rows of a learned position table ({_unusual('learned_positions')}); 0 = none (rotary positions).",
    ),
    "kv_lora_rank": (
        "Latent rank (MLA)",
        "Multi-head latent attention (DeepSeek): the size of the one compressed vector cached per token and "
        "layer instead of K and V. 0 = ordinary attention.",
    ),
    "qk_rope_head_dim": ("Rotary key part (MLA)", "Extra position-carrying numbers cached beside the latent."),
    "q_lora_rank": ("Query rank (MLA)", "Compressed query size (weights only; 0 = full query projection)."),
    "qk_nope_head_dim": ("Key head size (MLA)", "Per-head key size rebuilt from the latent (weights only)."),
    "v_head_dim": ("Value head size (MLA)", "Per-head value size rebuilt from the latent (weights only)."),
    "sliding_window": ("Sliding window W", "Sliding layers keep only the last W tokens; 0 = none."),
    "sliding_layers": ("Sliding layers", "How many of the layers use the window (Mistral: all; Gemma-2: half)."),
    "n_experts": ("Experts", "Mixture of experts: MLP copies per layer, of which a few run per token; 0 = dense."),
    "experts_per_token": ("Experts per token", "How many experts each token is routed to."),
    "expert_d_ff": ("Expert width", "Hidden width of one expert."),
    "shared_experts": ("Shared experts", f"Experts every token always uses ({_unusual('shared_experts')})."),
    "dense_layers": (
        "Dense first layers",
        f"Layers at the bottom that keep an ordinary MLP ({_unusual('dense_layers')}).",
    ),
    "max_context": (
        "Maximum context (tokens)",
        "The longest conversation the model is built for (config.json max_position_embeddings); 0 = not stated. "
        "The page warns when the context per user is longer.",
    ),
}


@dataclass
class Memory:
    """What the page keeps between runs besides its widgets' values, in one session entry: every selector and number
    field reads every session entry on each run, so one entry instead of five keeps each run cheaper."""

    link_read: bool = False  # the shared link has been read (`read_link` reads it once per session)
    typed_ok: dict[str, float] = field(default_factory=dict)  # each number field's last valid value (put back)
    typed_notes: dict[str, str] = field(default_factory=dict)  # the refused typed value of each field, named under it
    last_valid: tuple[ModelConfig, kv.Deployment] | None = None  # shown while the scenario cannot be computed
    last_workload: serving.Workload | None = None  # shown while the workload cannot be served
    own_prices: dict[str, float] = field(default_factory=dict)  # the reader's own $/GPU-hour, by GPU id
    price_gpu: str | None = None  # the GPU the price field shows (a new GPU puts its own price in the field)
    context_set: bool = False  # the reader set the context: it no longer follows prompt + answer
    calculator_open: bool = False  # the memory calculator was open (an expander forgets it on another page)
    pay_own: dict[str, float] = field(default_factory=dict)  # the reader's own figures for the ways to pay, by key
    last_budget: object = None  # the budget's last valid inputs (ui.kv_cost.budget.inputs.Inputs)


def memory() -> Memory:
    """The page's memory for this session."""
    kept = st.session_state.get(MEMORY)
    if kept is None:
        kept = st.session_state[MEMORY] = Memory()
    return kept


NUMBERS = {  # the page's number fields as the planner declares them (core.plan.fields), bounds shared with the commands
    key: f
    for key, f in fields().items()
    if key not in ("qps", "concurrency", "requests", "seed", "tp")  # the traffic command's own
}


ENGINE_DEFAULTS = {  # engine settings (drawn only while their expander is open)
    "engine": next(iter(engines.profiles())),  # vLLM: the first profile in assets/engine_profiles.json
    "tp": AUTO,
    "prefix": NUMBERS["prefix"].default,
    "util": NUMBERS["util"].default,
    "block": DEFAULTS["block_tokens"],
    "eff": NUMBERS["eff"].default,
    "mfu": NUMBERS["mfu"].default,
    "overhead": NUMBERS["overhead"].default,
}
BUDGET_KEYS = ("growth", "min_copies", "max_copies", "scale_minutes")  # numbers of the budget by month
PAY_KEYS = tuple(f"pay_{name}" for name in PAY_FIELDS)  # the ways to pay: the reader's own figures only
SHAPE, CURVE, FLEET, MONTHS = "shape", "curve", "fleet", "months"
OWN_CURVE = "own"  # the reader's own 24 hourly values instead of a named shape
FLEETS = {"fixed": "Fixed, sized for the peak", "autoscale": "Autoscaling"}
WAY = "way"  # the scenario's way to pay: the cheapest over its horizon (the default) or one the reader picks
CHEAPEST = "cheapest"
WORKLOAD_KEYS = ("rpm", "in_flight", "prompt", "answer", "ttft", "speed", "hours", "peak")
PRICE_KEYS = ("api_in", "api_out")


def model_label(model_id: str) -> str:
    """What the model selectors show (and the URL stores) for a preset id or 'custom'."""
    return "Custom (fields below)" if model_id == CUSTOM else presets()[model_id].name


def bits_label(bits: int) -> str:
    """'16-bit' for 16: how the weight selector shows a bit width."""
    return f"{bits}-bit"


def gpu_name(gpu_id: str) -> str:
    """The GPU selector's label for a preset id."""
    return kv.gpus()[gpu_id].name


def tp_label(tp: object) -> str:
    """'Auto (fewest that fit)' or the GPU count."""
    return "Auto (fewest that fit)" if tp == AUTO else str(tp)


def api_label(price_id: str) -> str:
    """An API price preset as 'DeepSeek deepseek-chat (DeepSeek-V3), 2025-02', 'Your own prices', or the default:
    the same model as the plan."""
    if price_id == CUSTOM:
        return "Your own prices"
    if price_id == SAME_MODEL:
        return "Same model as the plan (cheapest listed)"
    price = serving.api_prices()[price_id]
    return f"{price.provider} {price.model}, {price.date}"


def engine_label(engine_id: str) -> str:
    """An engine profile's name ('TensorRT-LLM' for 'trtllm')."""
    return engines.profiles()[engine_id].name


def pin_label(tp: object) -> str:
    """'Found by the search' or the pinned GPU count."""
    return "Found by the search" if tp == SEARCH else str(tp)


def shape_label(name: str) -> str:
    """A daily shape's label ('Office hours (one time zone)') or 'Your own hourly curve'."""
    return "Your own hourly curve" if name == OWN_CURVE else daily.SHAPES[name]


def way_label(way: str) -> str:
    """A way to pay's label, or 'The cheapest over the horizon'."""
    return "The cheapest over the horizon" if way == CHEAPEST else budget.WAYS[way]


def choices() -> dict[str, tuple[Sequence, Callable[[object], str]]]:
    """Every bound selector and multiselect: its options and the label the page shows and the URL stores."""
    return {
        "model": ([*presets(), CUSTOM], model_label),
        "compare": (list(presets()), model_label),
        "kv_dtype": (list(kv.DTYPE_BYTES), str.upper),
        "w_bits": (list(kv.WEIGHT_BITS), bits_label),
        "gpu": (list(kv.gpus()), gpu_name),
        "tp": ([AUTO, *kv.TP_OPTIONS], tp_label),
        "engine": (list(engines.profiles()), engine_label),
        "api": ([SAME_MODEL, *serving.api_prices(), CUSTOM], api_label),
        ALLOWED_GPUS: (list(kv.gpus()), gpu_name),
        PIN_TP: ([SEARCH, *search.TP_CHOICES], pin_label),
        LOAD_AS: (list(LOAD_LABELS), LOAD_LABELS.__getitem__),
        CALCULATOR: ([CALCULATOR_OPEN], str),
        SHAPE: ([*daily.SHAPES, OWN_CURVE], shape_label),
        FLEET: (list(FLEETS), FLEETS.__getitem__),
        MONTHS: (list(budget.HORIZONS), str),
        WAY: ([CHEAPEST, *budget.WAYS], way_label),
        "block": (list(BLOCKS), str),
        "view": (list(VIEWS), str),
        SECTION: (list(SECTIONS), str),
        FIELD_KEYS["norm"]: (list(NORMS), str),
        FIELD_KEYS["bias"]: (list(BIASES), str),
    }
