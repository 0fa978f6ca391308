"""The QKV walkthrough's page top and its first section (primer §2–5): one attention head, step by step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import streamlit as st

from core.explain.experiments import CAT, prompt_row
from core.explain.primer import printed
from core.explain.transformer import Trace
from core.explain.weights import trained_model
from ui.elements.glossary import link, tip
from ui.elements.widgets import chart, explain, shape_label
from ui.qkv_walkthrough.pieces import blend, figure, matrix, small, vector
from ui.qkv_walkthrough.state import (
    SENTENCES,
    STEPS,
    reset_to_primer,
)

# ---------------------------------------------------------------- page top


def intro() -> None:
    """What the page is, and the formula it walks through."""
    st.markdown(
        f"One {link('attention-head')} of the primer's §5 example, one operation at a time. Every number is computed "
        "live; the defaults reproduce the primer's printed matrices, so you can read them side by side."
    )
    st.latex(r"\text{attention}(Q,K,V) = \text{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V")


def scenario() -> tuple[str, bool, bool]:
    """The sentence, the two switches and the reset button; returns (sentence, scale, causal)."""
    top = st.columns([2, 1, 1, 1])
    sentence = top[0].selectbox(
        "Sentence (only the three tokens the primer gives embeddings for)",
        SENTENCES,
        key="qkv_sentence",
        bind="query-params",
    )
    scale = top[1].toggle(
        "Scale by √d_k",
        value=True,
        key="qkv_scale",
        bind="query-params",
        help="Switch off to see the weights without the division: sharper.",
    )
    causal = top[2].toggle("Causal mask", value=True, key="qkv_mask", bind="query-params", help=tip("causal-mask"))
    top[3].button(
        "Reset to the primer",
        on_click=reset_to_primer,
        key="qkv_reset",
        help="Sentence, input rows, weights, scaling and causal mask.",
    )
    return sentence, scale, causal


# ---------------------------------------------------------------- section 1: the head step by step


@dataclass(frozen=True)
class Walk:
    """What every step view reads: this run's trace, the trace with scaling and mask on, and the switches."""

    trace: Trace
    default: Trace  # the same inputs with scaling and the causal mask on (what the switches are compared with)
    tokens: list[str]
    scale: bool
    causal: bool

    def head(self, name: str, trace: Trace | None = None) -> np.ndarray:
        """The single head's slice of a trace entry (drops the head axis)."""
        value = (trace or self.trace)[f"blocks.0.attn.hook_{name}"]
        return value[0] if name.startswith(("attn_scores", "pattern")) else value[:, 0, :]

    @property
    def X(self) -> np.ndarray:
        return self.trace["blocks.0.hook_resid_pre"]

    @property
    def dims(self) -> list[str]:
        return [f"d{i + 1}" for i in range(self.X.shape[1])]

    @property
    def T(self) -> int:
        return len(self.tokens)

    @property
    def last(self) -> str:
        return self.tokens[-1]

    def shape(self, rows: int | None = None, columns: int | None = None, *names: str) -> str:
        """Shape caption, T × d_model unless told."""
        return shape_label(rows or self.T, columns or self.X.shape[1], *names)


def step_selector() -> str:
    """The step the reader looks at (only its matrices are drawn)."""
    return st.select_slider(
        "Step",
        options=list(STEPS),
        format_func=STEPS.__getitem__,
        key="qkv_step",
        bind="query-params",
        help="Each step draws only its own matrices. Read left to right, as in primer §5.",
    )


def _x(w: Walk) -> None:
    reading = "Each row is one token's embedding, looked up in E: a context-free starting point."
    matrix(w.X, w.tokens, w.dims, "X = h⁰", "x", w.shape(), reading)
    top = int(np.argmax(np.abs(w.X[-1])))
    explain(
        f"'{w.last}' starts as {vector(w.X[-1], 2)}; its largest coordinate is {w.dims[top]} "
        f"({w.X[-1, top]:+.2f}). No row has seen any other token yet.",
        "Everything the model later concludes about a token is written on top of this row. Attention, the next "
        "steps, is the only place where rows borrow from each other.",
    )


def _qkv(w: Walk) -> None:
    st.info(
        "**Q**: what am I looking for?  **K**: what do I offer to be matched against?  "
        "**V**: what information do I carry, if matched?"
    )
    formulas = ("Q = X · W_Q", "K = X · W_K", "V = X · W_V")
    for column, name, formula in zip(st.columns(3), "qkv", formulas, strict=True):
        with column:
            matrix(w.head(name), w.tokens, w.dims, formula, name, w.shape(None, None, "T", "d_k"), "One row per token.")
    q, k = w.head("q"), w.head("k")
    explain(
        f"The same {w.T} rows of X seen through three weight matrices. '{w.last}' looks for "
        f"{w.dims[int(np.argmax(q[-1]))]} (query {q[-1].max():+.3f}) and offers {w.dims[int(np.argmax(k[-1]))]} "
        f"(key {k[-1].max():+.3f}).",
        "Q and K only decide who listens to whom; V is what actually moves. A deployed model keeps K and V for every "
        "past token but not Q, for another reason: a past token's query is never used again (the KV cache tab).",
    )


