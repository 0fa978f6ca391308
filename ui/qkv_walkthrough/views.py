"""The QKV walkthrough's sections (primer §2–5): the head step by step, the read-out, the KV cache at work.

Each function draws one part of the page from numbers the engine computed: its widgets, its chart(s) and the
"what you see / why it matters" box. Kept out of pages/qkv_walkthrough.py because Streamlit re-parses (and
"magic"-rewrites) a page script on every rerun; an imported module is parsed once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from core.explain.experiments import CAT, prompt_row
from core.explain.kv_generation import PRIMER_7B, CacheShape, CacheStep, Generation, made_up_rows
from core.explain.primer import printed
from core.explain.sampling import TEMPERATURE_RANGE, Distribution
from core.explain.transformer import Config, Trace
from core.explain.weights import trained_model
from ui.elements import figures
from ui.elements.glossary import link, tip
from ui.elements.navigation import PAGES
from ui.elements.widgets import chart, download_matrix, explain, shape_label
from ui.qkv_walkthrough.state import (
    EXAMPLE,
    SENTENCES,
    SIZE_LIMITS,
    STEPS,
    draw_count,
    draw_once,
    reset_to_primer,
)

MADE_UP_SEED = 0
WORDS = list(EXAMPLE.vocabulary)


# ---------------------------------------------------------------- shared pieces


def small(values: np.ndarray) -> tuple:
    """A small matrix or vector as nested tuples: a cheap, exact cache key."""
    return tuple(map(tuple, values.tolist())) if np.ndim(values) == 2 else tuple(np.asarray(values).tolist())


@lru_cache(maxsize=512)
def _built(builder: str, data: tuple | None, options: tuple) -> go.Figure:
    fig = getattr(figures, builder)(*([] if data is None else [np.array(data)]), **dict(options))
    if builder == "heatmap":  # title at the very top, the top axis's token labels below it, never overlapping
        title = {"y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 6}}
        fig.update_layout(title=title, margin={"t": 78}, height=fig.layout.height + 28)
    return fig


def figure(builder: str, data: tuple | None = None, **options: object) -> go.Figure:
    """A ui.elements.figures builder's figure for small, hashable arguments, built once and shared (read-only by
    convention).

    Plotly's validation is most of a chart's cost: a cached figure goes to the browser without being validated again.
    """
    return _built(builder, data, tuple(options.items()))


def matrix(
    values: np.ndarray,
    rows: list[str],
    columns: list[str],
    title: str,
    key: str,
    shape: str,
    reading: str,
    *,
    signed: bool = True,
    decimals: int = 3,
    half_up: bool = False,
) -> None:
    """One heatmap with its shape, a one-line plain reading and a CSV download (half_up: labels rounded as printed)."""
    st.caption(f"{shape}. {reading}")
    options = {"half_up": True} if half_up else {}
    fig = figure(
        "heatmap",
        small(values),
        x=tuple(columns),
        y=tuple(rows),
        title=title,
        signed=signed,
        decimals=decimals,
        **options,
    )
    chart(fig, key=f"qkv-{key}", alt=f"{title}, {shape}")
    download_matrix(values, rows, columns, name=title.split(" =")[0], key=f"qkv-{key}")


def quoted(tokens: list[str]) -> list[str]:
    return [f"'{token}'" for token in tokens]


def vector(values: np.ndarray, decimals: int = 3) -> str:
    """'[-0.363, 0.011, …]': a row as the primer prints it."""
    return "[" + ", ".join(f"{v:.{decimals}f}" for v in values) + "]"


def blend(weights: np.ndarray, tokens: list[str], reader: str) -> str:
    """'sat' takes 42% of its information from itself, 30% from 'the' and 29% from 'cat'."""
    parts = [
        f"{w:.0%} from {'itself' if token == reader else repr(token)}"
        for w, token in sorted(zip(weights, tokens, strict=True), key=lambda pair: -pair[0])
        if w > 0
    ]
    parts[0] = parts[0].replace(" from ", " of its information from ", 1)
    joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"'{reader}' takes {joined}."


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


# ---------------------------------------------------------------- section 2: read-out


@dataclass(frozen=True)
class Decoding:
    """The read-out's controls."""

    temperature: float
    method: str  # "Greedy" or "Sample"
    top_k: int
    top_p: float


