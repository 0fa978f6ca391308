"""KV-cache cost calculator: from the primer's formula (§3–4) to GPUs, concurrent users and $ per 1M tokens.

Thin page: scenario widgets (all bound to the URL) -> core.kv_cache / core.model_config -> plotly figures -> sentences
computed from the same numbers. Default state = the primer's example (7B, 32K context, FP16 -> 17.18 GB = 16.00 GiB).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core import kv_cache as kv
from core.model_config import (
    BIASES,
    FIELD_NAMES,
    LIMITS,
    NORMS,
    ModelConfig,
    ParseReport,
    activation_shapes,
    active_param_count,
    config_from_fields,
    kaplan_estimate,
    param_count,
    parse_config_text,
    preset_sources,
    presets,
    reference_models,
    weight_inventory,
)
from ui.glossary import link, tip
from ui.navigation import PAGES
from ui.widgets import chart, download_table, explain, setup_page

SPEC = next(spec for spec in PAGES if spec.script == "pages/kv_cost.py")
PRIMER = "primer-7b"
CUSTOM = "custom"
DEFAULTS = kv.defaults()
FIELD_KEYS = {name: f"f_{name}" for name in FIELD_NAMES}
COMPARE_DEFAULT = ["llama-3.1-8b", "llama-3.1-70b", "mistral-7b", "deepseek-v3"]
READABLE = st.column_config.NumberColumn(format="localized")  # 124,439,808 rather than 124439808
COLOURS = ["#1f5f99", "#d9822b", "#2e8b57", "#8e44ad", "#c0392b"]

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
    "norms_per_layer": ("Norms per layer", "Normalisations inside each block (2 usually; 4 in Gemma-2)."),
    "bias": ("Biases", "Which projections carry a bias vector: none, only Q/K/V, or all (GPT-2)."),
    "learned_positions": ("Learned positions", "Rows of a learned position table (GPT-2: 1024); 0 for rotary."),
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
    "shared_experts": ("Shared experts", "Experts every token always uses (DeepSeek: 1)."),
    "dense_layers": ("Dense first layers", "Layers at the bottom that keep an ordinary MLP (DeepSeek-V3: 3)."),
}


# --------------------------------------------------------------------------------------------------- formatting
def size(n_bytes: float) -> str:
    """A byte count in the unit that reads best, decimal and binary both named: '17.18 GB = 16.00 GiB'."""
    for dec, dec_name, binary, bin_name in (
        (1e12, "TB", 2**40, "TiB"),
        (1e9, "GB", 2**30, "GiB"),
        (1e6, "MB", 2**20, "MiB"),
        (1e3, "kB", 2**10, "KiB"),
    ):
        if abs(n_bytes) >= dec:
            return f"{n_bytes / dec:,.2f} {dec_name} = {n_bytes / binary:,.2f} {bin_name}"
    return f"{n_bytes:,.0f} bytes"


def gb(n_bytes: float) -> str:
    return f"{kv.to_gb(n_bytes):,.2f} GB"


def money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.2f}" if value >= 0.1 else f"${value:,.4f}"


def count(n: float) -> str:
    return f"{n / 1e9:,.2f} B" if n >= 1e9 else f"{n / 1e6:,.1f} M" if n >= 1e6 else f"{n:,.0f}"


# --------------------------------------------------------------------------------------------------- state
def model_name(model_id: str) -> str:
    return "Custom (fields below)" if model_id == CUSTOM else presets()[model_id].name


def copy_into_fields(config: ModelConfig) -> None:
    for name, key in FIELD_KEYS.items():
        st.session_state[key] = getattr(config, name)


def on_model_change() -> None:
    chosen = st.session_state["model"]
    if chosen != CUSTOM:
        copy_into_fields(presets()[chosen])


def on_field_change() -> None:
    st.session_state["model"] = CUSTOM


def load_primer_example() -> None:
    st.session_state["model"] = PRIMER
    st.session_state["context"] = 32768
    st.session_state["kv_dtype"] = "fp16"
    copy_into_fields(presets()[PRIMER])


def apply_report(report: ParseReport, source: str) -> None:
    st.session_state["kv_report"] = (source, report)
    if report.config is not None:
        copy_into_fields(report.config)
        st.session_state["model"] = CUSTOM
        st.session_state["kv_custom_name"] = report.config.name


def on_upload() -> None:
    upload = st.session_state.get("kv_upload")
    if upload is not None:  # parse_config_text refuses files over MAX_CONFIG_BYTES with their size
        apply_report(parse_config_text(upload.getvalue(), name=upload.name), upload.name)


def on_paste() -> None:
    apply_report(parse_config_text(st.session_state.get("kv_paste", ""), name="Pasted config"), "pasted text")


def seed_fields_from_url() -> None:
    """A link naming only a preset (?model=Llama-3.1-8B) fills the model fields with it on first load.

    The bound selectbox keeps the model's display name in the URL; fields present in the URL win.
    """
    if st.session_state.get("kv_seeded"):
        return
    st.session_state["kv_seeded"] = True
    named = st.query_params.get("model", "")
    chosen = next((key for key, config in presets().items() if named in (key, config.name)), PRIMER)
    if chosen != PRIMER:
        for name, key in FIELD_KEYS.items():
            if key not in st.query_params:
                st.session_state[key] = getattr(presets()[chosen], name)


# --------------------------------------------------------------------------------------------------- widgets
def scenario_widgets() -> dict:
    gpu_ids = list(kv.gpus())
    top = st.columns(3)
    with top[0]:
        st.selectbox(
            "Model",
            [*presets(), CUSTOM],
            format_func=model_name,
            key="model",
            bind="query-params",
            on_change=on_model_change,
            help="A published model, or 'Custom' to use the fields below (an uploaded config.json lands there too).",
        )
        st.selectbox(
            "KV cache number type",
            list(kv.DTYPE_BYTES),
            index=1,
            key="kv_dtype",
            bind="query-params",
            format_func=str.upper,
            help=tip("kv-cache") + "\n\nBytes per stored number: FP32 = 4, FP16/BF16 = 2, FP8/INT8 = 1, INT4 = ½.",
        )
        st.selectbox(
            "Weights stored at",
            list(kv.WEIGHT_BITS),
            key="w_bits",
            bind="query-params",
            format_func=lambda b: f"{b}-bit",
            help="16-bit = original; 8- or 4-bit = quantised weights.",
        )
    with top[1]:
        st.number_input(
            "Context per user T (tokens)",
            1,
            10_000_000,
            32768,
            1024,
            key="context",
            bind="query-params",
            help="Prompt plus answer held in memory for each conversation.",
        )
        st.number_input(
            "Concurrent users",
            1,
            1_000_000,
            16,
            1,
            key="users",
            bind="query-params",
            help="Conversations running at the same moment (each has its own KV cache).",
        )
        st.number_input(
            "Shared system prompt (tokens)",
            0,
            10_000_000,
            0,
            256,
            key="prefix",
            bind="query-params",
            help="A prefix every conversation starts with; prefix caching stores it once per model copy.",
        )
    with top[2]:
        st.selectbox(
            "GPU",
            gpu_ids,
            index=gpu_ids.index(DEFAULTS["gpu"]),
            key="gpu",
            bind="query-params",
            format_func=lambda g: kv.gpus()[g].name,
            help="Memory, bandwidth and speed from the vendor.",
        )
        st.selectbox(
            "GPUs per model copy (tensor parallelism)",
            list(kv.TP_OPTIONS),
            key="tp",
            bind="query-params",
            help="The model's weights and KV heads are split across this many GPUs working as one.",
        )
        st.number_input(
            "Price per GPU-hour ($)",
            0.01,
            1000.0,
            float(DEFAULTS["price_per_gpu_hour"]),
            0.1,
            format="%.2f",
            key="price",
            bind="query-params",
            help="Your cloud or amortised on-premise cost of one GPU for one hour.",
        )
    with st.expander("Engine settings"):
        cols = st.columns(3)
        cols[0].slider(
            "Memory the engine may use",
            0.5,
            0.99,
            float(DEFAULTS["gpu_memory_utilization"]),
            0.01,
            key="util",
            bind="query-params",
            help="vLLM's gpu_memory_utilization: the rest is reserve.",
        )
        cols[1].selectbox(
            "KV block size (tokens)",
            [1, 16, 32],
            index=1,
            key="block",
            bind="query-params",
            help="Memory is handed out in pages of this many tokens (vLLM 16, TensorRT-LLM 32).",
        )
        cols[2].slider(
            "Bandwidth efficiency",
            0.1,
            1.0,
            float(DEFAULTS["bandwidth_efficiency"]),
            0.05,
            key="eff",
            bind="query-params",
            help="Share of peak memory bandwidth decoding really gets.",
        )
    return {
        key: st.session_state[key]
        for key in (
            "model",
            "kv_dtype",
            "w_bits",
            "context",
            "users",
            "prefix",
            "gpu",
            "tp",
            "price",
            "util",
            "block",
            "eff",
        )
    }


def model_field_widgets() -> dict:
    primer = presets()[PRIMER]
    values = {}
    cols = st.columns(4)
    for index, name in enumerate(FIELD_NAMES):
        label, helptext = FIELD_LABELS[name]
        key = FIELD_KEYS[name]
        default = getattr(primer, name)
        with cols[index % 4]:
            if isinstance(default, bool):
                values[name] = st.checkbox(
                    label, default, key=key, bind="query-params", help=helptext, on_change=on_field_change
                )
            elif name in ("norm", "bias"):
                options = list(NORMS if name == "norm" else BIASES)
                values[name] = st.selectbox(
                    label,
                    options,
                    options.index(default),
                    key=key,
                    bind="query-params",
                    help=helptext,
                    on_change=on_field_change,
                )
            else:
                low, high = LIMITS[name]
                values[name] = st.number_input(
                    label, low, high, default, 1, key=key, bind="query-params", help=helptext, on_change=on_field_change
                )
    return values


def config_inputs() -> None:
    with st.expander("Upload or paste a Hugging Face config.json"):
        st.file_uploader(
            "config.json (up to 1 MB)",
            type=["json"],
            key="kv_upload",
            on_change=on_upload,
            help="The model's config.json from its Hugging Face page ('Files and versions').",
        )
        st.text_area("…or paste its contents", key="kv_paste", height=120, placeholder='{"num_hidden_layers": 32, …}')
        st.button("Use pasted config", on_click=on_paste)
        report_box()


def report_box() -> None:
    if "kv_report" not in st.session_state:
        return
    source, report = st.session_state["kv_report"]
    if report.config is None:
        st.error(
            f"Could not use the config from {source}; the current scenario is unchanged.\n\n"
            + "\n".join(f"- {message}" for message in report.errors)
        )
        return
    st.success(f"Loaded '{report.config.name}' from {source} into the model fields (model = Custom).")
    st.markdown("**Fields read:** " + ", ".join(f"`{name}`" for name in report.used))
    if report.assumed:
        st.markdown("**Missing or not stated, so assumed:**\n" + "\n".join(f"- {text}" for text in report.assumed))


# --------------------------------------------------------------------------------------------------- figures
def _layout(fig: go.Figure, title: str, height: int = 420) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0, "font": {"size": 16}},
        height=height,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        font={"family": "sans-serif", "size": 14},
        paper_bgcolor="rgba(0,0,0,0)",
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def _lines(fig: go.Figure, names: list[str], x: np.ndarray, rows: np.ndarray, unit: str, **line: object) -> None:
    for index, (name, row) in enumerate(zip(names, rows, strict=True)):
        fig.add_trace(
            go.Scatter(
                x=x,
                y=row,
                mode="lines",
                name=name,
                line={"color": COLOURS[index % len(COLOURS)], "width": 3 if index == 0 else 2, **line},
                hovertemplate=f"{name}<br>T = %{{x:,}} tokens<br>%{{y:,.2f}} {unit}<extra></extra>",
            )
        )


def _marker(fig: go.Figure, x: float, label: str, *, log_x: bool) -> None:
    """A dashed vertical line at the reader's choice (shapes take data x, annotations log10 x on a log axis)."""
    fig.add_shape(type="line", x0=x, x1=x, y0=0, y1=1, yref="paper", line={"color": "#1b1f24", "dash": "dash"})
    at = float(np.log10(x)) if log_x else x
    fig.add_annotation(x=at, y=1, yref="paper", text=label, showarrow=False, xanchor="left", yanchor="bottom")


