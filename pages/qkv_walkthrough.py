"""QKV walkthrough (primer §2–5): one attention head step by step, temperature and sampling, the KV cache at work."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from core.kv_generation import PRIMER_7B, CacheShape, check_against_forward, generate, made_up_rows, ulps
from core.primer import hand_example
from core.sampling import TEMPERATURE_RANGE, next_token_distribution, sample
from core.transformer import Model, Trace, forward, hand_model
from ui import figures
from ui.glossary import link, tip
from ui.navigation import PAGES
from ui.widgets import chart, download_matrix, explain, matrix_frame, setup_page, shape_label

SPEC = next(spec for spec in PAGES if spec.script == "pages/qkv_walkthrough.py")
EXAMPLE = hand_example()
PRIMER_SENTENCE = " ".join(EXAMPLE.prompt)
# Every order of the three tokens whose embedding rows the primer prints; the primer's own sentence first.
SENTENCES = tuple(dict.fromkeys([PRIMER_SENTENCE, *(" ".join(p) for p in permutations(EXAMPLE.prompt))]))
MATRICES = ("X", "W_Q", "W_K", "W_V", "W_O")
EDIT_BOUND = 10.0  # what-if editors accept numbers in [-10, 10]: wide enough to break things, small enough to plot
STEPS = {
    "x": "Embeddings X",
    "qkv": "Q, K, V",
    "raw": "Raw QKᵀ",
    "scaled": "÷ √d_k",
    "masked": "Causal mask",
    "weights": "Softmax",
    "z": "Weights · V",
    "wo": "· W_O",
    "resid": "Residual h¹",
    "last": "Last row",
}
SECTIONS = ("Step by step", "Read-out", "KV cache")
MADE_UP_SEED = 0


# ---------------------------------------------------------------- state: the reader's matrices, URL, validation


def primer_values(sentence: str) -> dict[str, np.ndarray]:
    """The primer's weights and the embedding rows of a sentence's tokens."""
    rows = [EXAMPLE.embedding_rows[token] for token in sentence.split()]
    return {"X": np.array(rows), "W_Q": EXAMPLE.W_Q, "W_K": EXAMPLE.W_K, "W_V": EXAMPLE.W_V, "W_O": EXAMPLE.W_O}


def problem(values: np.ndarray) -> str | None:
    """Why a matrix cannot be used (empty, not a number, out of range), or None if it can."""
    if values.size == 0:
        return "it is empty"
    bad = ~np.isfinite(values)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        return f"row {row + 1}, column {column + 1} is empty or not a number"
    far = np.abs(values) > EDIT_BOUND
    if far.any():
        row, column = np.argwhere(far)[0]
        value = values[row, column]
        return f"row {row + 1}, column {column + 1} ({value:.3g}) is outside [−{EDIT_BOUND:g}, {EDIT_BOUND:g}]"
    return None


def encode(values: np.ndarray) -> str:
    """A matrix as URL text: numbers separated by commas, rows by semicolons."""
    return ";".join(",".join(f"{v:.6g}" for v in row) for row in values)


def decode(text: str, shape: tuple[int, int]) -> tuple[np.ndarray | None, str | None]:
    """Parse a matrix from URL text; returns (matrix, None) or (None, the reason it was refused)."""
    try:
        rows = [[float(cell) for cell in line.split(",")] for line in text.split(";")]
        values = np.array(rows, dtype=np.float64)
    except ValueError:
        return None, "it contains something that is not a number"
    if values.shape != shape:
        return None, f"it is not a {shape[0]} × {shape[1]} matrix"
    reason = problem(values)
    return (None, reason) if reason else (values, None)


def page_state(sentence: str) -> dict:
    """The reader's current (last valid) matrices, created from the URL on a first visit, kept across pages."""
    state = st.session_state.get("qkv_state")
    if state is None:
        values, notes = primer_values(sentence), []
        for name in MATRICES:
            text = st.query_params.get(f"qkv_{name}")
            if text:
                parsed, reason = decode(text, values[name].shape)
                if reason:
                    notes.append(f"The link's {name} could not be used ({reason}); the primer's is shown instead.")
                else:
                    values[name] = parsed
        state = {"values": values, "base": dict(values), "sentence": sentence, "version": 0, "notes": notes}
        st.session_state["qkv_state"] = state
    if state["sentence"] != sentence:  # a preset sentence replaces the input rows, edited weights stay
        state["values"]["X"] = state["base"]["X"] = primer_values(sentence)["X"]
        state["sentence"] = sentence
        state["version"] += 1
    return state


