"""The two-layer trace page's views (primer §6 and §7): prompt builder, the shape table's steps, the four heads, the
residual stream and the primer-vs-ours comparison. Widgets -> core (one cached forward pass, trace views) -> ui figures
-> annotations from the same numbers.

Kept out of pages/two_layer_trace.py because Streamlit re-parses (and "magic"-rewrites) a page script on every
AppTest run, at ~10 µs per syntax node; an imported module is parsed once.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.explain.attention import softmax
from core.explain.primer_slips import section6_slips
from core.explain.trace_views import (
    BOS,
    COPULA_PROBES,
    MAX_TOKENS,
    CopulaProbe,
    CopulaRow,
    PrimerSection6,
    PromptError,
    ShapeRow,
    all_heads,
    column_travel,
    copula_probe,
    copula_table,
    corpus_presets,
    head_blocks,
    head_labels,
    largest_entry,
    layer_mark,
    lens_probabilities,
    pair_frequencies,
    parse_prompt,
    primer_section6,
    query_attention,
    residual_stages,
    row_moments,
    row_norms,
    rule_emergence,
    shape_table,
    stage_norms,
    stage_projection,
    top_k,
)
from core.explain.transformer import Model, Trace, forward
from core.explain.weights import trained_model, training_log
from core.explain.world import sentence_types
from ui.elements.figures import bars, block_lines, grouped_bars, heatmap, line_chart, trajectories
from ui.elements.glossary import link, tip
from ui.elements.primer_slips import slip_box
from ui.elements.safe_text import plain
from ui.elements.widgets import OnFirstUse, chart, download_matrix, download_rows, download_table, explain
from ui.two_layer_trace.state import STEP, TAU_RANGE, step_from_link, step_into_link

pd = OnFirstUse("pandas")


@lru_cache(maxsize=256)
def cached_trace(tokens: tuple[str, ...]) -> Trace:
    """One forward pass per prompt, shared by every chart of the page (the trace is read-only)."""
    model = trained_model()
    return forward(model, model.encode(tokens))


@lru_cache(maxsize=64)
def _probe(prompt: tuple[str, ...]) -> CopulaProbe:
    """The copula read-out of one prompt (computed once per server)."""
    return copula_probe(trained_model(), prompt)


@cache
def _copula_rows() -> list[CopulaRow]:
    """All 16 copula types scored in one batched pass (computed once per server)."""
    return copula_table(trained_model())


@cache
def _training_log() -> dict[str, list]:
    """The shipped model's training log, read once."""
    return training_log(trained_model())


@cache
def _presets() -> dict[str, str]:
    """Preset prompt -> its label: the primer's prompts first (from the primer asset), then the world's sentences."""
    primer = primer_section6()
    prompts = [primer.readout["prompt"], *(row["prompt"] for row in primer.copula_probe["prompts"])]
    presets = {" ".join(prompt): f"{' '.join(prompt)}  (primer §6)" for prompt in prompts}
    for prompt, held_out in corpus_presets():
        presets.setdefault(prompt, f"{prompt}  (world sentence{', held out of training' if held_out else ''})")
    return presets


DEFAULT_PROMPT = next(iter(_presets()))


# ---------------------------------------------------------------- prompt builder


def _append_token() -> None:
    token = st.session_state.get("trace_add")
    if token:
        st.session_state["trace_prompt"] = f"{st.session_state.get('trace_prompt', '')} {token}".strip()
    st.session_state["trace_add"] = None


def _remove_last() -> None:
    words = str(st.session_state.get("trace_prompt", "")).split()
    st.session_state["trace_prompt"] = " ".join(words[:-1]) if len(words) > 1 else BOS


def _use_preset() -> None:
    preset = st.session_state.get("trace_preset")
    if preset:
        st.session_state["trace_prompt"] = preset
    st.session_state["trace_preset"] = None


def prompt_builder(model: Model) -> tuple[str, ...]:
    """Prompt widgets; returns the tokens to trace (the last valid prompt when the current one is refused)."""
    left, middle, right = st.columns([5, 4, 2], vertical_alignment="bottom")
    with left:
        st.text_input(
            "Prompt: type words separated by spaces, or click tokens below",
            value=DEFAULT_PROMPT,
            key="trace_prompt",
            bind="query-params",
            persist_state="session",
            help=tip("token"),
        )
    with middle:
        presets = _presets()
        st.selectbox(
            "Or start from a preset",
            list(presets),
            format_func=presets.__getitem__,
            index=None,
            placeholder="The primer's prompts and the world's sentences…",
            key="trace_preset",
            on_change=_use_preset,
        )
    with right:
        st.button("Remove last", on_click=_remove_last, key="trace_pop", icon=":material/backspace:", width="stretch")
    st.pills("Add a token", model.vocabulary, key="trace_add", on_change=_append_token, label_visibility="collapsed")
    text = st.session_state.get("trace_prompt", DEFAULT_PROMPT)
    last_valid = st.session_state.get("trace_last_valid", tuple(DEFAULT_PROMPT.split()))
    try:
        tokens = parse_prompt(text, model.vocabulary, MAX_TOKENS)
    except PromptError as error:
        st.error(f"{plain(error, 240)} The page keeps showing the last valid prompt: {' '.join(last_valid)}.")
        return last_valid
    if text.split()[0].upper() != BOS:
        st.caption(f"{BOS} was put in front: every sequence the model ever saw starts with it.")
    st.session_state["trace_last_valid"] = tokens
    return tokens


# ---------------------------------------------------------------- small helpers


def _rows(tokens: tuple[str, ...]) -> list[str]:
    """Row labels: position and token, unique even when a word repeats."""
    return [f"{i + 1} {token}" for i, token in enumerate(tokens)]


def _columns(n: int, prefix: str = "c") -> list[str]:
    return [f"{prefix}{j + 1}" for j in range(n)]


def _head_columns(config_heads: int, d_head: int) -> list[str]:
    return [f"h{h + 1}·{j + 1}" for h in range(config_heads) for j in range(d_head)]


def _matrix(
    matrix: np.ndarray,
    *,
    title: str,
    rows: list[str],
    columns: list[str],
    key: str,
    alt: str,
    signed: bool = True,
    column_breaks: tuple[int, ...] = (),
    row_breaks: tuple[int, ...] = (),
) -> None:
    """An annotated heatmap with its shape in the title and a CSV download under it."""
    values = np.ascontiguousarray(matrix, dtype=np.float64)
    fig = _heatmap(
        values.tobytes(), values.shape, title, tuple(rows), tuple(columns), signed, column_breaks, row_breaks
    )
    slot = _slot()
    chart(fig, key=key, alt=alt, slot=slot)
    download_matrix(values, rows, columns, name=title, key=slot or key)


@lru_cache(maxsize=1024)
def _heatmap(
    data: bytes,
    shape: tuple[int, ...],
    title: str,
    rows: tuple[str, ...],
    columns: tuple[str, ...],
    signed: bool,
    column_breaks: tuple[int, ...],
    row_breaks: tuple[int, ...],
) -> go.Figure:
    """Build a heatmap once per distinct matrix and labels (figures are never mutated after this)."""
    matrix = np.frombuffer(data, dtype=np.float64).reshape(shape)
    label = " × ".join(str(n) for n in shape)
    fig = heatmap(matrix, x=columns, y=rows, title=f"{title}  ({label})", signed=signed)
    room = 80 if len(columns) <= 8 else 115  # room for the title above the top axis (labels rotate when many)
    fig.update_layout(margin={"t": room}, height=fig.layout.height + room - 50, template="none")
    fig.update_traces(textfont_size=12)
    return block_lines(fig, column_breaks=column_breaks, row_breaks=row_breaks)