def kv_context_figure(
    names: list[str], contexts: np.ndarray, kv_gb: np.ndarray, context: int, capacities: dict[str, float]
) -> go.Figure:
    fig = go.Figure()
    _lines(fig, names, contexts, kv_gb, "GB")
    for index, (label, value) in enumerate(sorted(capacities.items(), key=lambda item: item[1])):
        left = index % 2 == 0  # alternate label ends so neighbouring sizes do not overprint
        fig.add_trace(
            go.Scatter(
                x=[contexts[0], contexts[-1]],
                y=[value, value],
                mode="lines+text",
                text=[label, ""] if left else ["", label],
                textposition="top right" if left else "top left",
                showlegend=False,
                textfont={"size": 11, "color": "#5d6d7e"},
                line={"color": "#7f8c8d", "dash": "dot", "width": 1},
                hoverinfo="skip",
            )
        )
    fig.update_xaxes(type="log", title="context length per user (tokens, log scale)")
    fig.update_yaxes(type="log", title="KV cache of one user (GB, log scale)")
    _marker(fig, context, f"T = {context:,}", log_x=True)
    return _layout(fig, "KV cache of one user vs context length")


def memory_figure(rows: list[tuple[str, kv.Plan]], memory_gb: float) -> go.Figure:
    names = [name for name, _ in rows]
    parts = [
        ("Weights", "#1f5f99", lambda p: p.weights_gpu),
        ("KV cache in use", "#d9822b", lambda p: p.kv_used_gpu),
        ("Reserve", "#a9b4c2", lambda p: p.reserve_gpu),
        ("Free for more users", "#dfe6ee", lambda p: max(p.free_gpu, 0.0)),
    ]
    fig = go.Figure()
    for label, colour, pick in parts:
        values = [kv.to_gb(pick(p)) for _, p in rows]
        fig.add_trace(
            go.Bar(
                x=names,
                y=values,
                name=label,
                marker_color=colour,
                text=[f"{v:,.1f}" if v >= 0.05 * memory_gb else "" for v in values],
                textposition="inside",
                hovertemplate=f"%{{x}}<br>{label}: %{{y:,.2f}} GB<extra></extra>",
            )
        )
    fig.add_hline(y=memory_gb, line={"color": "#c0392b", "dash": "dash"})
    fig.add_annotation(
        x=1,
        xref="paper",
        y=memory_gb,
        text=f"GPU memory {memory_gb:g} GB",
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
        font={"color": "#c0392b"},
    )
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title="GB per GPU", range=[0, 1.3 * memory_gb])
    return _layout(fig, "Memory of one GPU: weights / KV cache / reserve / free")