def _raw(w: Walk) -> None:
    raw = w.head("attn_scores_raw")
    ties = [v for v in raw.ravel() if printed(v, 4) != f"{v:.4f}"]
    tie = (
        f": the exact {printed(ties[0], 6).rstrip('0')} prints as {printed(ties[0], 4)}, as in the primer, although "
        f"the computer stores it a hair {'below' if ties[0] < float(printed(ties[0], 6)) else 'above'}"
        if ties
        else ""
    )
    reading = (
        "Entry (i, j): how well token i's query matches token j's key, a dot product. Shown at the primer's four "
        f"decimals, rounded as a person rounds (decimal, half up){tie}."
    )
    matrix(
        raw,
        w.tokens,
        w.tokens,
        "QKᵀ (raw scores)",
        "raw",
        w.shape(None, w.T, "T", "T"),
        reading,
        decimals=4,
        half_up=True,
    )
    best, worst = int(np.argmax(raw[-1])), int(np.argmin(raw[-1]))
    names = ["its own key" if i == w.T - 1 else f"the key of '{w.tokens[i]}'" for i in range(w.T)]
    explain(
        f"'{w.last}' matches {names[best]} most ({printed(raw[-1, best], 4)}) and {names[worst]} least "
        f"({printed(raw[-1, worst], 4)}).",
        "These scores are the routing decision, computed from content on the fly: the head's window is chosen "
        "by what the words are, not by a fixed position as in a CNN filter.",
    )


def _scaled(w: Walk) -> None:
    raw, scores = w.head("attn_scores_raw"), w.head("attn_scores")
    d = w.X.shape[1]
    st.latex(r"\text{scores} = \frac{QK^\top}{\sqrt{d_k}}" if w.scale else r"\text{scores} = QK^\top")
    title = "QKᵀ / √d_k" if w.scale else "QKᵀ (scaling off)"
    reading = f"Divide by √d_k = √{d} ≈ {np.sqrt(d):.2f}." if w.scale else "Scaling is switched off above."
    matrix(scores, w.tokens, w.tokens, title, "scaled", w.shape(None, w.T, "T", "T"), reading)
    explain(
        f"The largest score of '{w.last}' is {scores[-1].max():.3f} (raw {raw[-1].max():.3f})."
        + ("" if w.scale else " With scaling off the scores are the raw dot products: the weights will be sharper."),
        "Without the division, scores grow with the vector length d_k, softmax puts nearly all weight on one "
        "token and a large model learns slowly. A fixed, free correction.",
    )


def _masked(w: Walk) -> None:
    masked = w.head("attn_scores_masked")
    reading = (
        "Above the diagonal −∞: a token reads itself and earlier tokens only; −∞ becomes weight 0."
        if w.causal
        else "Masking is switched off above: every token sees the whole sentence."
    )
    matrix(masked, w.tokens, w.tokens, "masked scores", "masked", w.shape(None, w.T, "T", "T"), reading)
    hidden = int(np.isneginf(masked).sum())
    explain(
        f"{hidden} of the {w.T * w.T} cells are −∞, the ones where a token would read a later one."
        if hidden
        else f"No cell is masked: '{w.tokens[0]}' can now read '{w.last}', a word that comes after it.",
        "When generating, the future does not exist yet. Training with the mask makes the model rely only on "
        "what it will actually have, and it is what makes the KV cache possible.",
    )