def sync_url(state: dict) -> None:
    """Put edited matrices in the URL (and only those), so a shared link restores the what-if."""
    defaults = primer_values(state["sentence"])
    for name in MATRICES:
        key = f"qkv_{name}"
        if np.array_equal(state["values"][name], defaults[name]):
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != encode(state["values"][name]):
            st.query_params[key] = encode(state["values"][name])


def reset_to_primer() -> None:
    """Button callback: the primer's sentence, input rows and weights; edits and their URL entries dropped."""
    state = st.session_state["qkv_state"]
    st.session_state["qkv_sentence"] = PRIMER_SENTENCE
    state["values"] = primer_values(PRIMER_SENTENCE)
    state["base"] = dict(state["values"])
    state["sentence"] = PRIMER_SENTENCE
    state["version"] += 1
    state["notes"] = []


def model_from(values: dict[str, np.ndarray]) -> Model:
    """The §5 model with the reader's weight matrices (validated and frozen by Model)."""
    base = hand_model()
    params = dict(base.params) | {f"blocks.0.attn.{name}": values[name] for name in MATRICES[1:]}
    return Model(config=base.config, params=params, vocabulary=base.vocabulary, prompt=base.prompt)


def editors(state: dict, tokens: list[str]) -> None:
    """Bounded numeric editors for X and the four weight matrices; an invalid edit keeps the last valid matrix."""
    d = EXAMPLE.W_Q.shape[0]
    dims = [f"d{i + 1}" for i in range(d)]
    config = {
        c: st.column_config.NumberColumn(c, min_value=-EDIT_BOUND, max_value=EDIT_BOUND, step=0.001, format="%.3f")
        for c in dims
    }
    labels = {
        "X": "X: the input rows h⁰ (one per token)",
        "W_Q": "W_Q: what each token looks for",
        "W_K": "W_K: what each token offers",
        "W_V": "W_V: what each token carries",
        "W_O": "W_O: how the head writes back",
    }
    st.caption(
        f"Numbers between −{EDIT_BOUND:g} and {EDIT_BOUND:g}. Everything below updates; an empty or impossible "
        "entry is refused and the last valid matrix is kept. 'Reset to the primer' undoes all edits."
    )
    left, right = st.columns(2)
    places = (left, right, left, right, left)  # X, then the four weights two per row
    for place, name in zip(places, MATRICES, strict=True):
        with place:
            st.markdown(f"**{labels[name]}**")
            rows = tokens if name == "X" else dims
            frame = matrix_frame(state["base"][name], rows, dims)
            edited = st.data_editor(
                frame, key=f"qkv_edit_{name}_{state['version']}", column_config=config, num_rows="fixed"
            )
            values = pd.DataFrame(edited).apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
            reason = problem(values) if values.shape == state["base"][name].shape else "rows were added or removed"
            if reason:
                st.error(f"{name} not applied: {reason}. The page keeps the last valid {name}.")
            else:
                state["values"][name] = values


# ---------------------------------------------------------------- small presentation helpers