def users_figure(names: list[str], contexts: np.ndarray, users: np.ndarray, context: int) -> go.Figure:
    fig = go.Figure()
    _lines(fig, names, contexts, users, "users", shape="hv")
    fig.update_xaxes(type="log", title="context length per user (tokens, log scale)")
    fig.update_yaxes(type="log", title="max concurrent users per model copy (log scale)")
    _marker(fig, context, f"T = {context:,}", log_x=True)
    return _layout(fig, "Maximum concurrent users vs context length")


def cost_figure(batches: np.ndarray, cost: np.ndarray, tokens: np.ndarray, batch: int, name: str) -> go.Figure:
    fig = go.Figure(
        go.Scatter(
            x=batches,
            y=cost,
            mode="lines+markers" if len(batches) < 20 else "lines",
            name=name,
            line={"color": COLOURS[0], "width": 3},
            customdata=tokens,
            hovertemplate="batch %{x}<br>$%{y:,.3f} per 1M tokens<br>%{customdata:,.0f} tokens/s<extra></extra>",
        )
    )
    fig.update_xaxes(title="users decoding together (batch)")
    fig.update_yaxes(type="log", title="$ per 1M output tokens (log scale)")
    _marker(fig, batch, f"your batch {batch}", log_x=False)
    return _layout(fig, "Cost per 1M output tokens vs batch size (upper-bound estimate)", height=380)


