"""The two-layer trace's shape table, step by step (primer §6): each row's matrices, its formula and what it did,
drawn from one cached forward pass."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import streamlit as st

from core.explain.attention import softmax
from core.explain.trace_views import (
    ShapeRow,
    all_heads,
    column_travel,
    head_blocks,
    largest_entry,
    layer_mark,
    pair_frequencies,
    row_moments,
    row_norms,
    shape_table,
    top_k,
)
from core.explain.transformer import Model, Trace
from ui.elements.figures import bars
from ui.elements.glossary import link, tip
from ui.elements.primer_slips import slip_box, slips
from ui.elements.widgets import chart, download_matrix, download_rows, explain
from ui.two_layer_trace.matrices import (
    chart_slots,
    column_names,
    did,
    head_columns,
    matrix,
    panel,
    panel_grid,
    spaced,
    token_rows,
    top_table,
)
from ui.two_layer_trace.state import STEP, TAU_RANGE, step_from_link, step_into_link

FIRST = 1  # the primer numbers layers, heads, columns and positions from 1

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
        return token_rows(self.tokens)

    @property
    def cols(self) -> list[str]:
        return column_names(self.model.config.d_model)

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
    did(f"Turned each token into its id ({looked}) and read that row of E ({v.model.config.vocab_size} × {d}).")
    E_rows = v.trace["hook_embed"]
    matrix(
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
    did(f"Added the fixed positional row to each embedding row: h⁰ = E[ids] + PE, still {T} × {d}.")
    panel_grid(
        [
            panel(v.trace["hook_embed"], "E[ids]", v.rows, v.cols, "tr-E0"),
            panel(pe, "PE (sinusoidal)", v.rows, v.cols, "tr-PE"),
            panel(v.trace["blocks.0.hook_resid_pre"], "h⁰ = E[ids] + PE", v.rows, v.cols, "tr-h0"),
        ]
    )
    pairs = ", ".join(f"pair {i + 1} (columns {2 * i + 1}–{2 * i + 2}) turns {f:.3f} rad" for i, f in enumerate(freq))
    st.markdown(
        f"**How one vector carries both the word and its place.** Each column pair of PE is a sine and a cosine of "
        f"the position at a fixed speed: {pairs} per position. "
        + (
            f"Over these {T} positions column {FIRST} moves by {travel[0]:.3f} while column {d - 1} moves by only "
            f"{travel[d - 2]:.3f}. "
            if T > 1
            else f"With a single token nothing moves yet: add tokens and watch column {FIRST} change fast, column "
            f"{d - 1} hardly. "
        )
        + "So position is written mostly into "
        "the fast first columns and the word keeps the slow ones nearly undisturbed; W_Q, W_K and W_V learn which "
        "coordinates to read, so a head can look at words, at places, or at both."
    )
    explain(
        f"Three {T} × {d} matrices: the word part, the place part and their sum h⁰, the residual stream's starting "
        f"point. PE's first column runs {', '.join(f'{x:.3f}' for x in pe[:, 0])} down the positions.",
        f"Attention alone is blind to order; the {link('positional-encoding')} is what tells the model that "
        f"'{v.tokens[-1]}' is token {T} and not the first token, at no parameter cost: PE is a fixed table, not "
        "learned.",
    )


def _step_norm(v: View, which: str) -> None:
    first = which == "ln1"
    source = v.hook("hook_resid_pre" if first else "hook_resid_mid")
    normed, p = v.hook(f"{which}.hook_normalized"), v.model.params
    name = ("h⁰" if v.layer == 0 else f"h{layer_mark(v.layer)}") if first else "h_mid"
    label = "LN₁" if first else "LN₂"
    mean, std = row_moments(source)
    gamma, beta = p[f"{v.block}.{which}.gamma"], p[f"{v.block}.{which}.beta"]
    did(f"Rescaled each row of {name} to mean 0 and spread 1, then applied {label}'s learned γ and β (layer {v.n}).")
    panel_grid(
        [
            panel(source, f"{name} (input)", v.rows, v.cols, f"tr-{which}-in"),
            panel(normed, f"{label}({name})", v.rows, v.cols, f"tr-{which}-out"),
            panel(np.stack([gamma, beta]), f"{label} γ (scale) and β (shift)", ["γ", "β"], v.cols, f"tr-{which}-gb"),
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
    hcols = head_columns(c.n_heads, c.d_head)
    width = c.n_heads * c.d_head
    did(f"One multiply each: LN₁(h) ({T} × {c.d_model}) times W_Q, W_K, W_V ({c.d_model} × {width}) plus a bias.")
    for name in ("q", "k", "v"):
        matrix(
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
        f"The first {c.d_head} columns of each matrix belong to head {FIRST}, the next {c.d_head} to head "
        f"{FIRST + 1} (the thick line). The largest query entry is {value:.3f}, for {v.tokens[r]} in head "
        f"{col // c.d_head + FIRST}.",
        f"{link('multi-head')} is one matrix multiply carved into lanes: {c.n_heads} questions asked in parallel "
        f"for the price of one {c.d_model} × {c.n_heads * c.d_head} product.",
    )


def _step_heads(v: View) -> None:
    c, T = v.model.config, len(v.tokens)
    did(f"Sliced Q, K and V into {c.n_heads} lanes of {T} × {c.d_head}; each lane now runs attention on its own.")
    blocks = {name: head_blocks(v.trace, v.layer, name) for name in ("q", "k", "v")}
    for head in range(c.n_heads):
        st.markdown(f"**Head {head + 1}**")
        panels = [
            panel(
                blocks[name][head], f"{name.upper()}{head + 1}", v.rows, column_names(c.d_head, "d"), f"tr-{name}{head}"
            )
            for name in ("q", "k", "v")
        ]
        panel_grid(panels, per_row=3)
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
        did(f"Compared every query with every key: QKᵀ per head, divided by √d_k = {math.sqrt(c.d_head):.3f}.")
    else:
        pair = ((v.hook("attn.hook_attn_scores_masked"), "masked scores", True), (pattern, "weights", False))
        did("Blocked the future (−∞ above the diagonal), then softmax turned each row into weights that sum to 1.")
    for head in range(c.n_heads):
        st.markdown(f"**Head {head + 1}**")
        panel_grid(
            [
                panel(
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
    did(f"Each head took a weighted average of its value rows: weights ({T} × {T}) · V ({T} × {c.d_head}).")
    panel_grid(
        [panel(z[h], f"head {h + 1} output", v.rows, column_names(c.d_head, "d"), f"tr-z{h}") for h in range(c.n_heads)]
    )
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
    did(f"Glued the {c.n_heads} head outputs side by side: {T} × {width}.")
    matrix(
        v.hook("attn.hook_concat"),
        title="concat",
        rows=v.rows,
        columns=head_columns(c.n_heads, c.d_head),
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
    did(
        f"Mixed the heads and mapped them back to the stream's width: concat · W_O "
        f"({W_O.shape[0]} × {W_O.shape[1]}) + b_O."
    )
    panel_grid(
        [
            panel(W_O, "W_O", head_columns(c.n_heads, c.d_head), v.cols, "tr-WO", row_breaks=v.breaks),
            panel(out, "attn write-back", v.rows, v.cols, "tr-attn"),
        ]
    )
    r, col, value = largest_entry(out)
    explain(
        f"W_O's top {c.d_head} rows read head {FIRST}, the next {c.d_head} head {FIRST + 1} (the thick line). The "
        f"largest write is {value:.3f}, into column {col + FIRST} of {v.tokens[r]}.",
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
    did(f"Added the {w} write-back to the stream: {y} = {x} + {w}, still {T} × {d}.")
    panel_grid([panel(values, title, v.rows, v.cols, f"tr-{which}-{i}") for i, (values, title) in enumerate(parts)])
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
    ff = column_names(c.d_ff, "n")
    panels = {
        "mlp_pre": ((v.hook("ln2.hook_normalized"), "LN₂(h_mid)", v.cols), (pre, "pre = LN₂ · W_1 + b_1", ff)),
        "mlp_post": ((pre, "pre", ff), (post, "act = GELU(pre)", ff)),
        "mlp_out": ((post, "act = GELU(pre)", ff), (v.hook("hook_mlp_out"), "MLP out = act · W_2 + b_2", v.cols)),
    }[which]
    did(
        {
            "mlp_pre": f"Widened each token's row from {c.d_model} to {c.d_ff} numbers with W_1 "
            f"({c.d_model} × {c.d_ff}).",
            "mlp_post": "Applied GELU to every entry: large positives pass, negatives are squashed towards zero.",
            "mlp_out": f"Narrowed each row back from {c.d_ff} to {c.d_model} numbers with W_2 "
            f"({c.d_ff} × {c.d_model}).",
        }[which]
    )
    panel_grid(
        [panel(values, title, v.rows, labels, f"tr-{which}-{i}") for i, (values, title, labels) in enumerate(panels)],
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
    checked = {"mlp_pre": ("dff_four_times",), "mlp_post": ("only_nonlinearity",)}.get(which, ())
    slip_box(slips(*checked), key=f"tr-slips-{which}")


def _step_final(v: View) -> None:
    c, T = v.model.config, len(v.tokens)
    h0, h2 = v.trace["blocks.0.hook_resid_pre"], v.trace[f"blocks.{c.n_layers - 1}.hook_resid_post"]
    did(f"Nothing new: after {c.n_layers} layers the stream is still {T} × {c.d_model}, the shape it started with.")
    panel_grid(
        [
            panel(h0, "h⁰ (start)", v.rows, v.cols, "tr-final-h0"),
            panel(h2, f"h{layer_mark(c.n_layers)} (end)", v.rows, v.cols, "tr-final-h2"),
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
    did(
        f"Normalised the last row of h{layer_mark(c.n_layers)}, multiplied it by the learned scale γ and added the "
        "learned shift β."
    )
    lines = np.stack([h2[-1], gamma, p["ln_final.beta"], normed[-1]])
    labels = ["h²_last", "γ", "β", "LN(h²)_last"]
    matrix(
        lines,
        title=f"final LayerNorm of the last row ({v.tokens[-1]})",
        rows=labels,
        columns=v.cols,
        key="tr-finalln",
        alt="final LayerNorm, last row",
    )
    matrix(
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
    did(f"Multiplied the normalised last row by U = Eᵀ ({c.d_model} × {c.vocab_size}): one score per token.")
    ranked = top_k(logits, vocab, len(vocab))
    fig = bars(
        vocab,
        logits,
        title=f"logits after '{spaced(v.tokens)}'  (shape [{len(vocab)}])",
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
    did(f"softmax(logits / τ) with τ = {tau:.1f}: {len(vocab)} probabilities that sum to 1.")
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
        f"After '{spaced(v.tokens)}' the model puts {table[0].probability:.3f} on {table[0].token}, then "
        f"{table[1].probability:.3f} on {table[1].token} (τ = {tau:.1f}).",
        f"Temperature is the dial vendors expose: at τ = 1 the favourite would get "
        f"{v.trace['hook_probs'][-1].max():.3f}; below 1 it takes even more, above 1 the runners-up get a bigger share "
        "and outputs become more varied.",
    )


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