def read_out_controls() -> Decoding:
    """The illustration's caveat, the softmax formula and the four decoding controls."""
    st.caption(
        "These logits are the primer's **illustration** for 'the cat sat' over the §5 vocabulary (\"result might look "
        'like"), not computed from the weights on this page.'
    )
    st.latex(r"p_i = \frac{\exp(\ell_i / \tau)}{\sum_{j=1}^{V} \exp(\ell_j / \tau)}")
    c1, c2, c3, c4 = st.columns(4)
    temperature = c1.slider(
        "Temperature τ",
        *TEMPERATURE_RANGE,
        value=1.0,
        step=0.05,
        key="qkv_temp",
        bind="query-params",
        help=tip("softmax"),
    )
    method = c2.radio(
        "Decoding",
        ("Greedy", "Sample"),
        key="qkv_decoding",
        bind="query-params",
        horizontal=True,
        help="Greedy always takes the most likely token; sampling draws one at random by probability.",
    )
    top_k = c3.number_input(
        "Top-k (0 = off)",
        0,
        len(WORDS),
        value=0,
        step=1,
        key="qkv_top_k",
        bind="query-params",
        help="Keep only the k most likely tokens, then renormalise.",
    )
    top_p = c4.slider(
        "Top-p",
        0.05,
        1.0,
        value=1.0,
        step=0.05,
        key="qkv_top_p",
        bind="query-params",
        help="Keep the smallest set of most likely tokens whose probabilities reach p (1 = off).",
    )
    return Decoding(temperature=temperature, method=method, top_k=int(top_k), top_p=top_p)


def probabilities(dist: Distribution, temperature: float) -> None:
    """The sorted next-token bars (kept tokens highlighted) and what filtering did; greedy's pick if greedy."""
    order = dist.ranking
    bars = figure(
        "bars",
        labels=tuple(WORDS[i] for i in order),
        values=tuple(float(dist.final[i]) for i in order),
        highlight=tuple(bool(dist.kept[i]) for i in order),
        title=f"Next-token probabilities after 'the cat sat' at τ = {temperature:.2f}",
        y_title="probability",
        y_range=(0, 1.08),
    )
    chart(bars, key="qkv-probs", alt="Bar chart of next-token probabilities, sorted, kept tokens in blue")
    top3 = ", ".join(f"'{WORDS[i]}' {dist.probs[i]:.0%}" for i in order[:3])
    kept = int(dist.kept.sum())
    filtered = (
        f" Top-k / top-p keep {kept} of {len(WORDS)} tokens (the rest drop to 0) and share 100% among them: "
        + ", ".join(f"'{WORDS[i]}' {dist.final[i]:.0%}" for i in order[: min(3, kept)])
        + "."
        if kept < len(WORDS)
        else f" All {len(WORDS)} tokens can be drawn."
    )
    explain(
        f"At τ = {temperature:.2f} the softmax gives {top3}." + filtered,
        "Temperature is a dial between repeatable and varied output: low τ makes the model say its favourite almost "
        "every time, high τ spreads the bets. Top-k and top-p cut off the long tail of unlikely words.",
    )


def sampler(method: str) -> tuple[int, int]:
    """When sampling, the seed and the 'sample' button; returns (seed, draws so far), (0, 0) for greedy decoding."""
    if method == "Greedy":
        return 0, 0
    c1, c2 = st.columns([1, 2], vertical_alignment="bottom")
    seed = c1.number_input(
        "Seed",
        0,
        10**6,
        value=0,
        step=1,
        key="qkv_seed",
        bind="query-params",
        help="The same seed gives the same draws: a sampler is random but reproducible.",
    )
    c2.button("Sample the next token", key="qkv_sample_button", on_click=draw_once, type="primary")
    return int(seed), draw_count()