# --------------------------------------------------------------------------------------------------- page
setup_page(SPEC)
seed_fields_from_url()
st.markdown(
    f"Primer §3 explains why only K and V are kept: every new token looks back at the {link('kv-cache')} of all "
    "earlier tokens. This page turns the primer's size formula into a deployment plan: memory per GPU, how many "
    "users fit, how many GPUs you need and what a million generated tokens cost. Every number below follows from "
    "the choices in this box, and the page's address holds all of them: copy the link to share the scenario."
)
st.button("Show the primer's example (7B, 32K tokens, FP16)", on_click=load_primer_example, type="primary")
choice = scenario_widgets()
with st.expander("Model fields: every size of the model (edit any to build your own)"):
    fields_now = model_field_widgets()
config_inputs()

# Resolve the model and deployment, keeping the last valid scenario when the new one is inconsistent.
problems: list[str] = []
if choice["model"] == CUSTOM:
    config, problems = config_from_fields(fields_now, name=st.session_state.get("kv_custom_name", "Custom model"))
else:
    config = presets()[choice["model"]]
deployment = kv.Deployment(
    gpu=kv.gpus()[choice["gpu"]],
    tp=int(choice["tp"]),
    context=int(choice["context"]),
    users=int(choice["users"]),
    prefix=int(choice["prefix"]),
    kv_dtype=choice["kv_dtype"],
    weight_bits=int(choice["w_bits"]),
    utilisation=float(choice["util"]),
    block=int(choice["block"]),
    efficiency=float(choice["eff"]),
    price_per_gpu_hour=float(choice["price"]),
)
if config is not None and (tp_issue := kv.tp_problem(config, deployment.tp)):
    problems.append(f"{tp_issue[0].upper()}{tp_issue[1:]}; choose another number of GPUs per model copy.")
if problems or config is None:
    st.error(
        "This scenario cannot be computed, so the last valid one is shown:\n\n"
        + "\n".join(f"- {message}" for message in problems)
    )
    config, deployment = st.session_state.get(
        "kv_last_valid", (presets()[PRIMER], kv.Deployment(gpu=kv.gpus()[DEFAULTS["gpu"]]))
    )
else:
    st.session_state["kv_last_valid"] = (config, deployment)

result = kv.plan(config, deployment)
gpu = deployment.gpu
T = deployment.context
needed_tp = None if result.fits else kv.smallest_tp(config, deployment)

# ------------------------------------------------------------------- headline
st.subheader(f"{config.name} on {gpu.name}, {T:,} tokens per user, {deployment.users:,} users")
m = [*st.columns(3), *st.columns(3)]
m[0].metric(
    "KV per token",
    size(result.kv_per_token).split(" = ")[0],
    help="Bytes one more token adds to the cache, over all layers (before any sliding-window cap).",
)
m[0].caption(f"= {size(result.kv_per_token).split(' = ')[1]} ({result.kv_per_token:,.0f} bytes)")
m[1].metric("KV per user", gb(result.kv_per_user), help="One conversation at the full context T, all layers.")
m[1].caption(f"= {kv.to_gib(result.kv_per_user):,.2f} GiB (binary, 2³⁰ bytes)")
m[2].metric(
    f"KV for {deployment.users:,} users",
    gb(result.kv_total),
    help="All users' caches on all GPUs, including copies made by tensor parallelism.",
)
m[2].caption(f"= {kv.to_gib(result.kv_total):,.2f} GiB")
if result.gpus_needed:
    m[3].metric("GPUs needed", f"{result.gpus_needed:,}", help="GPUs per copy × copies needed for all users.")
    m[3].caption(f"{result.replicas:,} copies × {deployment.tp} GPU{'s' if deployment.tp > 1 else ''}")