def _panel(values: np.ndarray, title: str, rows: list[str], columns: list[str], key: str, **extra: object) -> dict:
    """Keyword arguments of one _matrix call (alt text = title unless given)."""
    return {"matrix": values, "title": title, "rows": rows, "columns": columns, "key": key, "alt": title, **extra}


def _grid(panels: Sequence[dict], per_row: int = 2, proportional: bool = False) -> None:
    """Draw matrices per_row to a row, one per row once a matrix is wider than 6 or taller than 8 columns, so cells
    stay legible. `proportional` stacks them with widths proportional to their columns: equal cells, so a 6 → 8
    widening is seen as a wider matrix."""
    widest, tallest = (max(len(p[axis]) for p in panels) for axis in ("columns", "rows"))
    if proportional:
        for panel in panels:
            width = len(panel["columns"]) + 2  # + room for the row labels
            slot = st.columns([width, widest + 2 - width])[0] if width < widest + 2 else st.container()
            with slot:
                _matrix(**panel)
        return
    if tallest > 8 or widest > 6:
        per_row = 1
    for start in range(0, len(panels), per_row):
        for column, panel in zip(st.columns(per_row), panels[start : start + per_row], strict=False):
            with column:
                _matrix(**panel)


def _did(text: str) -> None:
    st.markdown(f"**What this step did.** {text}")


def _fmt(tokens: tuple[str, ...]) -> str:
    return " ".join(tokens)


# ---------------------------------------------------------------- the steps


@dataclass(frozen=True)
class View:
    """What every step view needs: the model, the prompt's trace and tokens, and the selected layer (from 0)."""

    model: Model
    trace: Trace
    tokens: tuple[str, ...]
    layer: int = 0

    @property
    def rows(self) -> list[str]:
        return _rows(self.tokens)

    @property
    def cols(self) -> list[str]:
        return _columns(self.model.config.d_model)

    @property
    def block(self) -> str:
        return f"blocks.{self.layer}"

    @property
    def n(self) -> int:
        return self.layer + 1

    @property
    def breaks(self) -> tuple[int, ...]:
        """Column indices where a new head's block starts (the head boundary)."""
        c = self.model.config
        return tuple(range(c.d_head, c.n_heads * c.d_head, c.d_head))

    def hook(self, name: str) -> np.ndarray:
        """A trace entry of the selected layer, e.g. hook('attn.hook_z')."""
        return self.trace[f"{self.block}.{name}"]


def _step_ids(v: View) -> None:
    ids, d = v.model.encode(v.tokens), v.model.config.d_model
    looked = ", ".join(f"{t} = {i}" for t, i in zip(v.tokens, ids, strict=True))
    _did(f"Turned each token into its id ({looked}) and read that row of E ({v.model.config.vocab_size} × {d}).")
    E_rows = v.trace["hook_embed"]
    _matrix(
        E_rows,
        title="E[ids], the tokens' embedding rows",
        rows=v.rows,
        columns=v.cols,
        key="tr-E",
        alt="Embedding rows",
    )
    r, c, value = largest_entry(E_rows)
    explain(
        f"Each row is one token's {d} learned numbers, read from the embedding matrix E. The largest entry here is "
        f"{value:.3f}, in column {c + 1} of {v.tokens[r]}. A word gets the same row wherever it appears.",
        f"Before any context is read, everything the model knows about '{v.tokens[-1]}' is these {d} numbers (its "
        f"{link('embedding')}); the rest of the pass refines them using the other {len(v.tokens) - 1} tokens.",
    )


def _step_h0(v: View) -> None:
    pe, T, d = v.trace["hook_pos_embed"], len(v.tokens), v.model.config.d_model
    freq, travel = pair_frequencies(d), column_travel(pe)
    _did(f"Added the fixed positional row to each embedding row: h⁰ = E[ids] + PE, still {T} × {d}.")
    _grid(
        [
            _panel(v.trace["hook_embed"], "E[ids]", v.rows, v.cols, "tr-E0"),
            _panel(pe, "PE (sinusoidal)", v.rows, v.cols, "tr-PE"),
            _panel(v.trace["blocks.0.hook_resid_pre"], "h⁰ = E[ids] + PE", v.rows, v.cols, "tr-h0"),
        ]
    )
    pairs = ", ".join(f"pair {i + 1} (columns {2 * i + 1}–{2 * i + 2}) turns {f:.3f} rad" for i, f in enumerate(freq))
    st.markdown(
        f"**How one vector carries both the word and its place.** Each column pair of PE is a sine and a cosine of "
        f"the position at a fixed speed: {pairs} per position. "
        + (
            f"Over these {T} positions column 1 moves by {travel[0]:.3f} while column {d - 1} moves by only "
            f"{travel[d - 2]:.3f}. "
            if T > 1
            else "With a single token nothing moves yet: add tokens and watch column 1 change fast, column 5 hardly. "
        )
        + "So position is written mostly into "
        "the fast first columns and the word keeps the slow ones nearly undisturbed; W_Q, W_K and W_V learn which "
        "coordinates to read, so a head can look at words, at places, or at both."
    )
    explain(
        f"Three {T} × {d} matrices: the word part, the place part and their sum h⁰, the residual stream's starting "
        f"point. PE's first column runs {', '.join(f'{x:.3f}' for x in pe[:, 0])} down the positions.",
        f"Attention alone is blind to order; the {link('positional-encoding')} is what tells the model that "
        f"'{v.tokens[-1]}' is token {T} and not token 1, at no parameter cost: PE is a fixed table, not learned.",
    )


def _step_norm(v: View, which: str) -> None:
    first = which == "ln1"
    source = v.hook("hook_resid_pre" if first else "hook_resid_mid")
    normed, p = v.hook(f"{which}.hook_normalized"), v.model.params
    name = ("h⁰" if v.layer == 0 else f"h{layer_mark(v.layer)}") if first else "h_mid"
    label = "LN₁" if first else "LN₂"
    mean, std = row_moments(source)
    gamma, beta = p[f"{v.block}.{which}.gamma"], p[f"{v.block}.{which}.beta"]
    _did(f"Rescaled each row of {name} to mean 0 and spread 1, then applied {label}'s learned γ and β (layer {v.n}).")
    _grid(
        [
            _panel(source, f"{name} (input)", v.rows, v.cols, f"tr-{which}-in"),
            _panel(normed, f"{label}({name})", v.rows, v.cols, f"tr-{which}-out"),
            _panel(np.stack([gamma, beta]), f"{label} γ (scale) and β (shift)", ["γ", "β"], v.cols, f"tr-{which}-gb"),
        ]
    )
    explain(
        f"Before the norm the rows' means ran from {mean.min():.3f} to {mean.max():.3f} and their spreads from "
        f"{std.min():.3f} to {std.max():.3f}; after it every row is centred and scaled alike, then stretched per "
        f"column by γ (from {gamma.min():.3f} to {gamma.max():.3f}) and shifted by β.",
        f"A {link('layernorm')} keeps each block's input on a steady scale whatever earlier blocks wrote (spreads "
        f"of {std.min():.3f} and {std.max():.3f} both become 1 before γ); it works row by row and never mixes tokens.",
    )