def decision(dist: Distribution, method: str, drawn: np.ndarray, seed: int) -> None:
    """Greedy decoding's pick, or the sampler's draws so far (nothing before the first press)."""
    if method == "Greedy":
        st.success(
            f"Greedy decoding picks **{WORDS[dist.greedy]}** (p = {dist.final[dist.greedy]:.2f}) every time, "
            "whatever the temperature."
        )
    elif len(drawn):
        draws(drawn, dist, seed)


def draws(tokens: np.ndarray, dist: Distribution, seed: int) -> None:
    """The latest draw, the last few, and how often the favourite came up against its probability."""
    n, favourite = len(tokens), int(dist.ranking[0])
    history = ", ".join(WORDS[i] for i in tokens[-12:])
    st.success(f"Draw {n} (seed {seed}): **{WORDS[tokens[-1]]}**. Last draws: {history}.")
    hits = int(np.count_nonzero(tokens == favourite))
    explain(
        f"In {n} draw{'s' if n != 1 else ''}, '{WORDS[favourite]}' came up {hits} time{'s' if hits != 1 else ''} "
        f"({hits / n:.0%}, "
        f"probability {dist.final[favourite]:.0%}).",
        "A sampled answer is one roll of weighted dice: run it again with another seed and the text differs. "
        "That is why the same prompt can give different answers.",
    )


# ---------------------------------------------------------------- section 3: the KV cache


def cache_controls(X: np.ndarray, tokens: list[str], causal: bool) -> tuple[int, np.ndarray, list[str]]:
    """What the cache is, the prefill and made-up-rows controls, how the run is built.

    Returns (prefill, the input rows with the made-up ones appended, their names).
    """
    st.markdown(
        f"**The cache is KV, not QKV.** During generation a new token needs its own Q once and the K and V of every "
        f"earlier token. So a deployed model keeps K and V ({link('kv-cache')}) and throws Q away. The "
        f"{link('prefill')} handles the prompt in one pass; then each new token is a prefill of one."
    )
    if not causal:
        st.warning(
            "The cache only works with the causal mask (a token cannot read keys that do not exist yet), so "
            "this section keeps the mask on whatever the switch above says."
        )
    c1, c2 = st.columns(2)
    prefill = c1.select_slider(
        "Prompt tokens handled in the prefill",
        options=list(range(1, len(tokens) + 1)),
        value=1,
        key="qkv_prefill",
        bind="query-params",
        help=tip("prefill"),
    )
    extra = c2.slider(
        "Made-up extra tokens (random input rows)",
        0,
        6,
        value=0,
        key="qkv_extra",
        bind="query-params",
        help="The primer prints only three embedding rows. To watch a longer generation, add rows drawn "
        f"at random (seed {MADE_UP_SEED}) with the same spread; they are not words.",
    )
    made_up = f", followed by {extra} made-up rows drawn at random (seed {MADE_UP_SEED}), which are not words."
    st.caption(
        f"How this generation is built: the primer gives input rows for three tokens only, so after the prefill the "
        f"rest of '{' '.join(tokens)}' is fed one token at a time, as if the model had just produced it"
        + (made_up if extra else ".")
        + " The toy head has no read-out of its own, so nothing is sampled here."
    )
    rows = np.vstack([X, made_up_rows(X, extra, MADE_UP_SEED)])
    return int(prefill), rows, tokens + [f"random {i + 1}" for i in range(extra)]


def step_names(run: Generation) -> list[str]:
    return ["prefill"] + [f"step {s}" for s in range(1, len(run.steps))]