else:
    m[3].metric("GPUs needed", "does not fit", help="Weights plus one user exceed the engine's memory budget.")
    m[3].caption(f"needs ≥ {needed_tp} GPUs per copy" if needed_tp else "even 64 GPUs per copy are not enough")
m[4].metric("Users per GPU", f"{result.users_per_gpu:,.2f}", help="Max concurrent users of one copy ÷ its GPUs.")
m[4].caption(f"{result.max_users:,} per copy of {deployment.tp} GPU{'s' if deployment.tp > 1 else ''}")
m[5].metric(
    "$ per 1M output tokens",
    money(result.cost_per_million),
    help="Upper-bound estimate from memory bandwidth only (real engines are slower, so cost more).",
)
m[5].caption(
    f"at ${deployment.price_per_gpu_hour:,.2f} per GPU-hour; "
    + (f"{result.tokens_per_second:,.0f} tokens/s per copy" if result.tokens_per_second else "no batch fits")
)
st.caption(
    "GB = 10⁹ bytes (how GPUs are sold); GiB = 2³⁰ bytes (how nvidia-smi and most tools print memory). "
    "The same 16 GiB reads as 17.18 GB."
)

# ------------------------------------------------------------------- formula
st.subheader("The primer's formula with your numbers")
b = kv.element_bytes(deployment.kv_dtype)
exact = kv.kv_bytes_per_sequence(config, T, deployment.kv_dtype)
if config.is_mla:
    symbols = r"\text{KV} = L \cdot T \cdot (r_{kv} + d_{rope}) \cdot \text{bytes}"
    numbers = rf"= {config.n_layers} \cdot {T:,} \cdot ({config.kv_lora_rank} + {config.qk_rope_head_dim}) \cdot {b:g}"
    note = (
        "Multi-head latent attention caches one compressed vector per token and layer that serves as both K and V, "
        "so there is no factor 2 (a published calculator once doubled it: a known bug)."
    )
elif config.sliding_layers:
    symbols = (
        r"\text{KV} = 2 \cdot (L_{full} \cdot T + L_{window} \cdot \min(T, W)) \cdot n_{kv} \cdot d_k"
        r" \cdot \text{bytes}"
    )
    numbers = (
        rf"= 2 \cdot ({config.full_layers} \cdot {T:,} + {config.sliding_layers} \cdot "
        rf"{min(T, config.sliding_window):,})"
        rf" \cdot {config.n_kv_heads} \cdot {config.head_dim} \cdot {b:g}"
    )
    note = (
        f"{config.sliding_layers} of the {config.n_layers} layers keep only the last {config.sliding_window:,} "
        f"tokens; the other {config.full_layers} keep all {T:,}."
    )
else:
    symbols = r"\text{KV} = 2 \cdot L \cdot T \cdot n_{kv} \cdot d_k \cdot \text{bytes}"
    numbers = rf"= 2 \cdot {config.n_layers} \cdot {T:,} \cdot {config.n_kv_heads} \cdot {config.head_dim} \cdot {b:g}"
    note = (
        "The primer writes h for the heads; with grouped-query attention only the n_kv KV heads are stored, "
        f"here {config.n_kv_heads} of {config.n_heads}."
    )
st.latex(symbols)
st.latex(numbers.replace(",", "{,}"))
st.markdown(
    f"= **{exact:,.0f} bytes = {kv.to_gb(exact):,.2f} GB** (decimal, 10⁹) **= {kv.to_gib(exact):,.2f} GiB** "
    f"(binary, 2³⁰) for one user. {note} With blocks of {deployment.block} tokens the engine allocates "
    f"{result.tokens_allocated:,.0f} tokens per user ({result.tokens_allocated - T:,.0f} of rounding)."
)

# ------------------------------------------------------------------- comparison set
st.multiselect(
    "Models to compare (up to 4, beside the current one)",
    list(presets()),
    default=COMPARE_DEFAULT,
    format_func=model_name,
    max_selections=4,
    key="compare",
    bind="query-params",
    help="Shown as extra lines in the charts and rows in the table.",
)
others = [presets()[key] for key in st.session_state["compare"] if presets()[key] != config]
compared: list[tuple[str, ModelConfig, kv.Deployment, kv.Plan]] = [(config.name, config, deployment, result)]
for other in others:
    tp = kv.fitted_tp(other, deployment)
    if tp is not None:
        other_dep = replace(deployment, tp=tp)
        label = other.name if tp == deployment.tp else f"{other.name} ({tp} GPUs)"
        compared.append((label, other, other_dep, kv.plan(other, other_dep)))
names = [label for label, *_ in compared]