def _step_qkv(v: View) -> None:
    c, T = v.model.config, len(v.tokens)
    hcols = _head_columns(c.n_heads, c.d_head)
    width = c.n_heads * c.d_head
    _did(f"One multiply each: LN₁(h) ({T} × {c.d_model}) times W_Q, W_K, W_V ({c.d_model} × {width}) plus a bias.")
    for name in ("q", "k", "v"):
        _matrix(
            all_heads(v.trace, v.layer, name),
            title=f"{name.upper()}, all heads",
            rows=v.rows,
            columns=hcols,
            key=f"tr-{name}",
            alt=f"{name.upper()}, all heads",
            column_breaks=v.breaks,
        )
    r, col, value = largest_entry(all_heads(v.trace, v.layer, "q"))
    explain(
        f"Columns 1–{c.d_head} of each matrix belong to head 1, the rest to head 2 (the thick line). The largest "
        f"query entry is {value:.3f}, for {v.tokens[r]} in head {col // c.d_head + 1}.",
        f"{link('multi-head')} is one matrix multiply carved into lanes: {c.n_heads} questions asked in parallel "
        f"for the price of one {c.d_model} × {c.n_heads * c.d_head} product.",
    )


def _step_heads(v: View) -> None:
    c, T = v.model.config, len(v.tokens)
    _did(f"Sliced Q, K and V into {c.n_heads} lanes of {T} × {c.d_head}; each lane now runs attention on its own.")
    blocks = {name: head_blocks(v.trace, v.layer, name) for name in ("q", "k", "v")}
    for head in range(c.n_heads):
        st.markdown(f"**Head {head + 1}**")
        panels = [
            _panel(blocks[name][head], f"{name.upper()}{head + 1}", v.rows, _columns(c.d_head, "d"), f"tr-{name}{head}")
            for name in ("q", "k", "v")
        ]
        _grid(panels, per_row=3)
    explain(
        f"Each head has its own {T} × {c.d_head} query, key and value: the per-head blocks of the shape table, cut "
        "from the matrices of the previous row.",
        f"Separate lanes of {c.d_head} numbers let the {c.n_heads} heads specialise: one may track the previous word, "
        "another the subject noun.",
    )


def _step_attention(v: View, which: str) -> None:
    c, last = v.model.config, v.tokens[-1]
    pattern = v.hook("attn.hook_pattern")
    if which == "scores":
        pair = (
            (v.hook("attn.hook_attn_scores_raw"), "QKᵀ (raw)", True),
            (v.hook("attn.hook_attn_scores"), "QKᵀ / √d_k", True),
        )
        _did(f"Compared every query with every key: QKᵀ per head, divided by √d_k = {math.sqrt(c.d_head):.3f}.")
    else:
        pair = ((v.hook("attn.hook_attn_scores_masked"), "masked scores", True), (pattern, "weights", False))
        _did("Blocked the future (−∞ above the diagonal), then softmax turned each row into weights that sum to 1.")
    for head in range(c.n_heads):
        st.markdown(f"**Head {head + 1}**")
        _grid(
            [
                _panel(
                    values[head], f"{title}, head {head + 1}", v.rows, v.rows, f"tr-{which}-{i}-{head}", signed=signed
                )
                for i, (values, title, signed) in enumerate(pair)
            ]
        )
    shown = v.hook("attn.hook_attn_scores") if which == "scores" else pattern
    focus = [int(np.argmax(shown[h, -1])) for h in range(c.n_heads)]
    reads = " and ".join(f"{v.tokens[k]} in head {h + 1} ({shown[h, -1, k]:.3f})" for h, k in enumerate(focus))
    explain(
        f"Rows are queries (the reading word), columns keys (the word read). The last token, {last}, gives its "
        f"largest {'scaled score' if which == 'scores' else 'weight'} to {reads}.",
        f"This is where the model decides, from the words themselves and at run time, which earlier word each word "
        f"reads; the {link('causal-mask')} blocks {len(v.tokens) * (len(v.tokens) - 1) // 2} of the "
        f"{len(v.tokens) ** 2} cells so no word peeks at the future.",
    )


def _step_z(v: View) -> None:
    c, T = v.model.config, len(v.tokens)
    z = head_blocks(v.trace, v.layer, "z")
    _did(f"Each head took a weighted average of its value rows: weights ({T} × {T}) · V ({T} × {c.d_head}).")
    _grid([_panel(z[h], f"head {h + 1} output", v.rows, _columns(c.d_head, "d"), f"tr-z{h}") for h in range(c.n_heads)])
    lengths = " and ".join(f"{row_norms(z[h])[-1]:.3f} in head {h + 1}" for h in range(c.n_heads))
    explain(
        f"Each head's output for a token is a mix of the value rows it attended to; {v.tokens[-1]}'s row has length "
        f"{lengths}.",
        f"These {c.n_heads} × {c.d_head} numbers per token are the information that actually moves between words; "
        "the weights only decided the mix.",
    )


def _step_concat(v: View) -> None:
    c, T = v.model.config, len(v.tokens)
    width = c.n_heads * c.d_head
    _did(f"Glued the {c.n_heads} head outputs side by side: {T} × {width}.")
    _matrix(
        v.hook("attn.hook_concat"),
        title="concat",
        rows=v.rows,
        columns=_head_columns(c.n_heads, c.d_head),
        key="tr-concat",
        alt="concat",
        column_breaks=v.breaks,
    )
    explain(
        f"The same numbers as the head outputs, placed side by side; the thick line separates the heads. The width is "
        f"back to h · d_v = {width}.",
        f"Nothing is computed here: it is bookkeeping that lets one {width} × {c.d_model} matrix write all "
        f"{c.n_heads} heads back at once.",
    )


def _step_attn_out(v: View) -> None:
    c = v.model.config
    W_O, out = v.model.params[f"{v.block}.attn.W_O"], v.hook("hook_attn_out")
    _did(
        f"Mixed the heads and mapped them back to the stream's width: concat · W_O "
        f"({W_O.shape[0]} × {W_O.shape[1]}) + b_O."
    )
    _grid(
        [
            _panel(W_O, "W_O", _head_columns(c.n_heads, c.d_head), v.cols, "tr-WO", row_breaks=v.breaks),
            _panel(out, "attn write-back", v.rows, v.cols, "tr-attn"),
        ]
    )
    r, col, value = largest_entry(out)
    explain(
        f"W_O's top {c.d_head} rows read head 1, the bottom ones head 2 (the thick line). The largest write is "
        f"{value:.3f}, into column {col + 1} of {v.tokens[r]}.",
        f"Each head owns {c.d_head} rows of W_O (see {link('projections')}); zeroing one head's {c.d_head} rows is "
        "how the ablation lab switches a single head off.",
    )


