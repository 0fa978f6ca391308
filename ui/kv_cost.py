"""The KV-cost page's sections: headline numbers, the formula, the four charts, the tables and their sentences.

Every number comes from core.plan.kv_cache / core.plan.model_config; this module formats it, draws it (plotly figures
built in one constructor call and cached by small hashable keys: frozen configs, deployments and plans) and says it in
words.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.plan import kv_cache as kv
from core.plan.model_config import (
    ModelConfig,
    activation_shapes,
    active_param_count,
    kaplan_estimate,
    param_count,
    preset_sources,
    presets,
    reference_models,
    weight_inventory,
)
from ui.arrow_rows import arrow_table
from ui.elements.figures import layout
from ui.elements.glossary import link
from ui.elements.html_element import draw_html
from ui.elements.inert import frame_csv
from ui.elements.metric_cards import Card, metric_cards
from ui.elements.plain_math import display, product, sym
from ui.elements.static_table import Cell, static_table
from ui.elements.widgets import OnFirstUse, chart, download_csv, explain
from ui.kv_cost_state import CUSTOM, PRIMER
from ui.kv_planner import MONEY, PINNED, calibration_sources, log_axis, plural

pa = OnFirstUse("pyarrow")

READABLE = st.column_config.NumberColumn(format="localized")  # 124,439,808 rather than 124439808
COLOURS = ["#1f5f99", "#d9822b", "#2e8b57", "#8e44ad", "#c0392b"]
Compared = tuple[tuple[str, ModelConfig, kv.Deployment, kv.Plan], ...]
COST_COLUMN = "$ per 1M output tokens (best case)"


# --------------------------------------------------------------------------------------------------- formatting
def size_parts(n_bytes: float) -> tuple[str, str]:
    """A byte count in the unit that reads best, decimal and binary, for every count: ('17.18 GB', '16.00 GiB'),
    ('512 bytes', '0.50 KiB') below a kilobyte."""
    for dec, dec_name, binary, bin_name in (
        (1e12, "TB", 2**40, "TiB"),
        (1e9, "GB", 2**30, "GiB"),
        (1e6, "MB", 2**20, "MiB"),
        (1e3, "kB", 2**10, "KiB"),
    ):
        if abs(n_bytes) >= dec:
            return f"{n_bytes / dec:,.2f} {dec_name}", f"{n_bytes / binary:,.2f} {bin_name}"
    return f"{n_bytes:,.0f} bytes", f"{n_bytes / 2**10:,.2f} KiB"


def size(n_bytes: float) -> str:
    """A byte count, decimal and binary both named: '17.18 GB = 16.00 GiB', '512 bytes = 0.50 KiB'."""
    return " = ".join(size_parts(n_bytes))


def gb(n_bytes: float) -> str:
    """Bytes as decimal gigabytes, '17.18 GB'."""
    return f"{kv.to_gb(n_bytes):,.2f} GB"


def money(value: float | None) -> str:
    """Dollars to the cent, or to 1/100 cent below ten cents; 'n/a' for no value."""
    return "n/a" if value is None else f"${value:,.2f}" if value >= 0.1 else f"${value:,.4f}"


def count(n: float) -> str:
    """A parameter count in billions or millions."""
    return f"{n / 1e9:,.2f} B" if n >= 1e9 else f"{n / 1e6:,.1f} M" if n >= 1e6 else f"{n:,.0f}"


def _gpus(n: int) -> str:
    return plural(n, "GPU")


@lru_cache(maxsize=64)
def compared_rows(config: ModelConfig, dep: kv.Deployment, others: tuple[ModelConfig, ...]) -> Compared:
    """The chosen model and the compared ones, labelled with their GPUs per copy when that differs from the choice."""
    return tuple(
        (c.name if d.tp == dep.tp else f"{c.name} ({d.tp} GPUs)", c, d, p)
        for c, d, p in kv.compared_plans(config, dep, list(others))
    )


# --------------------------------------------------------------------------------------------------- figures
def _lines(names: list[str], x: np.ndarray, rows: np.ndarray, unit: str, **line: object) -> list[dict]:
    return [
        {
            "type": "scatter",
            "x": x,
            "y": row,
            "mode": "lines",
            "name": name,
            "line": {"color": COLOURS[index % len(COLOURS)], "width": 3 if index == 0 else 2, **line},
            "hovertemplate": f"{name}<br>T = %{{x:,}} tokens<br>%{{y:,.2f}} {unit}<extra></extra>",
        }
        for index, (name, row) in enumerate(zip(names, rows, strict=True))
    ]


def _marker(x: float, label: str, *, log_x: bool) -> dict:
    """A dashed vertical line at the reader's choice (shapes take data x, annotations log10 x on a log axis)."""
    return {
        "shapes": [
            {
                "type": "line",
                "x0": x,
                "x1": x,
                "y0": 0,
                "y1": 1,
                "yref": "paper",
                "line": {"color": "#1b1f24", "dash": "dash"},
            }
        ],
        "annotations": [
            {
                "x": float(np.log10(x)) if log_x else x,
                "y": 1,
                "yref": "paper",
                "text": label,
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "bottom",
            }
        ],
    }


