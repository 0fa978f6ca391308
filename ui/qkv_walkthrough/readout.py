"""The QKV walkthrough's read-out section (primer §5 Step 7): temperature, greedy or sampled decoding, and the draws."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from core.explain.sampling import TEMPERATURE_RANGE, Distribution
from ui.elements.glossary import tip
from ui.elements.widgets import chart, explain
from ui.qkv_walkthrough.pieces import WORDS, figure
from ui.qkv_walkthrough.state import (
    draw_count,
    draw_once,
)

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
