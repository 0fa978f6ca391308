"""The QKV walkthrough's KV-cache section (primer §3): the cache growing token by token, each step's new row, the
proof that the cached pass equals the full one, and the cache's size."""

from __future__ import annotations

import numpy as np
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from core.explain.kv_generation import PRIMER_7B, CacheShape, CacheStep, Generation, made_up_rows
from core.explain.transformer import Config
from ui.elements.glossary import link, tip
from ui.elements.navigation import PAGES
from ui.elements.widgets import chart, explain, shape_label
from ui.qkv_walkthrough.pieces import MADE_UP_SEED, blend, figure, matrix, quoted, small
from ui.qkv_walkthrough.state import SIZE_LIMITS

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
        f"Defaults: the primer's 7B example ({PRIMER_7B.bytes_per_element}-byte FP16 numbers, "
        f"{PRIMER_7B.T // 1024}K context). The toy head on this page, in float64, "
        f"holds {toy.bytes} bytes for its {toy.T} tokens."
    )
    calculator = next((spec for spec in PAGES if spec.script == "pages/kv_cost.py"), None)
    if calculator:
        label = f"{calculator.title}: what this memory costs on real GPUs"
        try:
            st.page_link(calculator.script, label=label, icon=calculator.icon)
        except StreamlitPageNotFoundError:  # the page script run on its own (AppTest), without app.py's navigation
            st.markdown(f"[{label}](/{calculator.url_path})")