def _layout(title: str, height: int = 420, **extra: object) -> dict:
    """ui.elements.figures.layout with this page's legend below the plot, room for the context marker, no plotly
    template."""
    return layout(
        title,
        height,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        legend={"orientation": "h", "y": -0.2},
        template="none",  # the chart element applies the theme; the template would be most of the JSON
        **extra,
    )


def _log_axes(y_title: str, x: np.ndarray, y: np.ndarray) -> dict:
    """Log x (context) and log y axes with full tick labels (1K, 10K; 2, 5, 10) over the data's range."""
    finite = y[np.isfinite(y) & (y > 0)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (1.0, 10.0)
    return {
        "xaxis": log_axis("context length per user (tokens, log scale)", float(x[0]), float(x[-1])),
        "yaxis": log_axis(y_title, low, high),
    }


CLOSE_DECADES = 0.35  # GPU sizes closer than this on the log axis would overprint labels written on the same side


def kv_context_figure(
    names: list[str], contexts: np.ndarray, kv_gb: np.ndarray, context: int, capacities: dict[str, float]
) -> go.Figure:
    """One user's KV cache against context length, one line per model, GPU memory sizes as dotted lines."""
    data = _lines(names, contexts, kv_gb, "GB")
    sizes = sorted(capacities.items(), key=lambda item: item[1])
    for index, (label, value) in enumerate(sizes):
        # Labels at the short-context end, where every model's cache is still small, so no model line runs through
        # them; a size close below the next one is labelled under its line, so the two labels face apart.
        close = index + 1 < len(sizes) and np.log10(sizes[index + 1][1] / value) < CLOSE_DECADES
        data.append(
            {
                "type": "scatter",
                "x": [contexts[0], contexts[-1]],
                "y": [value, value],
                "mode": "lines+text",
                "text": [label, ""],
                "textposition": "bottom right" if close else "top right",
                "showlegend": False,
                "textfont": {"size": 11, "color": "#5d6d7e"},
                "line": {"color": "#7f8c8d", "dash": "dot", "width": 1},
                "hoverinfo": "skip",
            }
        )
    every = np.concatenate([np.ravel(kv_gb), list(capacities.values())])
    extra = _log_axes("KV cache of one user (GB, log scale)", contexts, every) | _marker(
        context, f"T = {context:,}", log_x=True
    )
    return go.Figure(data=data, layout=_layout("KV cache of one user vs context length", **extra))


def memory_figure(rows: list[tuple[str, kv.Plan]], memory_gb: float) -> go.Figure:
    """One GPU's memory per model as stacked bars (weights / KV in use / reserve / free) under the GPU's size."""
    names = [name for name, _ in rows]
    parts: list[tuple[str, str, Callable[[kv.Plan], float]]] = [
        ("Weights", "#1f5f99", lambda p: p.weights_gpu),
        ("KV cache in use", "#d9822b", lambda p: p.kv_used_gpu),
        ("Reserve", "#a9b4c2", lambda p: p.reserve_gpu),
        ("Free for more users", "#dfe6ee", lambda p: max(p.free_gpu, 0.0)),
    ]
    data = []
    for label, colour, pick in parts:
        values = [kv.to_gb(pick(p)) for _, p in rows]
        data.append(
            {
                "type": "bar",
                "x": names,
                "y": values,
                "name": label,
                "marker": {"color": colour},
                "text": [f"{v:,.1f}" if v >= 0.08 * memory_gb else "" for v in values],  # room for a legible label
                "textposition": "inside",
                "hovertemplate": f"%{{x}}<br>{label}: %{{y:,.2f}} GB<extra></extra>",
            }
        )
    line = {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": memory_gb, "y1": memory_gb}
    note = {
        "x": 1,
        "xref": "paper",
        "y": memory_gb,
        "text": f"GPU memory {memory_gb:g} GB",
        "showarrow": False,
        "xanchor": "right",
        "yanchor": "bottom",
        "font": {"color": "#c0392b"},
    }
    return go.Figure(
        data=data,
        layout=_layout(
            "Memory of one GPU: weights / KV cache / reserve / free",
            barmode="stack",
            yaxis={"title": {"text": "GB per GPU"}, "range": [0, 1.3 * memory_gb]},
            shapes=[{**line, "line": {"color": "#c0392b", "dash": "dash"}}],
            annotations=[note],
        ),
    )


def users_figure(names: list[str], contexts: np.ndarray, users: np.ndarray, context: int) -> go.Figure:
    """Maximum concurrent users of one model copy against context length, one step line per model."""
    extra = _log_axes("max concurrent users per model copy (log scale)", contexts, users) | _marker(
        context, f"T = {context:,}", log_x=True
    )
    return go.Figure(
        data=_lines(names, contexts, users, "users", shape="hv"),
        layout=_layout("Maximum concurrent users vs context length", **extra),
    )


def cost_figure(batches: np.ndarray, cost: np.ndarray, tokens: np.ndarray, batch: int, name: str) -> go.Figure:
    """$ per 1M output tokens against batch size, with the reader's batch marked."""
    trace = {
        "type": "scatter",
        "x": batches,
        "y": cost,
        "mode": "lines+markers" if len(batches) < 20 else "lines",
        "name": name,
        "line": {"color": COLOURS[0], "width": 3},
        "customdata": tokens,
        "hovertemplate": "batch %{x}<br>$%{y:,.3f} per 1M tokens<br>%{customdata:,.0f} tokens/s<extra></extra>",
    }
    axes = {
        "xaxis": {"title": {"text": "users decoding together (batch)"}},
        "yaxis": log_axis("$ per 1M output tokens (log scale)", float(cost.min()), float(cost.max()), money=True),
    }
    return go.Figure(
        data=[trace],
        layout=_layout(
            "Cost per 1M output tokens vs batch size (best case)",
            380,
            **axes,
            **_marker(batch, f"your batch {batch}", log_x=False),
        ),
    )


@lru_cache(maxsize=64)
def _kv_chart(compared: Compared) -> go.Figure:
    dep, gpu = compared[0][2], compared[0][2].gpu
    contexts = kv.context_grid(dep.context)
    kv_gb = kv.kv_sweep_many([c for _, c, _, _ in compared], contexts, dep.kv_dtype, block=dep.block) / kv.GB
    sizes: dict[float, list[str]] = {}
    for g in kv.gpus().values():
        if g.memory_gb in {24, 80, 192} or g.id == gpu.id:
            sizes.setdefault(g.memory_gb, []).append(g.name)
    capacities = {f"{' / '.join(found)}: {memory:g} GB": memory for memory, found in sizes.items()}
    return kv_context_figure([label for label, *_ in compared], contexts, kv_gb, dep.context, capacities)


@lru_cache(maxsize=64)
def _users_chart(compared: Compared) -> go.Figure:
    dep = compared[0][2]
    contexts = kv.context_grid(dep.context)
    users = np.vstack([kv.users_vs_context(c, d, contexts) for _, c, d, _ in compared])
    names = [label for label, *_ in compared]
    return users_figure(names, contexts, np.where(users > 0, users, np.nan), dep.context)


@lru_cache(maxsize=64)
def _cost_chart(config: ModelConfig, dep: kv.Deployment, result: kv.Plan) -> tuple[go.Figure, float]:
    batches = kv.batch_grid(result.max_users)
    tokens, cost = kv.cost_vs_batch(config, dep, batches)
    return cost_figure(batches, cost, tokens, result.batch, config.name), float(cost[0])


# --------------------------------------------------------------------------------------------------- sections
BYTE_UNITS = (
    "GB = 10⁹ bytes (how GPUs are sold); GiB = 2³⁰ bytes (how nvidia-smi and most tools print memory). "
    "The same 16 GiB reads as 17.18 GB."
)


def headline_cards(config: ModelConfig, dep: kv.Deployment, result: kv.Plan, auto: bool = False) -> list[Card]:
    """The six headline numbers: KV per token, per user, for all users; GPUs, users per model copy, $ per 1M tokens.
    The page and its briefing both show these.

    `auto`: the GPUs per copy were chosen by the page (the fewest that hold the model), which the GPUs' line says."""
    per_token = size_parts(result.kv_per_token)
    if result.gpus_needed:
        who = "the fewest that hold it, set by the page" if auto else "your choice"
        gpus = Card(
            "GPUs needed",
            f"{result.gpus_needed:,}",
            f"{plural(result.replicas, 'copy', 'copies')} × {_gpus(dep.tp)} ({who})",
            "GPUs per copy × copies needed for all users. The GPUs per copy are set under Engine settings.",
        )
    else:
        needed_tp = kv.smallest_tp(config, dep)
        gpus = Card(
            "GPUs needed",
            "does not fit",
            f"needs ≥ {needed_tp} GPUs per copy" if needed_tp else "even 64 GPUs per copy are not enough",
            "Weights plus one user exceed the engine's memory budget.",
        )
    rate = result.tokens_per_second
    speed = f"about {rate:,.0f} tokens/s per copy" if rate else "no batch fits"
    return [
        Card(
            "KV per token",
            per_token[0],
            f"= {per_token[1]} ({result.kv_per_token:,.0f} bytes)",
            "Bytes one more token adds to the cache, over all layers (before any sliding-window cap).",
        ),
        Card(
            "KV per user",
            gb(result.kv_per_user),
            f"= {kv.to_gib(result.kv_per_user):,.2f} GiB (binary, 2³⁰ bytes)",
            "One conversation at the full context T, all layers.",
        ),
        Card(
            f"KV for {plural(dep.users, 'user')}",
            gb(result.kv_total),
            f"= {kv.to_gib(result.kv_total):,.2f} GiB",
            "All users' caches on all GPUs, including copies made by tensor parallelism.",
        ),
        gpus,
        Card(
            "Users per model copy",
            f"{result.max_users:,}",
            f"on {_gpus(dep.tp)}",
            "The most conversations one copy holds at once at this context (memory for the KV cache).",
        ),
        Card(
            "$ per 1M output tokens (best case)",
            money(result.cost_per_million),
            f"at ${dep.price_per_gpu_hour:,.2f} per GPU-hour; {speed}",
            "All users decoding at the full context in full batches, no queueing or idle time, at the calibrated "
            "speed (an estimate: see the Calibration section). Real serving costs more.",
        ),
    ]


def headline(lead: str, config: ModelConfig, dep: kv.Deployment, result: kv.Plan, auto: bool = False) -> None:
    """The page's answer (`lead`) with the scenario as a heading under it, one markdown element, then the six headline
    numbers as one more (ui/elements/metric_cards.py): the first screen costs two elements per rerun."""
    title = f"{config.name} on {dep.gpu.name}, {dep.context:,} tokens per user, {plural(dep.users, 'user')}"
    st.markdown(f"{lead}\n\n### {title}")
    cards = headline_cards(config, dep, result, auto)
    metric_cards(cards, label="Headline numbers", key="kv-headline", footnote=BYTE_UNITS)


def context_warning(config: ModelConfig, context: int) -> None:
    """A warning when the context per user is longer than the model's maximum context (the numbers still compute).
    Drawn last in the answer's own box, so one coming or going shifts no element of the sections below it: a shifted
    chart or table is drawn again from scratch in the browser."""
    if config.exceeds_context(context):
        st.warning(
            f"**{context:,} tokens per user is longer than {config.name}'s maximum context of "
            f"{config.max_context:,} tokens** (max_position_embeddings in its config.json). The memory and cost "
            "on this page are still computed, but the model as configured cannot hold conversations this long: shorten "
            "the context, or choose a model (or a rope-scaling setup) built for it."
        )


def formula(config: ModelConfig, dep: kv.Deployment, result: kv.Plan) -> None:
    """The primer's KV formula in symbols, then with the reader's numbers, then the result in both units: one HTML
    element (heading, the two formula lines as text, the sentence), redrawn on every change of the scenario."""
    t, b = dep.context, f"{kv.element_bytes(dep.kv_dtype):g}"
    exact = kv.kv_bytes_per_sequence(config, t, dep.kv_dtype)
    n_kv, d_k = sym("n", "kv"), sym("d", "k")
    if config.is_mla:
        symbols = product(sym("L"), sym("T"), f"({sym('r', 'kv')} + {sym('d', 'rope')})", "bytes")
        numbers = product(config.n_layers, t, f"({config.kv_lora_rank} + {config.qk_rope_head_dim})", b)
        note = (
            "Multi-head latent attention caches one compressed vector per token and layer that serves as both K and "
            "V, so there is no factor 2 (a published calculator once doubled it: a known bug)."
        )
    elif config.sliding_layers:
        full, window = product(sym("L", "full"), sym("T")), product(sym("L", "window"), f"min({sym('T')}, {sym('W')})")
        symbols = product(2, f"({full} + {window})", n_kv, d_k, "bytes")
        kept = product(config.sliding_layers, min(t, config.sliding_window))
        numbers = product(2, f"({product(config.full_layers, t)} + {kept})", config.n_kv_heads, config.head_dim, b)
        note = (
            f"{config.sliding_layers} of the {config.n_layers} layers keep only the last {config.sliding_window:,} "
            f"tokens; the other {config.full_layers} keep all {t:,}."
        )
    else:
        symbols = product(2, sym("L"), sym("T"), n_kv, d_k, "bytes")
        numbers = product(2, config.n_layers, t, config.n_kv_heads, config.head_dim, b)
        note = (
            "The primer writes h for the heads; with grouped-query attention only the n_kv KV heads are stored, "
            f"here {config.n_kv_heads} of {config.n_heads}."
        )
    draw_html(
        "<h3>The primer's formula with your numbers</h3>"
        + display(f"KV = {symbols}", f"= {numbers}")
        + f"<p>= <strong>{exact:,.0f} bytes = {kv.to_gb(exact):,.2f} GB</strong> (decimal, 10⁹) "
        f"<strong>= {kv.to_gib(exact):,.2f} GiB</strong> (binary, 2³⁰) for one user. {note} With blocks of "
        f"{dep.block} tokens the engine allocates {result.tokens_allocated:,.0f} tokens per user "
        f"({result.tokens_allocated - t:,.0f} of rounding).</p>"
    )


def kv_view(compared: Compared) -> None:
    """The KV-vs-context chart and its sentences."""
    _, config, dep, result = compared[0]
    t = dep.context
    chart(
        _kv_chart(compared),
        key="kv-context",
        alt="Log-log lines of one user's KV cache in GB against context length, one per model, with GPU sizes.",
    )
    capped = (
        " until the sliding window caps it"
        if config.sliding_layers == config.n_layers
        else f" (its {config.sliding_layers} windowed layers stop at {config.sliding_window:,} tokens)"
        if config.sliding_layers
        else ""
    )
    least = min(compared, key=lambda item: item[3].kv_per_user)
    doubled = kv.plan(config, kv.at_context(dep, 2)).kv_per_user
    explain(
        f"At {t:,} tokens one {config.name} conversation holds {gb(result.kv_per_user)} of KV cache; at "
        f"{2 * t:,} tokens it holds {gb(doubled)}. Among the models shown, {least[1].name} needs "
        f"the least ({gb(least[3].kv_per_user)} per user at this context). Dotted lines are whole GPUs' memory.",
        f"The cache grows in a straight line with context{capped}: selling longer context windows buys memory in "
        "direct proportion, per user, on top of the model's weights.",
    )


def memory_view(compared: Compared) -> None:
    """The stacked memory-per-GPU chart and its sentences (replication named when GPUs outnumber KV heads)."""
    _, config, dep, result = compared[0]
    gpu = dep.gpu
    chart(
        memory_figure([(label, p) for label, _, _, p in compared], gpu.memory_gb),
        key="kv-memory",
        alt="Stacked bars per model: one GPU's memory split into weights, KV cache in use, reserve and free.",
    )
    if result.fits:
        what = (
            f"One {gpu.name} of a {dep.tp}-GPU copy holds {gb(result.weights_gpu)} of {config.name}'s "
            f"weights, {gb(result.kv_used_gpu)} of KV cache for {result.batch:,} "
            f"user{'s' if result.batch != 1 else ''}, keeps "
            f"{gb(result.reserve_gpu)} in reserve ({1 - dep.utilisation:.0%}) and has "
            f"{gb(max(result.free_gpu, 0))} free."
        )
    else:
        what = (
            f"{config.name}'s weights ({gb(result.weights_gpu)} per GPU, {dep.tp} per copy) leave "
            f"{gb(max(result.kv_budget_gpu, 0))} of the {gb(dep.utilisation * gpu.memory_bytes)} budget: "
            f"not enough for one user at {dep.context:,} tokens (the bar runs past the red line)."
        )
    if result.replication <= 1:
        rep = ""
    elif config.is_mla:
        rep = (
            f" The latent cannot be split by heads, so each of the {dep.tp} GPUs holds all of it: the "
            f"cluster stores {result.replication:g} copies of the cache."
        )
    else:
        rep = (
            f" With {dep.tp} GPUs and only {config.n_kv_heads} KV heads each GPU holds "
            f"{plural(result.heads_per_gpu, 'KV head')}, so the cluster stores {result.replication:g} copies of the "
            "cache."
        )
    explain(
        what + rep + " Compared models that do not fit on your GPU count are shown at the smallest count that fits.",
        "Whatever memory the weights do not take is the room for users: weights are a fixed cost, "
        "the KV cache is the variable cost that scales with users × context.",
    )


def users_view(compared: Compared) -> None:
    """The users-vs-context chart and its sentences."""
    _, config, dep, result = compared[0]
    chart(
        _users_chart(compared),
        key="kv-users",
        alt="Log-log step lines of the maximum concurrent users of one model copy against context length.",
    )
    half = kv.at_context(dep, 0.5)
    explain(
        f"At {dep.context:,} tokens one {dep.tp}-GPU copy of {config.name} on {dep.gpu.name} serves at most "
        f"{plural(result.max_users, 'user')} at once; at {half.context:,} tokens it would serve "
        f"{kv.plan(config, half).max_users:,}. Lines stop where not even one user fits.",
        "Concurrency, not speed, is what long context costs: halving the context roughly doubles the users a GPU "
        "can carry, and so halves the hardware per user.",
    )


def cost_view(compared: Compared) -> None:
    """The cost-vs-batch chart and its sentences, or what to change when no batch fits."""
    _, config, dep, result = compared[0]
    if not result.max_users:
        needed_tp = kv.smallest_tp(config, dep)
        st.info(
            f"No batch fits at {dep.context:,} tokens on {dep.tp} × {dep.gpu.name}: raise the GPUs per model copy "
            f"(at least {needed_tp}) or shorten the context."
            if needed_tp
            else "No batch fits even with 64 GPUs per copy."
        )
        return
    fig, alone = _cost_chart(config, dep, result)
    chart(fig, key="kv-cost", alt="Falling line of dollars per million output tokens against batch size.")
    explain(
        f"One user alone costs {money(alone)} per 1M tokens; {plural(result.batch, 'user')} decoding together "
        f"cost {money(result.cost_per_million)} (at ${dep.price_per_gpu_hour:,.2f} per GPU-hour, "
        f"{dep.efficiency:.0%} of {dep.gpu.bandwidth_tb_s:g} TB/s bandwidth, MFU {dep.mfu:.0%}).",
        "Each decoding step reads the weights once however many users share it (a mixture of experts only the "
        "experts its batch is routed to), so batching divides the "
        "weights' cost among users until the KV cache fills the memory. These costs are the best case for the "
        "load: full batches all the time; queueing and idle copies only make real tokens dearer.",
    )


VIEW_SECTIONS = (kv_view, memory_view, users_view, cost_view)  # in the order of ui.kv_cost_state.VIEWS


def table(
    rows: pa.Table,
    *,
    download: tuple[str, str] | None = None,
    readable: tuple[str, ...] = (),
    money_columns: tuple[str, ...] = (),
) -> None:
    """A full-width table without index, `readable` columns with thousands separators, money columns pinned at the
    left (after the first column, pinned too) with a $ sign, and an optional CSV download (name, key) built only when
    clicked. Tables arrive as cached Arrow tables: a rerun converts nothing."""
    config = dict.fromkeys(readable, READABLE) | dict.fromkeys(money_columns, MONEY)
    if money_columns:
        config[rows.column_names[0]] = PINNED
    st.dataframe(rows, hide_index=True, width="stretch", column_config=config)
    if download:
        name, key = download
        download_csv(lambda: frame_csv(rows.to_pandas(), index=False), name=name, key=key)


@lru_cache(maxsize=64)
def _comparison(compared: Compared) -> tuple[tuple[str, ...], tuple[tuple[Cell, ...], ...]]:
    """The side-by-side table's columns and rows (raw values: the CSV keeps them, the page formats them)."""
    dep = compared[0][2]
    t = dep.context
    columns = (
        "model",
        COST_COLUMN,
        "attention",
        "parameters (B)",
        "KV per token (kB)",
        f"KV per user at {t:,} (GB)",
        f"KV per user at {t:,} (GiB)",
        "weights (GB)",
        "GPUs per copy",
        "users per copy",
        f"GPUs for {plural(dep.users, 'user')}",
        "tokens/s per copy (full batch)",
    )
    rows = tuple(
        (
            c.name,
            round(p.cost_per_million, 4) if p.cost_per_million else None,
            c.attention_kind,
            round(p.params / 1e9, 3),
            round(p.kv_per_token / 1e3, 2),
            round(kv.to_gb(p.kv_per_user), 3),
            round(kv.to_gib(p.kv_per_user), 3),
            round(kv.to_gb(p.weights_bytes), 2),
            d.tp,
            p.max_users,
            p.gpus_needed,
            round(p.tokens_per_second, 1) if p.tokens_per_second else None,
        )
        for _, c, d, p in compared
    )
    return columns, rows


def comparison_table(compared: Compared) -> None:
    """Up to five models side by side, with a CSV download. Drawn as plain HTML: it is on the page's first screen,
    where an Arrow table would import pandas and make the browser load its data grid before the page settles."""
    dep, t = compared[0][2], compared[0][2].context
    columns, rows = _comparison(compared)
    beyond = [f"{label} ({c.max_context:,})" for label, c, _, _ in compared[1:] if c.exceeds_context(t)]
    footnote = (
        f"Every row: {dep.gpu.name}, {dep.kv_dtype.upper()} cache, {dep.weight_bits}-bit weights, "
        f"{t:,} tokens, {plural(dep.users, 'user')}; compared models at your GPUs per copy, or the smallest number "
        "that holds them."
    )
    if beyond:  # in the footnote, not a note of its own: one coming or going moves nothing on the page
        footnote += (
            f" ⚠ Maximum context shorter than {t:,} tokens: {', '.join(beyond)}; "
            f"{'its row still assumes' if len(beyond) == 1 else 'their rows still assume'} the full {t:,} tokens."
        )
    static_table(
        columns,
        rows,
        label="Side by side",
        formats={COST_COLUMN: money},
        footnote=footnote,
        heading="Side by side",
        download=("comparison", "kv-comparison"),
    )


def finance(config: ModelConfig, dep: kv.Deployment, effects: kv.BudgetEffects) -> None:
    """The budget lines (doubling the context, GQA/MLA, FP8) and the bigger-GPU-or-more-GPUs table."""
    st.subheader("Why it matters for the budget")
    base, doubled, fp8, mha, t = effects.base, effects.doubled, effects.fp8, effects.mha_bytes_per_token, dep.context
    at_tp = "" if effects.tp == dep.tp else f" (at {effects.tp} GPUs per copy, the fewest that hold it)"

    def user_hour(p: kv.Plan) -> str:
        cost = kv.cost_per_user_hour(p, dep.price_per_gpu_hour)
        return "n/a (no user fits)" if cost is None else money(cost)

    lines = [
        f"**Doubling the context** from {t:,} to {2 * t:,} tokens takes one user's cache from "
        f"{gb(base.kv_per_user)} to {gb(doubled.kv_per_user)} and users per copy{at_tp} from {base.max_users:,} to "
        f"{doubled.max_users:,}: the GPU cost per user-hour goes from {user_hour(base)} to {user_hour(doubled)}.",
    ]
    if mha > base.kv_per_token:
        lines.append(
            f"**{config.attention_kind} saves memory**: {config.name} stores {size(base.kv_per_token)} per token; "
            f"with plain multi-head attention it would store {size(mha)}, {mha / base.kv_per_token:,.1f}× as much."
        )
    elif config.n_heads % 4 == 0:
        lines.append(
            f"**{config.name} uses plain multi-head attention**: grouped-query attention with {config.n_heads // 4} "
            f"KV heads (a quarter) would cut its {size(base.kv_per_token)} per token to a quarter."
        )
    if dep.kv_dtype != "fp8":
        lines.append(
            f"**An FP8 KV cache** stores {kv.element_bytes('fp8') / kv.element_bytes(dep.kv_dtype):.2g}× the bytes "
            f"of {dep.kv_dtype.upper()}: users per copy{at_tp} go from {base.max_users:,} to {fp8.max_users:,}."
        )
    st.markdown("\n".join(f"- {line}" for line in lines))
    _gpu_options(config, dep)


def _even_column(gpu: kv.Gpu) -> str:
    return f"cheaper per token than {gpu.name} below ($/h)"


@lru_cache(maxsize=64)
def _options(config: ModelConfig, dep: kv.Deployment) -> tuple[list[kv.GpuOption], pa.Table]:
    gpu = dep.gpu
    options = kv.gpu_options(config, dep)
    rows = arrow_table(
        [
            {
                "GPU": o.gpu.name,
                _even_column(gpu): round(o.break_even_price, 2) if o.break_even_price else None,
                "GPUs per copy needed": o.tp,
                "users per model copy": o.users_per_copy,
                "tokens/s per GPU (full batch)": round(o.tokens_per_second_per_gpu, 1)
                if o.tokens_per_second_per_gpu
                else None,
                "memory (GB)": o.gpu.memory_gb,
                "bandwidth (TB/s)": o.gpu.bandwidth_tb_s,
            }
            for o in options
        ]
    )
    return options, rows


def _gpu_options(config: ModelConfig, dep: kv.Deployment) -> None:
    gpu = dep.gpu
    options, rows = _options(config, dep)
    st.markdown(
        f"**A bigger GPU or more GPUs?** For {config.name} at {dep.context:,} tokens: the smallest number of each GPU "
        f"that holds the model, and the hourly price under which it beats {gpu.name} at "
        f"${dep.price_per_gpu_hour:,.2f}/h on cost per token."
    )
    table(rows, money_columns=(_even_column(gpu),))
    winners = [o for o in options if o.break_even_price and o.gpu.id != gpu.id]
    if winners:
        best = max(winners, key=lambda o: o.break_even_price / dep.price_per_gpu_hour)
        st.markdown(
            f"The largest margin: a {best.gpu.name} ({best.tp} per copy) is cheaper per token as long as it "
            f"costs under **${best.break_even_price:,.2f}** an hour, because it serves "
            f"{best.tokens_per_second_per_gpu:,.0f} tokens/s per GPU."
        )


def anatomy(config: ModelConfig, dep: kv.Deployment, result: kv.Plan) -> None:
    """Primer §4 for the chosen model: weight inventory, exact count vs 12·L·d², activations, reference points."""
    st.subheader("Model anatomy (primer §4)")
    table(_inventory(config), download=("weight inventory", "kv-inventory"), readable=("parameters each", "total"))
    total = param_count(config)
    cols = st.columns(3)
    cols[0].metric("Parameters computed from the config", f"{total:,}")
    if config.published_params:
        cols[0].caption(
            f"Published: {count(config.published_params)} "
            f"({(total - config.published_params) / config.published_params:+.2%} difference)."
        )
    if config.is_moe:
        published = config.published_active_params
        cols[0].caption(
            f"Active per token: {count(active_param_count(config))}"
            + (f" (published {count(published)})" if published else "")
        )
    rule = kaplan_estimate(config)
    cols[1].metric("Rule of thumb 12 · L · d_model²", f"{rule:,}")
    cols[1].caption(
        f"= {rule / total:.0%} of the exact count. The rule counts 4·d_model² of attention and "
        "8·d_model² of MLP per layer and no embeddings"
        f"{'; every expert of a mixture adds its own MLP' if config.is_moe else ''}."
    )
    cols[2].metric(f"Weights at {dep.weight_bits}-bit", gb(result.weights_bytes))
    cols[2].caption(f"= {kv.to_gib(result.weights_bytes):,.2f} GiB")
    st.markdown(
        f"{link('embedding')} and {link('unembedding')}: "
        f"{'tied, one matrix serves both' if config.tied_embeddings else 'two separate matrices'}."
    )
    st.markdown(f"**Activations at T = {dep.context:,}** (recomputed every forward pass; only K and V are kept):")
    st.dataframe(_activations(config, dep.context), hide_index=True, width="stretch", height="content")
    st.markdown("**Reference points**: the exact count and the rule of thumb side by side.")
    table(_references(), readable=("exact parameters", "12·L·d_model²"))


@lru_cache(maxsize=64)
def _inventory(config: ModelConfig) -> pa.Table:
    """The weight inventory of primer §4 for this model, one row per weight."""
    return arrow_table(
        [
            {
                "part": r.part,
                "weight": r.weight,
                "shape": r.shape,
                "parameters each": r.each,
                "copies": r.copies,
                "total": r.total,
            }
            for r in weight_inventory(config)
        ]
    )


@lru_cache(maxsize=64)
def _activations(config: ModelConfig, context: int) -> pa.Table:
    """Primer §4's activation table for this model at the chosen context, all 15 rows."""
    rows = activation_shapes(config, context)
    return arrow_table([{"activation": a, "shape": s, "what it is": note} for a, s, _, note in rows])


@lru_cache(maxsize=1)
def _references() -> pa.Table:
    """GPT-2 small, the primer's 7B and its tiny model: exact parameter counts beside 12·L·d_model²."""
    references = [
        ("GPT-2 small", presets()["gpt2"]),
        ("Primer's modern 7B", presets()[PRIMER]),
        ("Primer's tiny model (§6)", reference_models()["tiny-736"]),
    ]
    return arrow_table(
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
    )


def sources(model_id: str, config: ModelConfig, gpu: kv.Gpu) -> None:
    """Where every preset figure, default, measurement and price comes from: documents a reader can open."""
    st.markdown("**Sources of every preset figure and default**")
    found = {} if model_id == CUSTOM else preset_sources(model_id)  # a custom model has no published sources
    lines = [f"**{config.name}, {what}**: {text}" for what, text in found.items()]
    lines += [f"**{gpu.name}**: {gpu.source}", f"**{gpu.name}, FP8 and {gpu.link}**: {gpu.link_source}"]
    lines += [f"**{key}**: {reason}" for key, reason in kv.default_reasons().items()]
    lines += calibration_sources()
    st.markdown("\n".join(f"- {line}" for line in lines))
