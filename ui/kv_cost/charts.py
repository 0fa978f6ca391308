"""The cost page's formula and its four charts (KV vs context, memory per GPU, users vs context, cost vs batch), each
with its sentence from the live numbers. Figures are built in one constructor call and cached by small hashable keys
(frozen configs, deployments and plans)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.plan import kv_cache as kv
from core.plan.context_cost import context_cost
from core.plan.model_config import (
    ModelConfig,
)
from ui.elements.figures import layout
from ui.elements.html_element import draw_html
from ui.elements.numbers import log_axis, plural
from ui.elements.plain_math import display, product, sym
from ui.elements.widgets import chart, explain
from ui.kv_cost.context_sentences import growth_sentence, users_sentence
from ui.kv_cost.numbers import COLOURS, Compared, gb, money


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


LABEL_ROOM = 0.2  # decades above the largest GPU size: its label, written above its line, stays inside the plot
CLOSE_DECADES = 0.35  # GPU sizes closer than this on the log axis would overprint labels written on the same side


def kv_context_figure(
    names: list[str], contexts: np.ndarray, kv_gb: np.ndarray, context: int, capacities: dict[str, float]
) -> go.Figure:
    """One user's KV cache against context length, one line per model, GPU memory sizes as dotted lines."""
    data = _lines(names, contexts, kv_gb, "GB")
    sizes = sorted(capacities.items(), key=lambda item: item[1])
    labels = []
    for index, (label, value) in enumerate(sizes):
        data.append(
            {
                "type": "scatter",
                "x": [contexts[0], contexts[-1]],
                "y": [value, value],
                "mode": "lines",
                "name": label,
                "showlegend": False,
                "line": {"color": "#7f8c8d", "dash": "dot", "width": 1},
                "hoverinfo": "skip",
            }
        )
        # Labels at the short-context end, where every model's cache is still small, so no model line runs through
        # them; a size close below the next one is labelled under its line, so the two labels face apart. An opaque
        # box keeps a label legible where the context marker crosses it (contexts near 1K on a phone).
        close = index + 1 < len(sizes) and np.log10(sizes[index + 1][1] / value) < CLOSE_DECADES
        labels.append(
            {
                "x": float(np.log10(contexts[0])),  # annotations take log10 on a log axis
                "y": float(np.log10(value)),
                "text": label,
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "top" if close else "bottom",
                "font": {"size": 11, "color": "#4a5866"},
                "bgcolor": "rgba(255,255,255,0.92)",
                "borderpad": 1,
            }
        )
    top = max(capacities.values()) * 10**LABEL_ROOM if capacities else np.nan  # the top size's label inside the plot
    every = np.concatenate([np.ravel(kv_gb), list(capacities.values()), [top]])
    extra = _log_axes("KV cache of one user (GB, log scale)", contexts, every) | _marker(
        context, f"T = {context:,}", log_x=True
    )
    extra["annotations"] = [*labels, *extra["annotations"]]
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
        "text": f"GPU memory as the driver reports it: {memory_gb:,.1f} GB = {memory_gb * kv.GB / kv.GIB:,.1f} GiB",
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


@lru_cache(maxsize=64)  # 64 × ~50 kB
def kv_chart(compared: Compared) -> go.Figure:
    dep, gpu = compared[0][2], compared[0][2].gpu
    contexts = kv.context_grid(dep.context)
    kv_gb = kv.kv_sweep_many([c for _, c, _, _ in compared], contexts, dep.kv_dtype, block=dep.block) / kv.GB
    sizes: dict[float, list[str]] = {}
    for g in kv.gpus().values():
        if g.memory_gb in {24, 80, 192} or g.id == gpu.id:
            sizes.setdefault(g.memory_gb, []).append(g.name)
    capacities = {f"{' / '.join(found)}: {memory:g} GB": memory for memory, found in sizes.items()}
    return kv_context_figure([label for label, *_ in compared], contexts, kv_gb, dep.context, capacities)


@lru_cache(maxsize=64)  # 64 × ~50 kB
def users_chart(compared: Compared) -> go.Figure:
    dep = compared[0][2]
    contexts = kv.context_grid(dep.context)
    users = np.vstack([kv.users_vs_context(c, d, contexts) for _, c, d, _ in compared])
    names = [label for label, *_ in compared]
    return users_figure(names, contexts, np.where(users > 0, users, np.nan), dep.context)


@lru_cache(maxsize=64)  # 64 × ~2 kB
def _cost_chart(config: ModelConfig, dep: kv.Deployment, result: kv.Plan) -> tuple[go.Figure, float]:
    batches = kv.batch_grid(result.max_users)
    tokens, cost = kv.cost_vs_batch(config, dep, batches)
    return cost_figure(batches, cost, tokens, result.batch, config.name), float(cost[0])


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
            "V, so K and V are not counted twice (a published calculator once doubled it: a known bug)."
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
        kv_chart(compared),
        key="kv-context",
        alt="Log-log lines of one user's KV cache in GB against context length, one per model, with GPU sizes.",
    )
    least = min(compared, key=lambda item: item[3].kv_per_user)
    doubled = kv.plan(config, kv.at_context(dep, 2)).kv_per_user
    grows, matters = growth_sentence(config, context_cost(config, dep))
    explain(
        f"At {t:,} tokens one {config.name} conversation holds {gb(result.kv_per_user)} of KV cache; at "
        f"{2 * t:,} tokens it holds {gb(doubled)}. {grows} Among the models shown, {least[1].name} needs "
        f"the least ({gb(least[3].kv_per_user)} per user at this context). Dotted lines are whole GPUs' memory.",
        matters,
    )


def memory_view(compared: Compared) -> None:
    """The stacked memory-per-GPU chart and its sentences (replication named when GPUs outnumber KV heads)."""
    _, config, dep, result = compared[0]
    gpu = dep.gpu
    chart(
        memory_figure([(label, p) for label, _, _, p in compared], kv.to_gb(gpu.memory_bytes)),
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
    """The users-vs-context chart and its sentences (one user's speed beside the users: long context costs both)."""
    _, config, dep, _ = compared[0]
    chart(
        users_chart(compared),
        key="kv-users",
        alt="Log-log step lines of the maximum concurrent users of one model copy against context length.",
    )
    explain(
        *users_sentence(config, context_cost(config, dep), f"one {dep.tp}-GPU copy of {config.name} on {dep.gpu.name}")
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
            else f"No batch fits even with {max(kv.TP_OPTIONS)} GPUs per copy."
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


VIEW_SECTIONS = (kv_view, memory_view, users_view, cost_view)  # in the order of ui.kv_cost.state.VIEWS