contexts = np.unique(np.geomspace(256, max(1_048_576, 2 * T), 240).astype(np.int64))
tabs = st.tabs(
    ["KV vs context", "Memory per GPU", "Users vs context", "Cost vs batch"],
    key="view",
    on_change="rerun",
    bind="query-params",
)
if tabs[0].open:
    with tabs[0]:
        kv_gb = kv.kv_sweep_many([c for _, c, _, _ in compared], contexts, deployment.kv_dtype, block=deployment.block)
        kv_gb = kv_gb / kv.GB
        sizes: dict[float, list[str]] = {}
        for g in kv.gpus().values():
            if g.memory_gb in {24, 80, 192} or g.id == gpu.id:
                sizes.setdefault(g.memory_gb, []).append(g.name)
        capacities = {f"{' / '.join(found)}: {memory:g} GB": memory for memory, found in sizes.items()}
        chart(
            kv_context_figure(names, contexts, kv_gb, T, capacities),
            key="kv-context",
            alt="Log-log lines of one user's KV cache in GB against context length, one per model, with GPU sizes.",
        )
        double = kv.kv_bytes_per_sequence(config, 2 * T, deployment.kv_dtype, block=deployment.block)
        capped = (
            " until the sliding window caps it"
            if config.sliding_layers == config.n_layers
            else f" (its {config.sliding_layers} windowed layers stop at {config.sliding_window:,} tokens)"
            if config.sliding_layers
            else ""
        )
        least = min(compared, key=lambda item: item[3].kv_per_user)
        explain(
            f"At {T:,} tokens one {config.name} conversation holds {gb(result.kv_per_user)} of KV cache; at "
            f"{2 * T:,} tokens it holds {gb(double)}. Among the models shown, {least[1].name} needs the least "
            f"({gb(least[3].kv_per_user)} per user at this context). Dotted lines are whole GPUs' memory.",
            f"The cache grows in a straight line with context{capped}: selling longer context windows buys memory in "
            "direct proportion, per user, on top of the model's weights.",
        )
if tabs[1].open:
    with tabs[1]:
        chart(
            memory_figure([(label, p) for label, _, _, p in compared], gpu.memory_gb),
            key="kv-memory",
            alt="Stacked bars per model: one GPU's memory split into weights, KV cache in use, reserve and free.",
        )
        if result.fits:
            what = (
                f"One {gpu.name} of a {deployment.tp}-GPU copy holds {gb(result.weights_gpu)} of {config.name}'s "
                f"weights, {gb(result.kv_used_gpu)} of KV cache for {result.batch:,} users, keeps "
                f"{gb(result.reserve_gpu)} in reserve ({1 - deployment.utilisation:.0%}) and has "
                f"{gb(max(result.free_gpu, 0))} free."
            )
        else:
            what = (
                f"{config.name}'s weights ({gb(result.weights_gpu)} per GPU, {deployment.tp} per copy) leave "
                f"{gb(max(result.kv_budget_gpu, 0))} of the {gb(deployment.utilisation * gpu.memory_bytes)} budget: "
                f"not enough for one user at {T:,} tokens (the bar runs past the red line)."
            )
        if result.replication <= 1:
            rep = ""
        elif config.is_mla:
            rep = (
                f" The latent cannot be split by heads, so each of the {deployment.tp} GPUs holds all of it: the "
                f"cluster stores {result.replication:g} copies of the cache."
            )
        else:
            rep = (
                f" With {deployment.tp} GPUs and only {config.n_kv_heads} KV heads each GPU holds "
                f"{result.heads_per_gpu} head, so the cluster stores {result.replication:g} copies of the cache."
            )
        explain(
            what
            + rep
            + " Compared models that do not fit on your GPU count are shown at the smallest count that fits.",
            "Whatever memory the weights do not take is the room for users: weights are a fixed cost, "
            "the KV cache is the variable cost that scales with users × context.",
        )
