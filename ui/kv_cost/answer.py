"""The cost page's answer: the lead sentence, the six headline numbers with their help, and the context warning."""

from __future__ import annotations

import streamlit as st

from core.plan import kv_cache as kv
from core.plan.model_config import (
    ModelConfig,
)
from ui.elements.metric_cards import Card, metric_cards
from ui.elements.numbers import plural
from ui.kv_cost.numbers import gb, gpus_text, money, same_bytes, size_parts

# --------------------------------------------------------------------------------------------------- sections
BYTE_UNITS = "GB = 10⁹ bytes; GiB = 2³⁰ bytes (how nvidia-smi and most tools print memory)."


def byte_units(gpu: kv.Gpu) -> str:
    """The headline's footnote: the two units, and the GPU's memory as its driver reports it (from the preset's MiB):
    HBM parts carry binary gigabytes, so their GB on the box are GiB; GDDR cards (L4, L40S) are not HBM."""
    kind = (
        f"{gpu.memory_kind}: the {gpu.memory_gb:g} GB on the box are binary gigabytes"
        if gpu.is_hbm
        else (f"{gpu.memory_kind}, not HBM" if gpu.memory_kind else "not HBM")
    )
    return (
        f"{BYTE_UNITS} Memory is what the GPU's driver reports: {gpu.name}, {gpu.memory_mib:,.0f} MiB = "
        f"{kv.to_gb(gpu.memory_bytes):,.1f} GB = {kv.to_gib(gpu.memory_bytes):,.1f} GiB ({kind})."
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
            f"{plural(result.replicas, 'copy', 'copies')} × {gpus_text(dep.tp)} ({who})",
            "GPUs per copy × copies needed for all users. The GPUs per copy are set under Engine settings.",
        )
    else:
        needed_tp = kv.smallest_tp(config, dep)
        gpus = Card(
            "GPUs needed",
            "does not fit",
            f"needs ≥ {needed_tp} GPUs per copy"
            if needed_tp
            else f"even {kv.TP_OPTIONS[-1]} GPUs per copy are not enough",
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
            f"on {gpus_text(dep.tp)}",
            "The most conversations one copy holds at once at this context (memory for the KV cache).",
        ),
        Card(
            "$ per 1M output tokens at full batch, for comparison",
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
    metric_cards(
        cards,
        label="Headline numbers",
        key="kv-headline",
        footnote=f"{byte_units(dep.gpu)} {same_bytes(result.kv_per_user)}",
    )


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