def generation_step(run: Generation) -> int:
    """The generation step slider (0 = prefill), clamped to this run's length."""
    last_step = len(run.steps) - 1
    if st.session_state.get("qkv_gen_step", 0) > last_step:
        st.session_state["qkv_gen_step"] = last_step
    chosen = st.slider(
        "Generation step (0 = prefill)",
        0,
        max(last_step, 1),
        value=0,
        key="qkv_gen_step",
        bind="query-params",
        disabled=last_step == 0,
        help="Step s feeds one more token; its K and V rows are appended to the cache.",
    )
    return min(chosen, last_step)


def cache_grid(run: Generation, chosen: int, names: list[str]) -> None:
    """Which K/V rows were fresh or reused at each step, the chosen step highlighted."""
    steps, step = step_names(run), run.steps[chosen]
    grid = figure(
        "status_grid",
        small(run.status),
        x=tuple(steps),
        y=tuple(names),
        labels=("", "reused", "fresh"),
        title="K and V cache rows at each step",
        highlight_column=chosen,
    )
    chart(
        grid, key="qkv-cache-grid", alt="Grid of cache rows by step: fresh where computed, reused where read from cache"
    )
    fresh, reused = [names[i] for i in step.fresh], [names[i] for i in step.reused]
    single = [s for s in run.steps if len(s.fresh) == 1]
    growth = (
        f" (here from {single[0].multiply_adds:,} multiply-adds at {steps[single[0].step]} to "
        f"{single[-1].multiply_adds:,} at {steps[single[-1].step]})"
        if len(single) > 1
        else ""
    )
    explain(
        f"At {steps[chosen]} the cache holds {step.cache_length} row{'s' if step.cache_length > 1 else ''}: "
        f"{', '.join(quoted(fresh))} computed fresh"
        + (f", {', '.join(quoted(reused))} reused." if reused else ".")
        + " The staircase grows by exactly one row of K and one of V per step.",
        "Memory grows with every token of the conversation, and so does the work per new token"
        + growth
        + ", but by one row of scores per token instead of the whole square: that trade is what makes chat models "
        "affordable to run, and why long contexts need so much memory.",
    )


def cache_step(step: CacheStep, names: list[str]) -> None:
    """The chosen step's fresh Q, its weights over the cache, and the K and V caches."""
    fresh, cached = [names[i] for i in step.fresh], names[: step.cache_length]
    rows = [f"{name} · {'fresh' if i in step.fresh else 'reused'}" for i, name in enumerate(cached)]
    d, t, n = step.q.shape[1], step.cache_length, len(fresh)
    dims = [f"d{i + 1}" for i in range(d)]
    panels = (  # values, rows, columns, title, key, shape, reading, signed
        (
            step.q,
            fresh,
            dims,
            "Q (fresh, used once)",
            "kv-q",
            shape_label(n, d, "new", "d_k"),
            "Computed for the new token(s) only, then discarded.",
            True,
        ),
        (
            step.pattern,
            fresh,
            cached,
            "weights over the cache",
            "kv-w",
            shape_label(n, t, "new", "t"),
            "The new query reads every cached key.",
            False,
        ),
        (
            step.k_cache,
            rows,
            dims,
            "K cache",
            "kv-k",
            shape_label(t, d, "t", "d_k"),
            "One row appended per step.",
            True,
        ),
        (
            step.v_cache,
            rows,
            dims,
            "V cache",
            "kv-v",
            shape_label(t, d, "t", "d_v"),
            "One row appended per step.",
            True,
        ),
    )
    for place, (*panel, signed) in zip([*st.columns(2), *st.columns(2)], panels, strict=True):
        with place:
            matrix(*panel, signed=signed)
    reused = len(step.reused)
    explain(
        blend(step.pattern[-1], cached, fresh[-1])
        + (
            f" Its query was computed once for this step; the {reused} earlier K and V row"
            + ("s were" if reused != 1 else " was")
            + " read from the cache, not recomputed."
            if reused
            else " The prefill computes Q, K and V for every prompt token at once; only K and V are kept."
        ),
        "Only K and V are worth keeping: a past token's query is never needed again, so storing it would cost memory "
        "and buy nothing.",
    )