def _step_add(v: View, which: str) -> None:
    T, d = len(v.tokens), v.model.config.d_model
    if which == "resid_mid":
        parts = (
            (v.hook("hook_resid_pre"), "h"),
            (v.hook("hook_attn_out"), "attn"),
            (v.hook("hook_resid_mid"), "h_mid"),
        )
    else:
        parts = (
            (v.hook("hook_resid_mid"), "h_mid"),
            (v.hook("hook_mlp_out"), "MLP"),
            (v.hook("hook_resid_post"), f"h{layer_mark(v.n)}"),
        )
    (before, x), (write, w), (after, y) = parts
    _did(f"Added the {w} write-back to the stream: {y} = {x} + {w}, still {T} × {d}.")
    _grid([_panel(values, title, v.rows, v.cols, f"tr-{which}-{i}") for i, (values, title) in enumerate(parts)])
    moved = ", ".join(f"{t} {m:.3f}" for t, m in zip(v.tokens, row_norms(write), strict=True))
    explain(
        f"The write-back moved each token's vector by {moved}; {v.tokens[-1]}'s vector went from length "
        f"{row_norms(before)[-1]:.3f} to {row_norms(after)[-1]:.3f}.",
        f"The {link('residual-stream')} is never replaced, only added to: the {row_norms(write)[-1]:.3f} this block "
        f"wrote into '{v.tokens[-1]}' stays visible to every later block.",
    )


def _step_mlp(v: View, which: str) -> None:
    c = v.model.config
    pre, post = v.hook("mlp.hook_pre"), v.hook("mlp.hook_post")
    ff = _columns(c.d_ff, "n")
    panels = {
        "mlp_pre": ((v.hook("ln2.hook_normalized"), "LN₂(h_mid)", v.cols), (pre, "pre = LN₂ · W_1 + b_1", ff)),
        "mlp_post": ((pre, "pre", ff), (post, "act = GELU(pre)", ff)),
        "mlp_out": ((post, "act = GELU(pre)", ff), (v.hook("hook_mlp_out"), "MLP out = act · W_2 + b_2", v.cols)),
    }[which]
    _did(
        {
            "mlp_pre": f"Widened each token's row from {c.d_model} to {c.d_ff} numbers with W_1 "
            f"({c.d_model} × {c.d_ff}).",
            "mlp_post": "Applied GELU to every entry: large positives pass, negatives are squashed towards 0.",
            "mlp_out": f"Narrowed each row back from {c.d_ff} to {c.d_model} numbers with W_2 "
            f"({c.d_ff} × {c.d_model}).",
        }[which]
    )
    _grid(
        [_panel(values, title, v.rows, labels, f"tr-{which}-{i}") for i, (values, title, labels) in enumerate(panels)],
        proportional=True,
    )
    lowest = np.unravel_index(int(np.argmin(pre)), pre.shape)
    explain(
        f"The width goes {c.d_model} → {c.d_ff} → {c.d_model} inside the block: {int((pre < 0).sum())} of the "
        f"{pre.size} pre-activation entries are negative, and GELU maps the most negative, {pre[lowest]:.3f}, to "
        f"{post[lowest] + 0.0:.3f}" + (", a tiny negative number." if post[lowest] < 0 else "."),
        f"The {link('mlp')} refines each of the {len(v.tokens)} tokens on its own, row by row, and never looks at "
        "other tokens. GELU is the block's only element-wise non-linearity (softmax and LayerNorm bend too, but act "
        "on whole rows): it is what lets the MLP do more than a matrix multiply.",
    )


def _step_final(v: View) -> None:
    c, T = v.model.config, len(v.tokens)
    h0, h2 = v.trace["blocks.0.hook_resid_pre"], v.trace[f"blocks.{c.n_layers - 1}.hook_resid_post"]
    _did(f"Nothing new: after {c.n_layers} layers the stream is still {T} × {c.d_model}, the shape it started with.")
    _grid(
        [
            _panel(h0, "h⁰ (start)", v.rows, v.cols, "tr-final-h0"),
            _panel(h2, f"h{layer_mark(c.n_layers)} (end)", v.rows, v.cols, "tr-final-h2"),
        ]
    )
    explain(
        f"Same shape, new contents: {v.tokens[-1]}'s vector went from length {row_norms(h0)[-1]:.3f} to "
        f"{row_norms(h2)[-1]:.3f} after {c.n_layers} rounds of read, transform, write.",
        f"Layers stack without changing shape ({len(v.tokens)} × {c.d_model} in, {len(v.tokens)} × {c.d_model} out), "
        "which is why real models can repeat the same block dozens of times.",
    )


def _step_final_ln(v: View) -> None:
    p, c = v.model.params, v.model.config
    h2, normed = v.trace[f"blocks.{c.n_layers - 1}.hook_resid_post"], v.trace["ln_final.hook_normalized"]
    mean, std = row_moments(h2[-1:])
    gamma = p["ln_final.gamma"]
    _did(
        f"Normalised the last row of h{layer_mark(c.n_layers)}, multiplied it by the learned scale γ and added the "
        "learned shift β."
    )
    lines = np.stack([h2[-1], gamma, p["ln_final.beta"], normed[-1]])
    labels = ["h²_last", "γ", "β", "LN(h²)_last"]
    _matrix(
        lines,
        title=f"final LayerNorm of the last row ({v.tokens[-1]})",
        rows=labels,
        columns=v.cols,
        key="tr-finalln",
        alt="final LayerNorm, last row",
    )
    _matrix(
        normed,
        title="final LayerNorm, every row",
        rows=v.rows,
        columns=v.cols,
        key="tr-finalln-all",
        alt="final LayerNorm",
    )
    explain(
        f"The last row had mean {mean[0]:.3f} and spread {std[0]:.3f}; after the norm and γ (from {gamma.min():.3f} to "
        f"{gamma.max():.3f}) its entries span {np.ptp(normed[-1]):.3f}.",
        f"This step sets the scale of the logits: with γ up to {gamma.max():.3f} the top logit reaches "
        f"{v.trace['hook_logits'][-1].max():.2f}; a larger γ means sharper, more confident predictions.",
    )


def _step_logits(v: View) -> None:
    c, vocab = v.model.config, list(v.model.vocabulary)
    logits = v.trace["hook_logits"][-1]
    _did(f"Multiplied the normalised last row by U = Eᵀ ({c.d_model} × {c.vocab_size}): one score per token.")
    ranked = top_k(logits, vocab, len(vocab))
    fig = bars(
        vocab,
        logits,
        title=f"logits after '{_fmt(v.tokens)}'  (shape [{len(vocab)}])",
        highlight=[t == ranked[0].token for t in vocab],
        value_format=".2f",
        height=360,
    )
    chart(fig, key="tr-logits", alt="Logits over the vocabulary")
    download_matrix(logits[None], ["logit"], vocab, name="logits", key="tr-logits")
    explain(
        f"The highest score is {ranked[0].token} ({ranked[0].logit:.2f}), the lowest {ranked[-1].token} "
        f"({ranked[-1].logit:.2f}). Scores are unnormalised: only their differences matter.",
        f"The {link('unembedding')} reuses the embedding table E, so {ranked[0].token} scores high because the final "
        f"vector points the way its embedding points; a gap of {ranked[0].logit - ranked[1].logit:.2f} over "
        f"{ranked[1].token} becomes a probability ratio of about {math.exp(ranked[0].logit - ranked[1].logit):,.0f}.",
    )


