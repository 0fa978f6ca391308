"""Each page's first sentence: the point, with the live numbers of the reader's current scenario, before any control.

Pages reserve the slot at the top (`slot()`) and fill it once the engine has run, so the sentence follows the inputs
but is read first (on a phone too). The two pages that run our own trained model say so here, with the primer's
printed figure beside ours.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import streamlit as st

from core.explain import experiments as ex
from core.explain.checkpoints import LIVE_SOURCE, Replay
from core.explain.conv import ConvTrace
from core.explain.trace_views import primer_section6
from core.explain.transformer import forward
from core.explain.weights import trained_model
from core.plan import kv_cache as kv
from core.plan.model_config import ModelConfig
from ui.elements.glossary import link
from ui.elements.numbers import plural

PRIMER_PROMPT = ("<BOS>", "the", "cat", "sat")


WORDS = {
    "cnn_vs_head": ("convolution", "softmax", "attention-head"),
    "qkv_walkthrough": ("attention-head", "softmax", "causal-mask", "kv-cache", "prefill"),
    "two_layer_trace": ("residual-stream", "layernorm", "multi-head", "mlp", "logit-lens", "class-mass", "held-out"),
    "ablation_lab": (
        "ablation",
        "held-out",
        "bigram-slot",
        "copula-slot",
        "class-mass",
        "zero-mean-ablation",
        "activation-patching",
    ),
    "how_it_learned": ("embedding", "attention-head", "held-out", "copula-slot", "bigram-slot", "class-mass"),
    "kv_cost": (
        "kv-cache",
        "gqa",
        "mla",
        "tensor-parallelism",
        "quantization",
        "paged-kv",
        "prefix-cache",
        "hbm",
        "tpot",
        "mfu-mbu",
        "copy-hour",
        "reserved-term",
        "pue",
    ),
}


def words(page: str) -> None:
    """One line of glossary links for the terms a page uses, so none needs a mouse to hover over its tooltip."""
    st.caption("Words on this page: " + " · ".join(link(key) for key in WORDS[page]))


def slot() -> st.delta_generator.DeltaGenerator:
    """An empty place at the top of the page for the lead, filled later in the run."""
    return st.container(key="lead")


def cnn(trace: ConvTrace) -> str:
    """CNN vs head: what the network says about the current image, and the one contrast the page makes."""
    kernel = trace.filters[0].kernel
    verdict = (
        f"labels the image *{trace.classes[trace.winner]}* with probability {trace.probs.max():.3f}"
        if trace.winner is not None
        else f"cannot decide: its top classes tie at probability {trace.probs.max():.3f}"
    )
    return (
        f"**A filter reads a fixed window; a head chooses what to read.** With these {len(trace.filters)} filters "
        f"({kernel.shape[0]}×{kernel.shape[1]}, the same {kernel.size} weights at every position) the network "
        f"{verdict}."
    )


def qkv(pattern: np.ndarray, tokens: list[str]) -> str:
    """QKV walkthrough: how the last token splits its attention in the current scenario."""
    row = pattern[-1]
    split = ", ".join(f"{w:.3f} on *{t}*" for t, w in zip(tokens, row, strict=True))
    return (
        f"**One attention head decides, from the words, where each word looks.** Here *{tokens[-1]}* puts {split}; "
        "those weights then mix the words' values into its new vector."
    )


@cache
def our_model() -> str:
    """The trace and ablation pages' first words: the model is ours, of the primer's shape, beside the primer's."""
    model = trained_model()
    probs = forward(model, [model.vocabulary.index(t) for t in PRIMER_PROMPT])["hook_probs"][-1]
    primer = float(primer_section6().readout["p_on"])
    return (
        f"**This page runs our own trained model of the primer's §6 shape** ({model.n_params} parameters, the same "
        f"toy world; the primer's weights are not published). After *the cat sat*, P(on): ours "
        f"{probs[model.vocabulary.index('on')]:.3f} · primer's model {primer:.3f}."
    )


def ablation(setting_name: str, removed: tuple, off: bool, sweep: object) -> str:
    """Ablation lab: the current bench setting's held-out rule accuracy, ours beside the primer's printed figure."""
    reading = ex.bench_reading(sweep, removed, off)
    tables = ex.primer_tables()
    if off:
        printed = tables.collateral[None][1] if None in tables.collateral else None
    else:
        printed = tables.single_head_rule.get(frozenset(removed))
    measure = "right class on copula slots" if off else f"{link('held-out', 'held-out')} rule accuracy"
    ours = reading.copula_class_accuracy.now if off else reading.rule_accuracy.now
    beside = f" · primer's model {printed:.2f}" if printed is not None else " (the primer printed no figure for this)"
    full = reading.rule_accuracy.trained
    return f"With **{setting_name}**, {measure}: ours {ours:.2f}{beside}; the full model scores {full:.2f}."


def how_it_learned(replay: Replay, index: int) -> str:
    """How it learned: the run in one sentence (loss, when the rule appears) and the shown checkpoint's answers."""
    values, step = replay.values, int(replay.steps[index])
    first, _ = replay.emergence
    rule = (
        f"the copula rule first holds on every held-out type at step {first:,}"
        if first is not None
        else "the copula rule never holds on every held-out type"
    )
    source = "retrained live in this session" if replay.source == LIVE_SOURCE else "replayed from its checkpoints"
    return (
        f"**Training is the search for weights that put every word in the right place.** Our model's "
        f"{int(replay.steps[-1]):,} steps ({source}) took the loss from {values['loss'][0]:.3f} to "
        f"{values['loss'][-1]:.3f}, and {rule}. At step {step:,}: P(on | the cat sat) {values['p_on'][index]:.3f}, "
        f"class mass after *the cat is* {values['class_mass'][index]:.3f}."
    )


def kv_cost(config: ModelConfig, deployment: kv.Deployment, plan: kv.Plan) -> str:
    """KV-cost calculator: the scenario's answer in one sentence."""
    per_user = f"{kv.to_gb(plan.kv_per_user):,.2f} GB of {link('kv-cache')} per user"
    if not plan.fits:
        return (
            f"**{config.name} at {deployment.context:,} tokens: {per_user}; weights plus one user do not fit on "
            f"{plural(deployment.tp, deployment.gpu.name)}** — raise the GPUs per copy below."
        )
    cost = (
        f", about ${plan.cost_per_million:,.2f} per million output tokens at best (full batches)"
        if plan.cost_per_million
        else ""
    )
    return (
        f"**{config.name} at {deployment.context:,} tokens: {per_user}; "
        f"{plural(plan.gpus_needed, deployment.gpu.name)} for {plural(deployment.users, 'user')} "
        f"({plural(plan.max_users, 'user')} per model copy of "
        f"{plural(deployment.tp, 'GPU')}){cost}.**"
    )