def proof(run: Generation, chosen: int, difference: float) -> None:
    """Cached outputs against the full pass recomputed, and the multiply-adds with and without the cache."""
    steps = step_names(run)
    with_cache, without = run.total_multiply_adds(chosen)
    exact = "0 (bit for bit)" if difference == 0 else f"{difference:.1e}"
    m1, m2, m3 = st.columns(3)
    m1.metric("max |cached − recomputed|", exact)
    m2.metric(f"Multiply-adds up to {steps[chosen]}, with the cache", f"{with_cache:,}")
    m3.metric(
        "… recomputing everything at every step",
        f"{without:,}",
        delta=f"{without / with_cache:.1f}× the work" if with_cache else None,
        delta_color="off",
    )
    series = (
        ("with the KV cache", tuple(s.multiply_adds for s in run.steps)),
        ("recomputing from scratch", tuple(s.multiply_adds_without_cache for s in run.steps)),
    )
    work = figure(
        "grouped_bars",
        categories=tuple(steps),
        series=series,
        title="Multiply-adds per step",
        value_format=",d",
        y_title="multiply-adds",
        y_range=None,
    )
    chart(work, key="qkv-macs", alt="Grouped bars: multiply-adds per generation step with and without the cache")
    explain(
        f"Every output row computed with the cache matches the full pass recomputed from scratch: the largest "
        f"difference is {exact}. Both do the same multiplications and additions in the same order; only the amount "
        f"of work differs: up to {steps[chosen]} the cache needed {with_cache:,} multiply-adds instead of {without:,}.",
        "The cache is not an approximation: it returns the same answer while skipping work that grows with the "
        "square of the conversation's length.",
    )


def cache_size(config: Config, n_tokens: int) -> None:
    """The §4 KV-cache size formula with the reader's numbers (the primer's 7B example by default), the toy head's."""
    st.subheader("How big is the cache? (primer §4)")
    fields = (("L", "layers L"), ("T", "tokens T"), ("h", "heads h"), ("d_k", "d_k"), ("bytes_per_element", "bytes"))
    values = {
        name: int(
            column.number_input(
                label,
                1,
                SIZE_LIMITS[name],
                value=getattr(PRIMER_7B, name),
                step=1,
                key=f"qkv_size_{name}",
                bind="query-params",
            )
        )
        for column, (name, label) in zip(st.columns(5), fields, strict=True)
    }
    shape = CacheShape(**values)
    st.latex(
        rf"\begin{{aligned}} \text{{KV cache}} &= 2 \cdot L \cdot T \cdot h \cdot d_k \cdot \text{{bytes}}"
        rf" = 2 \cdot {shape.L} \cdot {shape.T:,} \cdot {shape.h} \cdot {shape.d_k} \cdot {shape.bytes_per_element} \\"
        rf" &= {shape.bytes:,} \text{{ bytes}} \approx {shape.bytes / 1e9:,.3g}\ \text{{GB}} \end{{aligned}}".replace(
            ",", r"{,}"
        )
    )
    toy = CacheShape(L=config.n_layers, T=n_tokens, h=config.n_heads, d_k=config.d_head, bytes_per_element=8)
    st.caption(
        f"Defaults: the primer's 7B example (FP16, 32K context). The toy head on this page, in float64, "
        f"holds {toy.bytes} bytes for its {toy.T} tokens."
    )
    calculator = next((spec for spec in PAGES if spec.script == "pages/kv_cost.py"), None)
    if calculator:
        label = f"{calculator.title}: what this memory costs on real GPUs"
        try:
            st.page_link(calculator.script, label=label, icon=calculator.icon)
        except StreamlitPageNotFoundError:  # the page script run on its own (AppTest), without app.py's navigation
            st.markdown(f"[{label}](/{calculator.url_path})")