if tabs[2].open:
    with tabs[2]:
        users_rows = np.vstack([kv.users_vs_context(c, d, contexts) for _, c, d, _ in compared])
        chart(
            users_figure(names, contexts, np.where(users_rows > 0, users_rows, np.nan), T),
            key="kv-users",
            alt="Log-log step lines of the maximum concurrent users of one model copy against context length.",
        )
        half = kv.plan(config, replace(deployment, context=max(1, T // 2))).max_users
        explain(
            f"At {T:,} tokens one {deployment.tp}-GPU copy of {config.name} on {gpu.name} serves at most "
            f"{result.max_users:,} users at once; at {max(1, T // 2):,} tokens it would serve {half:,}. "
            "Lines stop where not even one user fits.",
            "Concurrency, not speed, is what long context costs: halving the context roughly doubles the users a GPU "
            "can carry, and so halves the hardware per user.",
        )
if tabs[3].open:
    with tabs[3]:
        if result.max_users:
            batches = np.unique(np.linspace(1, result.max_users, min(result.max_users, 200)).astype(np.int64))
            tokens, cost = kv.cost_vs_batch(config, deployment, batches)
            chart(
                cost_figure(batches, cost, tokens, result.batch, config.name),
                key="kv-cost",
                alt="Falling line of dollars per million output tokens against batch size.",
            )
            explain(
                f"One user alone costs {money(float(cost[0]))} per 1M tokens; {result.batch:,} users decoding together "
                f"cost {money(result.cost_per_million)} (at ${deployment.price_per_gpu_hour:,.2f} per GPU-hour, "
                f"{deployment.efficiency:.0%} of {gpu.bandwidth_tb_s:g} TB/s bandwidth).",
                "Each decoding step reads all the weights once however many users share it, so batching divides the "
                "weights' cost among users until the KV cache fills the memory. This is an upper-bound estimate: "
                "compute, scheduling and communication only make real tokens slower and dearer.",
            )
        else:
            st.info(
                f"No batch fits at {T:,} tokens on {deployment.tp} × {gpu.name}: raise the GPUs per model copy "
                f"(at least {needed_tp}) or shorten the context."
                if needed_tp
                else "No batch fits even with 64 GPUs per copy."
            )

# ------------------------------------------------------------------- table
st.subheader("Side by side")
frame = pd.DataFrame(
    [
        {
            "model": c.name,
            "attention": c.attention_kind,
            "parameters (B)": round(p.params / 1e9, 3),
            "KV per token (kB)": round(p.kv_per_token / 1e3, 2),
            f"KV per user at {T:,} (GB)": round(kv.to_gb(p.kv_per_user), 3),
            f"KV per user at {T:,} (GiB)": round(kv.to_gib(p.kv_per_user), 3),
            "weights (GB)": round(kv.to_gb(p.weights_bytes), 2),
            "GPUs per copy": d.tp,
            "users per copy": p.max_users,
            f"GPUs for {deployment.users:,} users": p.gpus_needed,
            "tokens/s per copy (upper bound)": round(p.tokens_per_second, 1) if p.tokens_per_second else None,
            "$ per 1M tokens": round(p.cost_per_million, 4) if p.cost_per_million else None,
        }
        for _, c, d, p in compared
    ]
)
st.dataframe(frame, hide_index=True, width="stretch")
download_table(frame, name="comparison", key="kv-comparison")
st.caption(
    f"Every row: {gpu.name}, {deployment.kv_dtype.upper()} cache, {deployment.weight_bits}-bit weights, "
    f"{T:,} tokens, {deployment.users:,} users; compared models at your GPUs per copy, or the smallest number that "
    "holds them."
)

# ------------------------------------------------------------------- finance
st.subheader("Why it matters for the budget")
budget_tp = kv.fitted_tp(config, deployment) or deployment.tp
budget_dep = replace(deployment, tp=budget_tp)
base = kv.plan(config, budget_dep)
doubled = kv.plan(config, replace(budget_dep, context=2 * T))
fp8 = kv.plan(config, replace(budget_dep, kv_dtype="fp8"))
mha = kv.mha_equivalent_bytes_per_token(config, deployment.kv_dtype)
at_tp = "" if budget_tp == deployment.tp else f" (at {budget_tp} GPUs per copy, the fewest that hold it)"


def user_hour(p: kv.Plan) -> str:
    return money(deployment.price_per_gpu_hour * budget_tp / p.max_users) if p.max_users else "n/a (no user fits)"


lines = [
    f"**Doubling the context** from {T:,} to {2 * T:,} tokens takes one user's cache from "
    f"{gb(base.kv_per_user)} to {gb(doubled.kv_per_user)} and users per copy{at_tp} from {base.max_users:,} to "
    f"{doubled.max_users:,}: the GPU cost per user-hour goes from {user_hour(base)} to {user_hour(doubled)}.",
]
if mha > base.kv_per_token:
    lines.append(
        f"**{config.attention_kind} saves memory**: {config.name} stores {size(base.kv_per_token)} per token; with "
        f"plain multi-head attention it would store {size(mha)}, {mha / base.kv_per_token:,.1f}× as much."
    )
elif config.n_heads % 4 == 0:
    lines.append(
        f"**{config.name} uses plain multi-head attention**: grouped-query attention with {config.n_heads // 4} KV "
        f"heads (a quarter) would cut its {size(base.kv_per_token)} per token to a quarter."
    )
if deployment.kv_dtype != "fp8":
    lines.append(
        f"**An FP8 KV cache** stores {kv.element_bytes('fp8') / b:.2g}× the bytes of "
        f"{deployment.kv_dtype.upper()}: users per copy{at_tp} go from {base.max_users:,} to {fp8.max_users:,}."
    )
st.markdown("\n".join(f"- {line}" for line in lines))

options = kv.gpu_options(config, deployment)
option_frame = pd.DataFrame(
    [
        {
            "GPU": o.gpu.name,
            "memory (GB)": o.gpu.memory_gb,
            "bandwidth (TB/s)": o.gpu.bandwidth_tb_s,
            "GPUs per copy needed": o.tp,
            "users per GPU": round(o.users_per_gpu, 2),
            "tokens/s per GPU": round(o.tokens_per_second_per_gpu, 1) if o.tokens_per_second_per_gpu else None,
            f"cheaper per token than {gpu.name} below ($/h)": round(o.break_even_price, 2)
            if o.break_even_price
            else None,
        }
        for o in options
    ]
)
st.markdown(
    f"**A bigger GPU or more GPUs?** For {config.name} at {T:,} tokens: the smallest number of each GPU "
    f"that holds the model, and the hourly price under which it beats {gpu.name} at "
    f"${deployment.price_per_gpu_hour:,.2f}/h on cost per token."
)
st.dataframe(option_frame, hide_index=True, width="stretch")
winners = [o for o in options if o.break_even_price and o.gpu.id != gpu.id]
if winners:
    best = max(winners, key=lambda o: o.break_even_price / deployment.price_per_gpu_hour)
    st.markdown(
        f"The largest margin: a {best.gpu.name} ({best.tp} per copy) is cheaper per token as long as it "
        f"costs under **${best.break_even_price:,.2f}** an hour, because it serves "
        f"{best.tokens_per_second_per_gpu:,.0f} tokens/s per GPU."
    )

# ------------------------------------------------------------------- anatomy
st.subheader("Model anatomy (primer §4)")
inventory = weight_inventory(config)
inventory_frame = pd.DataFrame(
    [
        {
            "part": r.part,
            "weight": r.weight,
            "shape": r.shape,
            "parameters each": r.each,
            "copies": r.copies,
            "total": r.total,
        }
        for r in inventory
    ]
)
total = param_count(config)
st.dataframe(
    inventory_frame,
    hide_index=True,
    width="stretch",
    column_config={name: READABLE for name in ("parameters each", "total")},
)
download_table(inventory_frame, name="weight inventory", key="kv-inventory")
anatomy = st.columns(3)
anatomy[0].metric("Parameters computed from the config", f"{total:,}")
if config.published_params:
    anatomy[0].caption(
        f"Published: {count(config.published_params)} "
        f"({(total - config.published_params) / config.published_params:+.2%} difference)."
    )
if config.is_moe:
    anatomy[0].caption(
        f"Active per token: {count(active_param_count(config))}"
        + (f" (published {count(config.published_active_params)})" if config.published_active_params else "")
    )
anatomy[1].metric("Rule of thumb 12 · L · d_model²", f"{kaplan_estimate(config):,}")
anatomy[1].caption(
    f"= {kaplan_estimate(config) / total:.0%} of the exact count. The rule counts 4·d_model² of attention and "
    "8·d_model² of MLP per layer and no embeddings"
    f"{'; every expert of a mixture adds its own MLP' if config.is_moe else ''}."
)
anatomy[2].metric(f"Weights at {deployment.weight_bits}-bit", gb(result.weights_bytes))
anatomy[2].caption(f"= {kv.to_gib(result.weights_bytes):,.2f} GiB")
st.markdown(
    f"{link('embedding')} and {link('unembedding')}: "
    f"{'tied, one matrix serves both' if config.tied_embeddings else 'two separate matrices'}."
)
shape_frame = pd.DataFrame([{"activation": a, "shape": s} for a, s, _ in activation_shapes(config, T)])
st.markdown(f"**Activations at T = {T:,}** (recomputed every forward pass; only K and V are kept):")
st.dataframe(shape_frame, hide_index=True, width="stretch")
references = [
    ("GPT-2 small", presets()["gpt2"]),
    ("Primer's modern 7B", presets()[PRIMER]),
    ("Primer's tiny model (§6)", reference_models()["tiny-736"]),
]
st.markdown("**Reference points**: the exact count and the rule of thumb side by side.")
st.dataframe(
    pd.DataFrame(
        [
            {
                "model": label,
                "L": c.n_layers,
                "d_model": c.d_model,
                "exact parameters": param_count(c),
                "12·L·d_model²": kaplan_estimate(c),
                "rule ÷ exact": round(kaplan_estimate(c) / param_count(c), 3),
            }
            for label, c in references
        ]
    ),
    hide_index=True,
    width="stretch",
    column_config={name: READABLE for name in ("exact parameters", "12·L·d_model²")},
)

# ------------------------------------------------------------------- sources
with st.expander("Sources of every preset figure and assumption"):
    if choice["model"] != CUSTOM:
        for what, text in preset_sources(choice["model"]).items():
            st.markdown(f"- **{config.name}, {what}**: {text}")
    st.markdown(f"- **{gpu.name}**: {gpu.source}")
    for key, reason in kv.default_reasons().items():
        st.markdown(f"- **{key}**: {reason}")
    st.markdown(
        "- Throughput and cost are a memory-bandwidth upper bound: step time = (weights per GPU + KV read "
        "per step) ÷ (bandwidth × efficiency); compute, scheduling and communication are not modelled. "
        "Sliding-window layers are not shared by prefix caching here (a conservative choice)."
    )