def _step_probs(v: View) -> None:
    vocab = list(v.model.vocabulary)
    logits = v.trace["hook_logits"][-1]
    tau = st.slider(
        "Temperature τ",
        *TAU_RANGE,
        1.0,
        0.1,
        key="trace_tau",
        bind="query-params",
        persist_state="session",
        help=tip("softmax"),
    )
    probs, table = softmax(logits, temperature=tau), top_k(logits, vocab, 5, tau)
    _did(f"softmax(logits / τ) with τ = {tau:.1f}: {len(vocab)} probabilities that sum to 1.")
    fig = bars(
        vocab,
        probs,
        title=f"next-token probabilities over all {len(vocab)} tokens, τ = {tau:.1f}  (shape [{len(vocab)}])",
        highlight=[t == table[0].token for t in vocab],
        y_range=(0, 1.1),
        height=360,
    )
    chart(fig, key="tr-probs", alt="Next-token probabilities")
    download_matrix(probs[None], ["probability"], vocab, name="probabilities", key="tr-probs")
    st.markdown("**Top 5**")
    top_table(table, key="tr-top5")
    explain(
        f"After '{_fmt(v.tokens)}' the model puts {table[0].probability:.3f} on {table[0].token}, then "
        f"{table[1].probability:.3f} on {table[1].token} (τ = {tau:.1f}).",
        f"Temperature is the dial vendors expose: at τ = 1 the favourite would get "
        f"{v.trace['hook_probs'][-1].max():.3f}; below 1 it takes even more, above 1 the runners-up get a bigger share "
        "and outputs become more varied.",
    )


def _table(frame: pd.DataFrame, *, key: str, name: str, height: int | None = None) -> None:
    """A table with its CSV download; probabilities and masses at 3 decimals, logits at 2, as the primer prints."""
    config = {
        column: st.column_config.NumberColumn(format="%.2f" if "logit" in column else "%.3f")
        for column in frame.columns
        if frame[column].dtype.kind == "f"
    }
    st.dataframe(frame, hide_index=True, key=key, column_config=config, height=height or "auto")
    download_table(frame, name=name, key=key)


def top_table(rows: list, key: str) -> None:
    """A top-k table (rank, token, logit, probability) with its CSV download."""
    frame = pd.DataFrame(
        [
            {"rank": r.rank, "token": r.token, "logit": round(r.logit, 2), "probability": round(r.probability, 3)}
            for r in rows
        ]
    )
    _table(frame, key=key, name="top 5")


# The primer's formula for each row of the shape table (row-vector convention, x · W).
FORMULAS = {
    "ids": r"\text{ids} = (\text{id}(t_1), \dots, \text{id}(t_T)),\quad E[\text{ids}] \in \mathbb{R}^{T \times d}",
    "h0": r"h^{(0)} = E[\text{ids}] + PE,\; PE_{p,2i} = \sin(p\,\omega_i),\;"
    r"PE_{p,2i+1} = \cos(p\,\omega_i),\; \omega_i = 10000^{-2i/d}",
    "ln1": r"\mathrm{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta\;\text{(per row)}",
    "qkv": r"Q = \mathrm{LN}_1(h)\,W_Q + b_Q \quad \text{(likewise } K \text{ with } W_K, b_K \text{ and } V"
    r"\text{ with } W_V, b_V)",
    "heads": r"Q = [\,Q^{(1)} \mid Q^{(2)}\,],\quad Q^{(j)} \in \mathbb{R}^{T \times d_k}\ \text{(so are } K, V)",
    "scores": r"S^{(j)} = \frac{Q^{(j)} K^{(j)\top}}{\sqrt{d_k}}",
    "weights": r"A^{(j)} = \mathrm{softmax}\big(S^{(j)} + M\big),\quad M_{qk} = -\infty \text{ for } k > q",
    "z": r"z^{(j)} = A^{(j)}\, V^{(j)}",
    "concat": r"\text{concat} = [\, z^{(1)} \mid z^{(2)} \,] \in \mathbb{R}^{T \times h d_v}",
    "attn_out": r"\text{attn} = \text{concat}\; W_O + b_O",
    "resid_mid": r"h_{mid} = h + \text{attn}",
    "ln2": r"\mathrm{LN}_2(h_{mid}) = \gamma_2 \odot \frac{h_{mid} - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta_2",
    "mlp_pre": r"\text{pre} = \mathrm{LN}_2(h_{mid})\, W_1 + b_1",
    "mlp_post": r"\text{act} = \mathrm{GELU}(\text{pre}) = \text{pre} \cdot \Phi(\text{pre})",
    "mlp_out": r"\text{mlp} = \text{act}\; W_2 + b_2",
    "resid_post": r"h^{(\ell)} = h_{mid} + \text{mlp}",
    "final": r"h^{(L)} \in \mathbb{R}^{T \times d_{model}},\quad L = 2",
    "final_ln": r"\mathrm{LN}(h^{(2)}_T) = \gamma \odot \frac{h^{(2)}_T - \mu}{\sigma} + \beta",
    "logits": r"\ell = \mathrm{LN}(h^{(2)}_T)\; U,\qquad U = E^\top",
    "probs": r"p_i = \frac{\exp(\ell_i / \tau)}{\sum_j \exp(\ell_j / \tau)}",
}


STEP_VIEWS = {
    "ids": _step_ids,
    "h0": _step_h0,
    "ln1": lambda v: _step_norm(v, "ln1"),
    "qkv": _step_qkv,
    "heads": _step_heads,
    "scores": lambda v: _step_attention(v, "scores"),
    "weights": lambda v: _step_attention(v, "weights"),
    "z": _step_z,
    "concat": _step_concat,
    "attn_out": _step_attn_out,
    "resid_mid": lambda v: _step_add(v, "resid_mid"),
    "ln2": lambda v: _step_norm(v, "ln2"),
    "mlp_pre": lambda v: _step_mlp(v, "mlp_pre"),
    "mlp_post": lambda v: _step_mlp(v, "mlp_post"),
    "mlp_out": lambda v: _step_mlp(v, "mlp_out"),
    "resid_post": lambda v: _step_add(v, "resid_post"),
    "final": _step_final,
    "final_ln": _step_final_ln,
    "logits": _step_logits,
    "probs": _step_probs,
}


NBSP = "\u00a0"


def step_label(row: ShapeRow) -> str:
    """A shape-table row as its radio option: the step, then in grey its operation and its live shape in bold (kept
    on one line). One markdown text per option: a caption under each would be a second one for the browser to draw
    on every click."""
    return f"{row.step} :gray[· {row.operation} · **{row.live.replace(' ', NBSP)}**]"


_SLOTS: ContextVar[Iterator[int] | None] = ContextVar("trace_chart_slots", default=None)


@contextmanager
def chart_slots() -> Iterator[None]:
    """Inside, the matrices take the keys tr-step-0, tr-step-1, … in drawing order instead of their own: picking
    another step hands the charts already on screen the new step's figures (Plotly.react) instead of removing them
    and building new plots."""
    token = _SLOTS.set(itertools.count())
    try:
        yield
    finally:
        _SLOTS.reset(token)