def matrix(
    values: np.ndarray,
    rows: list[str],
    columns: list[str],
    *,
    title: str,
    key: str,
    shape: str,
    reading: str,
    signed: bool = True,
    decimals: int = 3,
) -> None:
    """One heatmap with its shape, a one-line plain reading and a CSV download."""
    st.caption(f"{shape}. {reading}")
    fig = figure(
        "heatmap", small(values), x=tuple(columns), y=tuple(rows), title=title, signed=signed, decimals=decimals
    )
    chart(fig, key=f"qkv-{key}", alt=f"{title}, {shape}")
    download_matrix(values, rows, columns, name=title.split(" =")[0], key=f"qkv-{key}")


def small(values: np.ndarray) -> tuple:
    """A small matrix or vector as nested tuples: a cheap, exact cache key."""
    return tuple(map(tuple, values.tolist())) if np.ndim(values) == 2 else tuple(np.asarray(values).tolist())


@st.cache_resource(max_entries=512, show_spinner=False)
def _built(builder: str, data: tuple | None, options: tuple) -> go.Figure:
    kwargs = dict(options)
    fig = getattr(figures, builder)(*([] if data is None else [np.array(data)]), **kwargs)
    if builder == "heatmap":  # title at the very top, the top axis's token labels below it, never overlapping
        title = {"y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 6}}
        fig.update_layout(title=title, margin={"t": 78}, height=fig.layout.height + 28)
    return fig


def figure(builder: str, data: tuple | None = None, **options: object) -> go.Figure:
    """A ui.figures builder's figure for small, hashable arguments, built once and shared (read-only by convention).

    Plotly's validation is most of a chart's cost: a cached figure goes to the browser without being validated again.
    """
    return _built(builder, data, tuple(options.items()))


def quoted(tokens: list[str]) -> list[str]:
    return [f"'{token}'" for token in tokens]


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


def head(trace: Trace, name: str) -> np.ndarray:
    """The single head's slice of a trace entry (drops the head axis)."""
    value = trace[f"blocks.0.attn.hook_{name}"]
    return value[0] if name.startswith(("attn_scores", "pattern")) else value[:, 0, :]


# ---------------------------------------------------------------- section 1: the head step by step


def step_by_step(state: dict, tokens: list[str], scale: bool, causal: bool) -> None:
    model = model_from(state["values"])
    X = state["values"]["X"]
    trace = forward(model, embeddings=X, scale=scale, causal=causal)
    d = X.shape[1]
    dims = [f"d{i + 1}" for i in range(d)]
    T, last = len(tokens), tokens[-1]
    step = st.select_slider(
        "Step",
        options=list(STEPS),
        format_func=STEPS.get,
        key="qkv_step",
        bind="query-params",
        help="Each step draws only its own matrices. Read left to right, as in primer §5.",
    )
    shape_T_d = shape_label(T, d)
    if step == "x":
        matrix(
            X,
            tokens,
            dims,
            title="X = h⁰",
            key="x",
            shape=shape_T_d,
            reading="Each row is one token's embedding, looked up in E: a context-free starting point.",
        )
        top = int(np.argmax(np.abs(X[-1])))
        explain(
            f"'{last}' starts as [{', '.join(f'{v:.2f}' for v in X[-1])}]; its largest coordinate is {dims[top]} "
            f"({X[-1, top]:+.2f}). No row has seen any other token yet.",
            "Everything the model later concludes about a token is written on top of this row. Attention, the next "
            "steps, is the only place where rows borrow from each other.",
        )
    elif step == "qkv":
        st.info(
            "**Q**: what am I looking for?  **K**: what do I offer to be matched against?  "
            "**V**: what information do I carry, if matched?"
        )
        for column, name, formula in zip(
            st.columns(3), "qkv", ("Q = X · W_Q", "K = X · W_K", "V = X · W_V"), strict=True
        ):
            with column:
                matrix(
                    head(trace, name),
                    tokens,
                    dims,
                    title=formula,
                    key=name,
                    shape=shape_label(T, d, "T", "d_k"),
                    reading="One row per token.",
                )
        q, k = head(trace, "q"), head(trace, "k")
        explain(
            f"The same {T} rows of X seen through three weight matrices. '{last}' looks for "
            f"{dims[int(np.argmax(q[-1]))]} (query {q[-1].max():+.3f}) and offers {dims[int(np.argmax(k[-1]))]} "
            f"(key {k[-1].max():+.3f}).",
            "Q and K only decide who listens to whom; V is what actually moves. That split is why a deployed model "
            "stores K and V for every past token but never Q (the KV cache tab).",
        )
    elif step == "raw":
        raw = head(trace, "attn_scores_raw")
        matrix(
            raw,
            tokens,
            tokens,
            title="QKᵀ (raw scores)",
            key="raw",
            shape=shape_label(T, T, "T", "T"),
            reading="Entry (i, j): how well token i's query matches token j's key, a dot product.",
            decimals=4,
        )
        best, worst = int(np.argmax(raw[-1])), int(np.argmin(raw[-1]))
        names = ["its own key" if i == T - 1 else f"the key of '{tokens[i]}'" for i in range(T)]
        explain(
            f"'{last}' matches {names[best]} most ({raw[-1, best]:.4f}) and {names[worst]} least "
            f"({raw[-1, worst]:.4f}).",
            "These scores are the routing decision, computed from content on the fly: the head's window is chosen "
            "by what the words are, not by a fixed position as in a CNN filter.",
        )
    elif step == "scaled":
        raw, scores = head(trace, "attn_scores_raw"), head(trace, "attn_scores")
        st.latex(r"\text{scores} = \frac{QK^\top}{\sqrt{d_k}}" if scale else r"\text{scores} = QK^\top")
        matrix(
            scores,
            tokens,
            tokens,
            title="QKᵀ / √d_k" if scale else "QKᵀ (scaling off)",
            key="scaled",
            shape=shape_label(T, T, "T", "T"),
            reading=f"Divide by √d_k = √{d} ≈ {np.sqrt(d):.2f}." if scale else "Scaling is switched off above.",
        )
        explain(
            f"The largest score of '{last}' is {scores[-1].max():.3f} (raw {raw[-1].max():.3f})."
            + ("" if scale else " With scaling off the scores are the raw dot products: the weights will be sharper."),
            "Without the division, scores grow with the vector length d_k, softmax puts nearly all weight on one "
            "token and a large model learns slowly. A fixed, free correction.",
        )
    elif step == "masked":
        masked = head(trace, "attn_scores_masked")
        matrix(
            masked,
            tokens,
            tokens,
            title="masked scores",
            key="masked",
            shape=shape_label(T, T, "T", "T"),
            reading="Above the diagonal −∞: a token reads itself and earlier tokens only; −∞ becomes weight 0."
            if causal
            else "Masking is switched off above: every token sees the whole sentence.",
        )
        hidden = int(np.isneginf(masked).sum())
        explain(
            f"{hidden} of the {T * T} cells are −∞, the ones where a token would read a later one."
            if hidden
            else f"No cell is masked: '{tokens[0]}' can now read '{last}', a word that comes after it.",
            "When generating, the future does not exist yet. Training with the mask makes the model rely only on "
            "what it will actually have, and it is what makes the KV cache possible.",
        )
    elif step == "weights":
        weights_step(trace, model, X, tokens, scale, causal)
    elif step == "z":
        z, weights = head(trace, "z"), head(trace, "pattern")
        matrix(
            z,
            tokens,
            dims,
            title="weights · V",
            key="z",
            shape=shape_label(T, d, "T", "d_v"),
            reading="Each row is a blend of the V rows, in the proportions of that token's weights.",
        )
        explain(
            f"'{last}'s output is "
            + " + ".join(f"{w:.3f}·V({t})" for w, t in zip(weights[-1], tokens, strict=True))
            + f" = [{', '.join(f'{v:.3f}' for v in z[-1])}].",
            f"This is the payload actually delivered: what '{last}' now carries from the other words.",
        )
    elif step == "wo":
        z, out = trace["blocks.0.attn.hook_concat"], trace["blocks.0.hook_attn_out"]
        matrix(
            out,
            tokens,
            dims,
            title="attention output · W_O",
            key="wo",
            shape=shape_T_d,
            reading="W_O maps the head's output back into the residual stream (and, with several heads, mixes them).",
        )
        explain(
            "W_O is the identity here, so the write-back equals the head output exactly."
            if np.array_equal(out, z)
            else f"Your W_O changes the write-back: '{last}' now gets [{', '.join(f'{v:.3f}' for v in out[-1])}].",
            "With many heads, W_O is where their separate findings are combined into one update to each token.",
        )
    elif step == "resid":
        h1, update = trace["blocks.0.hook_resid_post"], trace["blocks.0.hook_attn_out"]
        st.latex(r"h^{(1)} = h^{(0)} + \text{attention output} \cdot W_O")
        parts = zip(st.columns(3), (X, update, h1), ("h⁰ = X", "+ update", "= h¹"), ("h0", "update", "h1"), strict=True)
        for column, values, title, key in parts:
            with column:
                matrix(
                    values,
                    tokens,
                    dims,
                    title=title,
                    key=f"resid-{key}",
                    shape=shape_T_d,
                    reading="Same shape in, same shape out.",
                )
        top = int(np.argmax(np.abs(update[-1])))
        explain(
            f"Attention adds to each row rather than replacing it; '{last}' moved most in {dims[top]} "
            f"({update[-1, top]:+.3f}).",
            "The residual stream is the model's running memo: every block reads it and adds a correction. That is "
            "why one block can be switched off and the rest still works.",
        )
    else:
        h_last = trace["blocks.0.hook_resid_post"][-1:]
        matrix(
            h_last,
            [last],
            dims,
            title="h_last",
            key="last",
            shape=shape_label(1, d, "1", "d_model"),
            reading="Only the last row predicts the next token; it goes to the read-out.",
        )
        explain(
            f"h_last = [{', '.join(f'{v:.3f}' for v in h_last[0])}]: the state of '{last}' after one layer.",
            f"Everything the model knows about '{' '.join(tokens)}' is now in these {d} numbers; the read-out tab "
            "turns a vector like this into a probability for every word.",
        )


def weights_step(trace: Trace, model: Model, X: np.ndarray, tokens: list[str], scale: bool, causal: bool) -> None:
    """Softmax weights, the routing-vs-payload picture, and what switching off scaling or masking changed."""
    weights, V = head(trace, "pattern"), head(trace, "v")
    T, last = len(tokens), tokens[-1]
    dims = [f"d{i + 1}" for i in range(V.shape[1])]
    left, right = st.columns([2, 3])
    with left:
        matrix(
            weights,
            tokens,
            tokens,
            title="attention weights",
            key="weights",
            shape=shape_label(T, T, "T", "T"),
            reading="Each row sums to 1: how a token splits its attention.",
            signed=False,
        )
    with right:
        st.markdown("**QK is the routing; V is the payload.**")
        chart(
            figure(
                "flow",
                small(weights),
                sources=tuple(f"V of '{t}'" for t in tokens),
                targets=tuple(f"'{t}' reads" for t in tokens),
                title="Routing (widths = weights) carrying the payload (V rows)",
            ),
            key="qkv-flow",
            alt="Sankey diagram: each token's value flows to the tokens that read it, width = weight",
        )
        matrix(
            V,
            tokens,
            dims,
            title="V (the payload)",
            key="flow-v",
            shape=shape_label(T, V.shape[1], "T", "d_v"),
            reading="The rows that flow along the edges.",
        )
    changes = []
    if not (scale and causal):
        reference = head(forward(model, embeddings=X), "pattern")
        if not scale:
            changes.append(
                f"Without scaling, the largest weight of '{last}' is {weights[-1].max():.3f} instead of "
                f"{reference[-1].max():.3f}: sharper weights."
            )
        if not causal:
            future = weights[0, 1:].sum()
            changes.append(
                f"Without the mask, '{tokens[0]}' takes {future:.0%} of its information from later tokens: "
                "a token reads the future."
            )
    explain(
        blend(weights[-1], tokens, last) + (" " + " ".join(changes) if changes else ""),
        "This is the model's 'who listens to whom' for this sentence. It is recomputed from content for every input, "
        "which is what lets one head handle any sentence.",
    )


# ---------------------------------------------------------------- section 2: read-out


def read_out() -> None:
    words = list(EXAMPLE.vocabulary)
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
    decoding = c2.radio(
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
        len(words),
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
    dist = next_token_distribution(EXAMPLE.illustrative_logits, temperature, top_k=int(top_k), top_p=top_p)
    order = dist.ranking
    chart(
        figure(
            "bars",
            labels=tuple(words[i] for i in order),
            values=tuple(float(dist.final[i]) for i in order),
            highlight=tuple(bool(dist.kept[i]) for i in order),
            title=f"Next-token probabilities after 'the cat sat' at τ = {temperature:.2f}",
            y_title="probability",
            y_range=(0, 1.08),
        ),
        key="qkv-probs",
        alt="Bar chart of next-token probabilities, sorted, kept tokens in blue",
    )
    top3 = ", ".join(f"'{words[i]}' {dist.probs[i]:.0%}" for i in order[:3])
    kept = int(dist.kept.sum())
    filtered = (
        f" Top-k / top-p keep {kept} of {len(words)} tokens (the rest drop to 0) and share 100% among them: "
        + ", ".join(f"'{words[i]}' {dist.final[i]:.0%}" for i in order[: min(3, kept)])
        + "."
        if kept < len(words)
        else f" All {len(words)} tokens can be drawn."
    )
    explain(
        f"At τ = {temperature:.2f} the softmax gives {top3}." + filtered,
        "Temperature is a dial between repeatable and varied output: low τ makes the model say its favourite almost "
        "every time, high τ spreads the bets. Top-k and top-p cut off the long tail of unlikely words.",
    )
    if decoding == "Greedy":
        st.success(
            f"Greedy decoding picks **{words[dist.greedy]}** (p = {dist.final[dist.greedy]:.2f}) every time, "
            "whatever the temperature."
        )
        return
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
    n = draw_count()
    if n:
        draws = sample(dist.final, int(seed), n)
        history = ", ".join(words[i] for i in draws[-12:])
        st.success(f"Draw {n} (seed {seed}): **{words[draws[-1]]}**. Last draws: {history}.")
        counts = np.bincount(draws, minlength=len(words))
        explain(
            f"In {n} draws, '{words[order[0]]}' came up {counts[order[0]]} times ({counts[order[0]] / n:.0%}, "
            f"probability {dist.final[order[0]]:.0%}).",
            "A sampled answer is one roll of weighted dice: run it again with another seed and the text differs. "
            "That is why the same prompt can give different answers.",
        )


def draw_count() -> int:
    """How many times the reader pressed 'sample' (kept in the URL so a link shows the same draw)."""
    text = st.query_params.get("qkv_draws", "0")
    return int(text) if text.isdigit() and int(text) <= 10_000 else 0


def draw_once() -> None:
    st.query_params["qkv_draws"] = str(draw_count() + 1)


# ---------------------------------------------------------------- section 3: the KV cache


def kv_cache(state: dict, tokens: list[str], scale: bool, causal: bool) -> None:
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
    model, X0 = model_from(state["values"]), state["values"]["X"]
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
    st.caption(
        f"How this generation is built: the primer gives input rows for three tokens only, so after the prefill the "
        f"rest of '{' '.join(tokens)}' is fed one token at a time, as if the model had just produced it"
        + (
            f", followed by {extra} made-up rows drawn at random (seed {MADE_UP_SEED}), which are not words."
            if extra
            else "."
        )
        + " The toy head has no read-out of its own, so nothing is sampled here."
    )
    X = np.vstack([X0, made_up_rows(X0, extra, MADE_UP_SEED)]) if extra else X0
    names = tokens + [f"random {i + 1}" for i in range(extra)]
    run = generate(model, X, prefill, scale=scale)
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
    chosen = min(chosen, last_step)
    step = run.steps[chosen]
    step_names = ["prefill"] + [f"step {s}" for s in range(1, last_step + 1)]
    chart(
        figure(
            "status_grid",
            small(run.status),
            x=tuple(step_names),
            y=tuple(names),
            labels=("", "reused", "fresh"),
            title="K and V cache rows at each step",
            highlight_column=chosen,
        ),
        key="qkv-cache-grid",
        alt="Grid of cache rows by step: fresh where computed, reused where read from cache",
    )
    fresh, reused = [names[i] for i in step.fresh], [names[i] for i in step.reused]
    explain(
        f"At {step_names[chosen]} the cache holds {step.cache_length} row{'s' if step.cache_length > 1 else ''}: "
        f"{', '.join(quoted(fresh))} computed fresh"
        + (f", {', '.join(quoted(reused))} reused." if reused else ".")
        + " The staircase grows by exactly one row of K and one of V per step.",
        "Memory grows with every token of the conversation, but the work per new token stays small: that trade is "
        "what makes chat models affordable to run, and why long contexts need so much memory.",
    )
    rows = [f"{names[i]} · {'fresh' if i in step.fresh else 'reused'}" for i in range(step.cache_length)]
    d = X.shape[1]
    dims = [f"d{i + 1}" for i in range(d)]
    cq, cw = st.columns(2)
    with cq:
        matrix(
            step.q,
            fresh,
            dims,
            title="Q (fresh, used once)",
            key="kv-q",
            shape=shape_label(len(fresh), d, "new", "d_k"),
            reading="Computed for the new token(s) only, then discarded.",
        )
    with cw:
        matrix(
            step.pattern,
            fresh,
            [names[i] for i in range(step.cache_length)],
            title="weights over the cache",
            key="kv-w",
            shape=shape_label(len(fresh), step.cache_length, "new", "t"),
            signed=False,
            reading="The new query reads every cached key.",
        )
    ck, cv = st.columns(2)
    with ck:
        matrix(
            step.k_cache,
            rows,
            dims,
            title="K cache",
            key="kv-k",
            shape=shape_label(step.cache_length, d, "t", "d_k"),
            reading="One row appended per step.",
        )
    with cv:
        matrix(
            step.v_cache,
            rows,
            dims,
            title="V cache",
            key="kv-v",
            shape=shape_label(step.cache_length, d, "t", "d_v"),
            reading="One row appended per step.",
        )
    reader = fresh[-1]
    explain(
        blend(step.pattern[-1], [names[i] for i in range(step.cache_length)], reader)
        + (
            f" Its query was computed once for this step; the {len(reused)} earlier K and V row"
            + ("s were" if len(reused) != 1 else " was")
            + " read from the cache, not recomputed."
            if reused
            else " The prefill computes Q, K and V for every prompt token at once; only K and V are kept."
        ),
        "Only K and V are worth keeping: a past token's query is never needed again, so storing it would cost memory "
        "and buy nothing.",
    )
    proof(model, X, run, chosen, step_names, scale)
    size_formula(model, len(names))


def proof(model: Model, X: np.ndarray, run, chosen: int, step_names: list[str], scale: bool) -> None:
    """Cached outputs equal the recomputed ones; the multiply-adds with and without the cache."""
    difference = check_against_forward(model, X, run, scale=scale)
    reference = forward(model, embeddings=X, scale=scale)["blocks.0.hook_resid_post"]
    with_cache, without = run.total_multiply_adds(chosen)
    m1, m2, m3 = st.columns(3)
    m1.metric("max |cached − recomputed|", f"{difference:.1e}" if difference else "0 (bit for bit)")
    m2.metric(f"Multiply-adds up to {step_names[chosen]}, with the cache", f"{with_cache:,}")
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
    chart(
        figure(
            "grouped_bars",
            categories=tuple(step_names),
            series=series,
            title="Multiply-adds per step",
            value_format=",d",
            y_title="multiply-adds",
            y_range=None,
        ),
        key="qkv-macs",
        alt="Grouped bars: multiply-adds per generation step with and without the cache",
    )
    exact = (
        "exactly 0: the same numbers to the last bit"
        if difference == 0
        else f"{difference:.1e}, about {ulps(difference, reference):.1f} unit of float64's last binary digit: the "
        "matrix library adds the products for one row in a different order than for a block of rows"
    )
    explain(
        f"Every output row computed with the cache matches the full pass recomputed from scratch: the largest "
        f"difference is {exact}. Up to {step_names[chosen]} the cache needed {with_cache:,} multiply-adds instead of "
        f"{without:,}.",
        "The cache is not an approximation: it returns the same answer while skipping work that grows with the "
        "square of the conversation's length.",
    )


def size_formula(model: Model, n_tokens: int) -> None:
    """The §4 KV-cache size formula with the reader's numbers, and the toy head's own cache."""
    st.subheader("How big is the cache? (primer §4)")
    cols = st.columns(5)
    fields = (("L", "layers L"), ("T", "tokens T"), ("h", "heads h"), ("d_k", "d_k"), ("bytes_per_element", "bytes"))
    limits = {"L": 1000, "T": 10_000_000, "h": 1000, "d_k": 4096, "bytes_per_element": 8}
    values = {
        name: int(
            column.number_input(
                label,
                1,
                limits[name],
                value=getattr(PRIMER_7B, name),
                step=1,
                key=f"qkv_size_{name}",
                bind="query-params",
            )
        )
        for column, (name, label) in zip(cols, fields, strict=True)
    }
    shape = CacheShape(**values)
    st.latex(
        rf"\begin{{aligned}} \text{{KV cache}} &= 2 \cdot L \cdot T \cdot h \cdot d_k \cdot \text{{bytes}}"
        rf" = 2 \cdot {shape.L} \cdot {shape.T:,} \cdot {shape.h} \cdot {shape.d_k} \cdot {shape.bytes_per_element} \\"
        rf" &= {shape.bytes:,} \text{{ bytes}} \approx {shape.bytes / 1e9:,.3g}\ \text{{GB}} \end{{aligned}}".replace(
            ",", r"{,}"
        )
    )
    config = model.config
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


# ---------------------------------------------------------------- page


setup_page(SPEC)
st.markdown(
    f"One {link('attention-head')} of the primer's §5 example, one operation at a time. Every number is computed "
    "live; the defaults reproduce the primer's printed matrices, so you can read them side by side."
)
st.latex(r"\text{attention}(Q,K,V) = \text{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V")
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
state = page_state(sentence)
top[3].button("Reset to the primer", on_click=reset_to_primer, key="qkv_reset", help="Sentence, input rows, weights.")
for note in state["notes"]:
    st.warning(note)
state["notes"] = []  # said once; the page now runs on the primer's matrix
tokens = sentence.split()
section_tabs = st.tabs(SECTIONS, key="qkv_section", bind="query-params")
edited_now = False
if section_tabs[0].open:
    with section_tabs[0]:
        if st.toggle("What-if: edit the input rows and weights", key="qkv_edit"):
            editors(state, tokens)
            edited_now = True
        step_by_step(state, tokens, scale, causal)
if section_tabs[1].open:
    with section_tabs[1]:
        read_out()
if section_tabs[2].open:
    with section_tabs[2]:
        kv_cache(state, tokens, scale, causal)
if not edited_now and any(not np.array_equal(state["base"][n], state["values"][n]) for n in MATRICES):
    # Editors closed: the next time they open they start from the current values.
    state["base"] = dict(state["values"])
    state["version"] += 1
sync_url(state)