def _weights(w: Walk) -> None:
    weights, V = w.head("pattern"), w.head("v")
    left, right = st.columns([2, 3])
    with left:
        reading = "Each row sums to 1: how a token splits its attention."
        matrix(
            weights,
            w.tokens,
            w.tokens,
            "attention weights",
            "weights",
            w.shape(None, w.T, "T", "T"),
            reading,
            signed=False,
        )
    with right:
        st.markdown("**QK is the routing; V is the payload.**")
        flow = figure(
            "flow",
            small(weights),
            sources=tuple(f"V of '{t}'" for t in w.tokens),
            targets=tuple(f"'{t}' reads" for t in w.tokens),
            title="Routing (widths = weights) carrying the payload (V rows)",
        )
        chart(
            flow,
            key="qkv-flow",
            alt="Sankey diagram: each token's value flows to the tokens that read it, width = weight",
        )
        matrix(
            V,
            w.tokens,
            w.dims,
            "V (the payload)",
            "flow-v",
            w.shape(None, None, "T", "d_v"),
            "The rows that flow along the edges.",
        )
    changes = []
    if not w.scale:
        changes.append(
            f"Without scaling, the largest weight of '{w.last}' is {weights[-1].max():.3f} instead of "
            f"{w.head('pattern', w.default)[-1].max():.3f}: sharper weights."
        )
    if not w.causal:
        changes.append(
            f"Without the mask, '{w.tokens[0]}' takes {weights[0, 1:].sum():.0%} of its information from later "
            "tokens: a token reads the future."
        )
    explain(
        blend(weights[-1], w.tokens, w.last) + (" " + " ".join(changes) if changes else ""),
        "This is the model's 'who listens to whom' for this sentence. It is recomputed from content for every input, "
        "which is what lets one head handle any sentence.",
    )


def _z(w: Walk) -> None:
    z, weights = w.head("z"), w.head("pattern")
    reading = "Each row is a blend of the V rows, in the proportions of that token's weights."
    matrix(z, w.tokens, w.dims, "weights · V", "z", w.shape(None, None, "T", "d_v"), reading)
    explain(
        f"'{w.last}'s output is "
        + " + ".join(f"{p:.3f}·V({t})" for p, t in zip(weights[-1], w.tokens, strict=True))
        + f" = {vector(z[-1])}.",
        f"This is the payload actually delivered: what '{w.last}' now carries from the other words.",
    )


def _wo(w: Walk) -> None:
    z, out = w.trace["blocks.0.attn.hook_concat"], w.trace["blocks.0.hook_attn_out"]
    reading = "W_O maps the head's output back into the residual stream (and, with several heads, mixes them)."
    matrix(out, w.tokens, w.dims, "attention output · W_O", "wo", w.shape(), reading)
    explain(
        "W_O is the identity here, so the write-back equals the head output exactly."
        if np.array_equal(out, z)
        else f"Your W_O changes the write-back: '{w.last}' now gets {vector(out[-1])}.",
        "With many heads, W_O is where their separate findings are combined into one update to each token.",
    )


def _resid(w: Walk) -> None:
    h1, update = w.trace["blocks.0.hook_resid_post"], w.trace["blocks.0.hook_attn_out"]
    st.latex(r"h^{(1)} = h^{(0)} + \text{attention output} \cdot W_O")
    parts = zip(st.columns(3), (w.X, update, h1), ("h⁰ = X", "+ update", "= h¹"), ("h0", "update", "h1"), strict=True)
    for column, values, title, key in parts:
        with column:
            matrix(values, w.tokens, w.dims, title, f"resid-{key}", w.shape(), "Same shape in, same shape out.")
    top = int(np.argmax(np.abs(update[-1])))
    explain(
        f"Attention adds to each row rather than replacing it; '{w.last}' moved most in {w.dims[top]} "
        f"({update[-1, top]:+.3f}).",
        "The residual stream is the model's running memo: every block reads it and adds a correction. Switch a "
        "block off and the rest still computes, but as a damaged network (primer, Appendix A): with attention off, "
        f"the two-layer model of the ablation lab answers '{attention_off_answer()}' after "
        f"'{' '.join(CAT[1:])}'.",
    )


@lru_cache(maxsize=1)
def attention_off_answer() -> str:
    """The trained two-layer model's top next token after the copula prompt with attention switched off."""
    return prompt_row(trained_model(), CAT, off=True).top_token


def _last(w: Walk) -> None:
    h_last = w.trace["blocks.0.hook_resid_post"][-1:]
    reading = "Only the last row predicts the next token; it goes to the read-out."
    matrix(h_last, [w.last], w.dims, "h_last", "last", shape_label(1, len(w.dims), "1", "d_model"), reading)
    explain(
        f"h_last = {vector(h_last[0])}: the state of '{w.last}' after one layer.",
        f"Everything the model knows about '{' '.join(w.tokens)}' is now in these {len(w.dims)} numbers; the "
        "read-out tab turns a vector like this into a probability for every word.",
    )


DRAW: dict[str, Callable[[Walk], None]] = {
    "x": _x,
    "qkv": _qkv,
    "raw": _raw,
    "scaled": _scaled,
    "masked": _masked,
    "weights": _weights,
    "z": _z,
    "wo": _wo,
    "resid": _resid,
    "last": _last,
}


def show_step(step: str, walk: Walk) -> None:
    """Draw one step of the walk: its matrices and its annotation."""
    DRAW[step](walk)