def _slot() -> str | None:
    """The next chart slot's key inside `chart_slots`, else None (the matrix keeps its own key)."""
    slots = _SLOTS.get()
    return None if slots is None else f"tr-step-{next(slots)}"


@st.fragment
def step_by_step(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """The §6 shape table with the live T as a clickable list, and the selected row's matrices beside it (a fragment:
    picking a row or a layer reruns only this part)."""
    config = model.config
    layer_names = [f"Layer {i + 1}" for i in range(config.n_layers)]
    left, right = st.container(key="answer-first").columns([1, 3])  # on a phone: the matrix above the step list
    with left:
        layer_name = st.segmented_control(
            "Layer",
            layer_names,
            default=layer_names[0],
            key="trace_layer",
            bind="query-params",
            persist_state="session",
            required=True,
        )
        layer = layer_names.index(layer_name or layer_names[0])
        table = shape_table(config, len(tokens), layer)
        by_key = {row.key: row for row in table}
        step_from_link(table)
        step = st.radio(
            f"The shape table, T = {len(tokens)}: pick a row",
            [row.key for row in table],
            format_func=lambda k: step_label(by_key[k]),
            key=STEP,
            persist_state="session",
        )
        step_into_link(by_key[step], table[0])
        columns = ("step", "operation", "shape", f"T = {len(tokens)}")
        rows = [(r.step, r.operation, r.symbolic, r.live) for r in table]
        download_rows(rows, columns, name="shape table", key="tr-shapes")
    with right:
        row = by_key[step]
        where = f" · layer {layer + 1}" if row.layered else ""
        st.markdown(f"#### {row.step}{where}: {row.operation}, shape {row.live}\n\n$$\n{FORMULAS[step]}\n$$")
        with chart_slots():
            STEP_VIEWS[step](View(model, trace, tokens, layer))


def four_heads(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """The attention weights of all four heads side by side for the current prompt."""
    config, rows = model.config, _rows(tokens)
    labels = head_labels(config)
    patterns = [
        trace[f"blocks.{la}.attn.hook_pattern"][he] for la in range(config.n_layers) for he in range(config.n_heads)
    ]
    _grid(
        [
            _panel(pattern, labels[i], rows, rows, f"tr-4h-{i}", signed=False, alt=f"Attention weights, {labels[i]}")
            for i, pattern in enumerate(patterns)
        ],
        per_row=2,
    )
    last = query_attention(trace, config.n_layers)
    focus = np.argmax(last, axis=1)
    explain(
        f"Rows are the reading word, columns the word read; each row sums to 1. The last word, {tokens[-1]}, reads "
        + "; ".join(f"{labels[i]}: {tokens[k]} {last[i, k]:.3f}" for i, k in enumerate(focus))
        + ".",
        f"{len(labels)} heads, {len(labels)} reading patterns on the same words. A bright cell (the brightest here is "
        f"{last.max():.3f}) shows where a head looks, not that the answer depends on it: the ablation lab tests that.",
    )


def residual_spine(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """The residual stream stage by stage (norms and a shared 2-D projection) and the logit lens."""
    config = model.config
    stages = [label for label, _ in residual_stages(trace, config.n_layers)]
    norms = stage_norms(trace, config.n_layers)
    names = _rows(tokens)
    a, b = st.columns(2)
    with a:
        chart(
            line_chart(
                stages,
                {name: norms[:, i] for i, name in enumerate(names)},
                title="length of each token's vector, stage by stage",
                y_title="length",
            ),
            key="tr-norms",
            alt="Residual norms per stage",
        )
        download_matrix(norms, stages, names, name="residual lengths", key="tr-norms")
    with b:
        coords, share = stage_projection(trace, config.n_layers)
        chart(
            trajectories(
                {name: coords[:, i] for i, name in enumerate(names)},
                stages,
                title="each token's path through the stream (2-D view)",
                x_title=f"axis 1 ({share[0]:.0%} of the spread)",
                y_title=f"axis 2 ({share[1]:.0%})",
            ),
            key="tr-paths",
            alt="Residual stream paths",
        )
        download_matrix(
            coords.reshape(len(stages), -1),
            stages,
            [f"{n} {ax}" for n in names for ax in ("x", "y")],
            name="2-D coordinates",
            key="tr-paths",
        )
    grow = norms[-1] - norms[0]
    explain(
        f"Each token starts at h⁰ and every block adds a correction. {tokens[-1]}'s vector has length "
        f"{norms[0, -1]:.3f} at the start and {norms[-1, -1]:.3f} at the end; the token whose length changes most "
        f"over the pass is '{tokens[int(np.argmax(np.abs(grow)))]}'. The 2-D view keeps {share.sum():.0%} of the "
        "spread; a circle marks the start, a triangle the end.",
        f"The {link('residual-stream')} is the spine of the model: all the 'thinking' is {len(stages) - 1} additions "
        "to these vectors, so watching them move shows where the work happens.",
    )
    lens_labels, lens = lens_probabilities(model, trace)
    vocab = list(model.vocabulary)
    _matrix(
        lens,
        title=f"logit lens: what the model would predict after '{_fmt(tokens)}' if it stopped here",
        rows=lens_labels,
        columns=vocab,
        key="tr-lens",
        alt="Logit lens",
        signed=False,
    )
    best = np.argmax(lens, axis=1)
    explain(
        "Reading the last token's vector through the final LayerNorm and Eᵀ after each block: "
        + "; ".join(
            f"{label} → {vocab[k]} {lens[i, k]:.3f}" for i, (label, k) in enumerate(zip(lens_labels, best, strict=True))
        )
        + ".",
        f"The logit lens shows when the answer forms inside the model: '{vocab[best[-1]]}' is first the top "
        f"prediction at '{next(label for label, k in zip(lens_labels, best, strict=True) if k == best[-1])}'; the "
        "last line is the model's real output.",
    )


def copula_view(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """§6's copula probe side by side (cat is / mat is / dog was / floor was) and all 16 copula types."""
    vocab = list(model.vocabulary)
    probes = [_probe(prompt) for prompt in COPULA_PROBES]
    adjectives = [word for pair in (probes[0].adjectives, probes[1].adjectives) for word in pair]
    labels = [f"{_fmt(p.prompt[1:])} …<br>class mass {p.class_mass:.3f}" for p in probes]
    series = [(word, [float(p.probs[vocab.index(word)]) for p in probes]) for word in adjectives]
    fig = grouped_bars(
        labels, series, title="next-word probability of each adjective", value_format=".3f", y_range=(0, 1.15)
    )
    chart(fig, key="tr-cop", alt="Probability of big, small, red and blue after four copula prompts")
    download_matrix(
        np.stack([p.probs for p in probes]), [_fmt(p.prompt) for p in probes], vocab, name="distributions", key="tr-cop"
    )
    explain(
        "After a copula the next word must be an adjective of the subject's class: "
        + "; ".join(
            f"'{_fmt(p.prompt[1:])}' puts {p.class_mass:.3f} on {' + '.join(p.adjectives)} "
            f"({'an' if p.subject_class[0] in 'aeiou' else 'a'} {p.subject_class})"
            for p in probes
        )
        + ".",
        "The deciding word is the noun one place back, never the copula itself: only attention can carry it there. "
        f"Swapping cat for mat moves the favourite from {probes[0].top[0].token} to {probes[1].top[0].token}, the "
        "primer's evidence that the model uses context.",
    )
    rows = _copula_rows()
    frame = pd.DataFrame(
        {
            "sentence type": [r.sentence for r in rows],
            "held out of training": ["held out" if r.held_out else "" for r in rows],
            "top prediction after is/was": [r.top for r in rows],
            "its probability": [round(r.top_probability, 3) for r in rows],
            "right class": ["yes" if r.right_class else "NO" for r in rows],
            "class-adjective mass": [round(r.class_mass, 3) for r in rows],
        }
    )
    st.markdown(f"**All {len(rows)} copula sentence types of the world**")
    _table(frame, key="tr-cop-table", name="copula types", height=36 * (len(frame) + 1) + 4)
    held = [r for r in rows if r.held_out]
    masses = [r.class_mass for r in rows]
    explain(
        f"The model answers inside the right class on {sum(r.right_class for r in rows)} of {len(rows)} types, "
        f"{sum(r.right_class for r in held)} of the {len(held)} held out of training included, with a class mass "
        f"between {min(masses):.3f} and {max(masses):.3f}. Two types that differ only in the final adjective share "
        "one row of numbers: the model sees the same prefix.",
        f"Held-out sentences are the test of a rule rather than a memory: the model never saw these {len(held)} and "
        f"still answers {sum(r.right_class for r in held)} of them by the class of the noun.",
    )


def training_view(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """The training log (loss, rule accuracy) with the moment the copula rule appears, and the corpus."""
    log = _training_log()
    steps = log["step"]
    first, stays = rule_emergence(steps, log["rule_accuracy_held_out"])
    marker = (first, f"copula rule first right on all held-out types (step {first})") if first is not None else None
    a, b = st.columns(2)
    with a:
        fig = line_chart(
            steps,
            {"training loss": log["loss"]},
            title="training loss (cross-entropy)",
            x_title="step",
            y_title="loss",
            marker=marker,
        )
        chart(fig, key="tr-loss", alt="Training loss over steps")
    with b:
        series = {
            "rule accuracy (held-out copula types)": log["rule_accuracy_held_out"],
            "right class, all copula slots": log["copula_class_accuracy"],
            "top-1, bigram slots": log["bigram_top1"],
        }
        fig = line_chart(
            steps,
            series,
            title="what the model gets right",
            x_title="step",
            y_title="share",
            marker=marker,
            marker_low=True,
            y_range=(-0.05, 1.1),
        )
        chart(fig, key="tr-acc", alt="Accuracies over steps")
    download_table(pd.DataFrame(log).drop(columns="seed", errors="ignore"), name="training log", key="tr-log")
    meta = model.metadata
    held_copula = sum(r.held_out for r in _copula_rows())
    explain(
        f"Training ran {steps[-1]} steps (seed {meta.get('seed')}, {meta.get('training_seconds')} s on a CPU). "
        f"The loss fell from {log['loss'][0]:.3f} to {log['loss'][-1]:.3f}; the held-out rule accuracy first "
        f"reached 1 at step {first}"
        + (f" and has stayed there since step {stays}." if stays is not None else ".")
        + f" It moves in steps of 1/{held_copula}: {held_copula} held-out types carry a copula.",
        "The loss cannot fall to 0 because the world itself leaves choices open (after 'the cat is', big and small "
        "are both right). A single end-of-training score hides this history: the rule was learnt, could wobble, and "
        "settled; a second training run would tell the same story with different details.",
    )
    kinds = sentence_types()
    frame = pd.DataFrame(
        {
            "type": [k.index + 1 for k in kinds],
            "sentence type": [k.text for k in kinds],
            "held out of training": ["held out" if k.held_out else "" for k in kinds],
            "family": [k.family for k in kinds],
        }
    )
    st.markdown(f"**The corpus: {len(kinds)} sentence types, {sum(k.held_out for k in kinds)} held out of training**")
    _table(frame, key="tr-corpus", name="corpus", height=400)


def primer_vs_ours(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """The primer's printed §6 numbers (from assets/primer_section6.json) next to the same numbers for our model."""
    primer = primer_section6()
    vocab, labels = list(model.vocabulary), head_labels(model.config)
    st.caption(f"Primer figures: {primer.source} {primer.note}")
    prompt = tuple(primer.readout["prompt"])
    ours_trace = cached_trace(prompt)
    ours = top_k(ours_trace["hook_logits"][-1], vocab, 5)
    theirs = primer.readout["top5"]
    p_ours = float(ours_trace["hook_probs"][-1][vocab.index("on")])
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(f"P(on | {_fmt(prompt[1:])}), primer", f"{primer.readout['p_on']:.3f}")
    m2.metric(f"P(on | {_fmt(prompt[1:])}), ours", f"{p_ours:.3f}")
    rows = _copula_rows()
    share = sum(r.right_class for r in rows) / len(rows)
    m3.metric("copula in class, primer", f"{primer.copula_probe['all_types']['right_class_share']:.0%}")
    m4.metric("copula in class, ours", f"{share:.0%}")
    st.markdown(f"**Top 5 after '{_fmt(prompt)}'**")
    frame = pd.DataFrame(
        {
            "rank": [r["rank"] for r in theirs],
            "primer: token": [r["token"] for r in theirs],
            "primer: probability": [r["probability"] for r in theirs],
            "primer: logit": [r["logit"] for r in theirs],
            "ours: token": [r.token for r in ours],
            "ours: probability": [round(r.probability, 3) for r in ours],
            "ours: logit": [round(r.logit, 2) for r in ours],
        }
    )
    _table(frame, key="tr-pvo-top5", name="top 5, primer vs ours")
    st.markdown("**The copula probe: the three most likely next words**")
    probe_rows = []
    for row in primer.copula_probe["prompts"]:
        mine = _probe(tuple(row["prompt"]))
        probe_rows.append(
            {
                "prompt": _fmt(row["prompt"]),
                "primer's model": ", ".join(f"{t['token']} {t['probability']:.3f}" for t in row["top3"]),
                "our model": ", ".join(f"{t.token} {t.probability:.3f}" for t in mine.top),
            }
        )
    probes = pd.DataFrame(probe_rows)
    _table(probes, key="tr-pvo-probe", name="copula probe, primer vs ours")
    attention_prompt = tuple(primer.copula_query_attention["prompt"])
    ours_att = query_attention(cached_trace(attention_prompt), model.config.n_layers)
    keys = list(primer.copula_query_attention["keys"])
    subject = keys.index("cat")
    st.markdown(f"**Where the query 'is' looks in '{_fmt(attention_prompt)}', head by head**")
    _grid(
        [
            _panel(primer.query_attention, "primer's model", labels, keys, "tr-pvo-att-primer", signed=False),
            _panel(ours_att, "our model", labels, keys, "tr-pvo-att-ours", signed=False),
        ]
    )
    theirs_top, ours_top = (int(np.argmax(matrix[:, subject])) for matrix in (primer.query_attention, ours_att))
    printed = primer.layer1_patterns
    pattern_prompt = tuple(printed["prompt"])
    ours_layer1 = cached_trace(pattern_prompt)["blocks.0.attn.hook_pattern"]
    st.markdown(f"**Layer 1's attention weights on '{_fmt(pattern_prompt)}' (primer §6, Step 3)**")
    names = _rows(pattern_prompt)
    _grid(
        [
            _panel(
                matrix, f"{who}, layer 1, head {row['head']}", names, names, f"tr-pvo-l1-{who[:3]}-{i}", signed=False
            )
            for i, row in enumerate(printed["heads"])
            for who, matrix in (("primer's model", np.array(row["weights"])), ("our model", ours_layer1[i]))
        ]
    )
    slip_box([s for s in section6_slips() if s.section.endswith("Step 3")], key="tr-slips-step3")
    gamma = model.params["ln_final.gamma"]
    step8_readout(model, primer, ours_trace, prompt)
    masses = [r.class_mass for r in rows]
    printed_mass = primer.copula_probe["all_types"]
    c1, c2 = st.columns(2)
    c1.metric(
        "class-adjective mass on all copula types, primer",
        f"{printed_mass['class_mass_min']:.2f}–{printed_mass['class_mass_max']:.2f}",
    )
    c2.metric("class-adjective mass on all copula types, ours", f"{min(masses):.2f}–{max(masses):.2f}")
    explain(
        f"Same behaviour: both models put almost everything on 'on' after '{_fmt(prompt)}' (primer "
        f"{primer.readout['p_on']:.3f}, ours {p_ours:.3f}) and answer "
        f"{primer.copula_probe['all_types']['right_class_share']:.0%} and {share:.0%} of the copula types inside the "
        "subject's class. "
        f"Different internals: the query 'is' reads 'cat' most in {labels[theirs_top]} "
        f"({primer.query_attention[theirs_top, subject]:.3f}) in the primer's model and in "
        f"{labels[ours_top]} ({ours_att[ours_top, subject]:.3f}) in ours; our top logit is {ours[0].logit:.2f} against "
        f"the primer's {theirs[0]['logit']:.2f}, and our final γ runs "
        f"{gamma.min():.3f}–{gamma.max():.3f}, the primer's {min(primer.final_layernorm['gamma']):.3f}–"
        f"{max(primer.final_layernorm['gamma']):.3f}. In layer 1, '{pattern_prompt[-1]}' reads "
        + " and ".join(
            f"'{pattern_prompt[int(np.argmax(np.array(row['weights'])[-1]))]}' most in the primer's head {row['head']} "
            f"(ours: '{pattern_prompt[int(np.argmax(ours_layer1[i, -1]))]}')"
            for i, row in enumerate(printed["heads"])
        )
        + ".",
        "Two training runs of the same design on the same data learn the same behaviour but not the same internals: "
        "which head does which job, and every individual weight, are accidents of the run. Judge a model by what it "
        "does, and treat any one head's picture as one run's story.",
    )


def step8_readout(model: Model, primer: PrimerSection6, ours_trace: Trace, prompt: tuple[str, ...]) -> None:
    """§6 Step 8 beside ours: the final LayerNorm's four printed lines, then all 20 logits and probabilities."""
    c, vocab = model.config, list(model.vocabulary)
    printed = primer.final_layernorm
    h2 = ours_trace[f"blocks.{c.n_layers - 1}.hook_resid_post"][-1]
    normed = ours_trace["ln_final.hook_normalized"][-1]
    ours_lines = [h2, model.params["ln_final.gamma"], model.params["ln_final.beta"], normed]
    names = ("h²_last", "γ", "β", "LN(h²)_last")
    keys = ("h2_last", "gamma", "beta", "normalized_last")
    st.markdown(f"**Step 8: the final LayerNorm of the last row ({prompt[-1]})**")
    _matrix(
        np.stack([np.array(printed[k], dtype=np.float64) for k in keys] + ours_lines),
        title="primer's four printed lines, then ours",
        rows=[f"primer {n}" for n in names] + [f"ours {n}" for n in names],
        columns=_columns(c.d_model),
        key="tr-pvo-ln",
        alt="Final LayerNorm of the last row: h², γ, β and the output, primer vs ours",
    )
    (mean,), (std,) = row_moments(h2[None])
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("mean of h²_last, primer", f"{printed['mean_before']:.3f}")
    m2.metric("mean of h²_last, ours", f"{mean:.3f}")
    m3.metric("σ of h²_last, primer", f"{printed['std_before']:.3f}")
    m4.metric("σ of h²_last, ours", f"{std:.3f}")
    gamma = np.array(printed["gamma"], dtype=np.float64)
    ours_gamma = model.params["ln_final.gamma"]
    explain(
        f"Both last rows are reset to mean 0 and spread 1, then stretched by γ: the primer's row (mean "
        f"{printed['mean_before']:.3f}, σ {printed['std_before']:.3f}) with γ from {gamma.min():.3f} to "
        f"{gamma.max():.3f}, ours (mean {mean:.3f}, σ {std:.3f}) with γ from {ours_gamma.min():.3f} to "
        f"{ours_gamma.max():.3f}. The outputs span {np.ptp(printed['normalized_last']):.2f} and "
        f"{np.ptp(normed):.2f}.",
        "However large the running sum grows, this norm hands the read-out a vector of a learned size: γ, not the "
        "depth of the network, sets how confident the final prediction can be.",
    )
    slip_box([s for s in section6_slips() if s.section.endswith("Step 8")], key="tr-slips-step8")
    readout = primer.readout
    by_token = dict(zip(primer.vocabulary, zip(readout["logits"], readout["probs"], strict=True), strict=True))
    frame = pd.DataFrame(
        {
            "token": vocab,
            "primer: logit": [by_token[t][0] for t in vocab],
            "ours: logit": [round(float(v), 3) for v in ours_trace["hook_logits"][-1]],
            "primer: probability": [by_token[t][1] for t in vocab],
            "ours: probability": [round(float(v), 3) for v in ours_trace["hook_probs"][-1]],
        }
    )
    st.markdown(f"**All {len(vocab)} logits and probabilities after '{_fmt(prompt)}'**")
    config = {column: st.column_config.NumberColumn(format="%.3f") for column in frame.columns[1:]}
    st.dataframe(
        frame, hide_index=True, key="tr-pvo-all", column_config=config, row_height=35, height=35 * (len(frame) + 1) + 4
    )
    download_table(frame, name="logits and probabilities, primer vs ours", key="tr-pvo-all")


def headline(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """One line above the tabs: the prompt, the model's answer and the sizes."""
    winner = top_k(trace["hook_logits"][-1], model.vocabulary, 1)[0]
    st.markdown(
        f"**{_fmt(tokens)}** → next token **{winner.token}** with probability **{winner.probability:.3f}** · "
        f"T = {len(tokens)} tokens · {model.n_params} parameters"
    )


VIEWS = {
    "Step by step": step_by_step,
    "Four heads": four_heads,
    "Residual stream": residual_spine,
    "Copula probe": copula_view,
    "How the weights came to be": training_view,
    "Primer vs ours": primer_vs_ours,
}
