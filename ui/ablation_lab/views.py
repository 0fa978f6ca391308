"""Ablation lab (primer Appendix A as an experiment bench): the page's sections, figures and annotations.

Each section reads the engine (core.explain.analysis, core.explain.experiments) through process-wide caches keyed by
small, hashable settings (the results and the figures are read-only and shared by every session, so a warm rerun only
sends them), draws the figures with ui.elements.figures and writes "what you see / why it matters" from the same
numbers. The primer's printed tables come from assets/primer_appendix_a.json, labelled.
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.explain import experiments as ex
from core.explain.analysis import (
    COLLAPSE,
    BigramCeilings,
    HeadEvidence,
    PatchRow,
    Sweep,
    ablation_sweep,
    bigram_ceilings,
    head_evidence,
    head_label,
    next_token_table,
    patching_table,
    short_label,
    subset_counts,
)
from core.explain.primer import hand_example
from core.explain.primer_slips import appendix_a_slips
from core.explain.transformer import HeadKey, hand_model
from ui.ablation_lab.state import BEYOND, HEADS, MODEL, PROMPTS, TABS, Setting, q
from ui.elements.figures import bar_panels, grouped_bars, heatmap, paired_bars
from ui.elements.glossary import link
from ui.elements.primer_slips import slip_box
from ui.elements.static_table import static_table
from ui.elements.widgets import OnFirstUse, chart, download_table, explain

pd = OnFirstUse("pandas")

PRIMER = ex.primer_tables()
NOT_PRINTED = "—"


# --------------------------------------------------------------------------------------------------- cached engine
@cache
def sweep() -> Sweep:
    """All 16 head subsets plus attention off on the trained model (one batched pass per setting)."""
    return ablation_sweep(MODEL)


@cache
def ceilings() -> BigramCeilings:
    """The best top-1 on the bigram slots without attention: token only, and token plus position."""
    return bigram_ceilings()


@lru_cache(maxsize=512)
def prediction(words: tuple[str, ...], removed: tuple[HeadKey, ...], off: bool) -> list[tuple[str, float]]:
    """Top three next tokens after a prompt under a bench setting."""
    return next_token_table(MODEL, words, ex.configuration(removed, off), k=3)


@lru_cache(maxsize=64)
def attention_rows(words: tuple[str, ...]) -> np.ndarray:
    """The last token's attention row in every head (the demo heatmap)."""
    return ex.query_attention(MODEL, words)


def family_names(family: ex.Family) -> tuple[str, ...]:
    """'shipped model', then 'seed N' for each independently trained one."""
    return ("shipped model", *(f"seed {seed}" for seed in family.seeds[1:]))


def shared(fig: go.Figure) -> go.Figure:
    """A cached bar chart, shared read-only by every session, without plotly's default template: the chart element
    themes it (ui/elements/chart_element.py), and the template is most of a small figure's JSON. (Heatmaps keep it:
    without it plotly draws tick marks beside their labels.)"""
    return fig.update_layout(template="none")


# --------------------------------------------------------------------------------------------------- formatting
def three_decimals(frame: pd.DataFrame) -> dict[str, object]:
    """Column settings showing every float column of a table to 3 decimals (0.500, not 0.5)."""
    return {
        column: st.column_config.NumberColumn(format="%.3f")
        for column in frame.columns
        if pd.api.types.is_float_dtype(frame[column])
    }


def three_places(value: float | None) -> str:
    """A rate to 3 decimals (0.500, not 0.5), or a dash where there is none (the primer printed no value)."""
    return NOT_PRINTED if value is None else f"{value:.3f}"


def primer_value(value: float | None, fmt: str = ".3f") -> str:
    """A printed primer number, or a dash where the primer printed none."""
    return NOT_PRINTED if value is None else format(value, fmt)


# --------------------------------------------------------------------------------------------------- bench
def bench(setting: Setting) -> None:
    """The bench's read-out: the three measures and the prediction, against the trained model."""
    removed, off, words = setting.removed, setting.off, setting.words
    s = sweep()
    r = ex.bench_reading(s, removed, off)
    cols = st.columns(4)
    shown = [
        (
            "Rule accuracy (held-out)",
            r.rule_accuracy,
            f"Share of the {s.n_held_out_copula_slots} copula decisions in the sentence types held out of training "
            "where the top prediction is an adjective of the subject noun's class (the primer's rule accuracy).",
        ),
        (
            f"Top-1 on {s.n_bigram_slots} bigram slots",
            r.bigram_top1,
            "Share of the next-token decisions that need no attention to other tokens where the top prediction is "
            f"the token that actually comes next. The best any model can do on them is {ceilings().full_context:.3f}; "
            f"reading the current token and its position reaches {ceilings().position_aware:.3f}, the current token "
            f"alone only {ceilings().token_only:.3f}. A fall here is collateral.",
        ),
        (
            f"Right class on {s.n_copula_slots} copula slots",
            r.copula_class_accuracy,
            "After is / was, all 16 copula decisions of the world: is the top prediction an adjective of the "
            "subject's class?",
        ),
    ]
    for col, (label, measure, helptext) in zip(cols, shown, strict=False):
        delta = f"{measure.change:+.2f}" if r.changed else None
        col.metric(label, f"{measure.now:.2f}", delta, help=helptext)
    top = prediction(words, removed, off)
    trained = prediction(words, (), False)
    cols[3].metric(f"Next token after {q(words)}", f"{top[0][0]} · {top[0][1]:.2f}")
    cols[3].caption(
        "then "
        + ", ".join(f"{t} {p:.2f}" for t, p in top[1:])
        + f"; trained model: {trained[0][0]} {trained[0][1]:.2f}"
    )
    rule, bigram, right = r.rule_accuracy, r.bigram_top1, r.right_class_slots
    if r.changed:
        what = (
            f"With {setting.name}, rule accuracy is {rule.now:.2f} (trained model {rule.trained:.2f}), "
            f"{right} of the {s.n_copula_slots} copula slots get the right class, and top-1 on the bigram slots, "
            f"which need no attention at all, moves from {bigram.trained:.3f} to {bigram.now:.3f}. After {q(words)} "
            f"the model now answers {top[0][0]} ({top[0][1]:.2f}) where the trained model answers {trained[0][0]} "
            f"({trained[0][1]:.2f})."
        )
    else:
        what = (
            f"The trained model, nothing removed: rule accuracy {rule.now:.2f}, the right class on {right} of "
            f"{s.n_copula_slots} copula slots, top-1 {bigram.now:.3f} on the bigram slots; after {q(words)} it "
            f"answers {top[0][0]} ({top[0][1]:.2f}). Remove a head above to see what breaks."
        )
    collateral = (
        f" Here the switch also cost {-bigram.change:.3f} of top-1 on predictions that never needed "
        "attention, damage no claim about 'the rule' would have predicted."
        if r.changed and bigram.change < 0
        else ""
    )
    explain(
        what,
        "Switching a part off and measuring what breaks is the one test that shows what a component does rather "
        "than what it looks at. An auditor holding the weights can run it on any model; a claim that a component "
        f"'does X' deserves to be asked for exactly this measurement, including what else broke.{collateral}",
    )


# --------------------------------------------------------------------------------------------------- ① both roads
def both_roads(_: Setting) -> None:
    """① Method 1 vs Method 2, the head-ablation identity and the cat/mat swap, beside the primer."""
    st.markdown(
        "Appendix A disables attention two ways. **Method 1** deletes the attention blocks; **Method 2** keeps them "
        "but sets the write-back to zero, so whatever the heads compute adds nothing to the residual stream."
    )
    left, right = st.columns(2)
    left.latex(r"\text{Method 1:}\quad h^{(\ell+1)} = h^{(\ell)} + \mathrm{MLP}\big(h^{(\ell)}\big)")
    right.latex(r"\text{Method 2:}\quad W_O = 0,\; b_O = 0 \;\Rightarrow\; h_{\text{mid}} = h^{(\ell)} + 0")
    chart(roads_figure(), key="roads", alt="The 20 next-token logits with attention on, deleted, and silenced.")
    checks, columns, rows = identity_table()
    static_table(columns, rows, label="Identity checks", download=("identity checks", "ablation-identities"))
    by = {c.key: c for c in checks}
    same = [c for c in checks if c.key != "swap_attention_on" and c.identical]
    on = by["swap_attention_on"]
    held = f"All {len(same)}" if len(same) == len(checks) - 1 else f"Only {len(same)} of the {len(checks) - 1}"
    explain(
        f"{held} identities hold to the last bit on our model, as in the primer. Method 2 against Method 1: "
        f"{brief(by['method2_vs_method1'])} on {q(ex.CAT)} and {brief(by['method2_vs_method1_corpus'])} at every "
        f"position of the corpus; attention off, {q(ex.CAT)} against {q(ex.MAT)}: {brief(by['swap_attention_off'])}. "
        f"With attention on, swapping the noun moves one logit by {on.max_abs_delta:.3f} (the primer's model: "
        f"{PRIMER.identity['swap_attention_on']['value']:.3f}).",
        "The switch the engine uses to remove a head is exactly the weight edit a reviewer would make by hand, and "
        "deleting attention equals silencing it, bit for bit. So the ablation results on this page are facts about "
        f"the model, not artefacts of the tooling: an audit can reproduce them from the {MODEL.n_params} published "
        "parameters alone.",
    )
    method2_remarks()


def method2_remarks() -> None:
    """Appendix A's two remarks on Method 2, each checked: W_V = 0 is equivalent; attending only to itself doubles."""
    zeroed, kept = value_checks_run()
    doubling = self_attention_run()
    st.markdown("**Two remarks of Appendix A, checked**")
    st.markdown(
        f"“{PRIMER.remarks['equivalent']}” On our model, {zeroed.check}: {brief(zeroed)}. The equivalence needs the "
        f"biases silenced too: {kept.check}: {brief(kept)}, because b_O is still written into the stream."
    )
    first = doubling.h0[0]
    st.markdown(
        f"“{PRIMER.remarks['self_attention']}” On the primer's §5 head with W_V = W_O = I and each token reading only "
        f"itself, '{hand_example().prompt[0]}' goes in as [{', '.join(f'{v:.2f}' for v in first)}] and comes out as "
        f"[{', '.join(f'{v:.2f}' for v in doubling.h1[0])}]: "
        + ("exactly twice its row" if doubling.doubled else "not twice its row")
        + f", moved by up to {doubling.largest_change:.2f}, not passed through."
    )


@cache
def value_checks_run() -> tuple[ex.Check, ex.Check]:
    """W_V = 0 against Method 2 on the trained model, with b_O zeroed and kept (four forward passes, run once)."""
    return ex.value_checks(MODEL)


@cache
def self_attention_run() -> ex.SelfAttention:
    """The §5 head with self-only attention and W_V = W_O = I."""
    return ex.self_attention(hand_model(), hand_example().X)


@cache
def roads_figure() -> go.Figure:
    """The 20 logits by attention on, Method 1, Method 2 and the swapped noun (built once, shared read-only)."""
    fig = grouped_bars(
        MODEL.vocabulary,
        list(ex.road_logits(MODEL).items()),
        title=f"20 logits after {q(ex.CAT)}: attention on, and off three ways",
        y_range=None,
        y_title="logit",
        show_values=False,
        height=380,
    )
    return shared(fig)


@cache
def identity_table() -> tuple[tuple[ex.Check, ...], tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """Appendix A's identity checks on the trained model, with the primer's printed column beside ours: the checks,
    and the table's columns and rows (drawn as plain HTML: the tab that opens first then needs no pandas)."""
    checks = ex.identity_checks(MODEL)
    columns = ("check", "max |Δ| over the 20 logits (ours, live)", "primer (printed)")
    rows = tuple(
        (
            c.check,
            c.shown,
            _primer_check(PRIMER.identity[c.key]) if c.key in PRIMER.identity else "not run",
        )
        for c in checks
    )
    return checks, columns, rows


def brief(check: ex.Check) -> str:
    """A check in running text."""
    return "every bit equal" if check.identical else f"max |Δ| = {check.max_abs_delta:.3g}"


def _primer_check(row: dict) -> str:
    """A printed identity row as the primer prints it."""
    return "0 (identical to the last bit)" if row["identical"] else f"{row['value']:.3f}"


# --------------------------------------------------------------------------------------------------- ② prompt table
@cache
def primer_prompt_rows() -> dict[tuple[str, str], dict]:
    """The primer's printed prompt-table rows, keyed (prompt, configuration)."""
    return {(r["prompt"], r["configuration"]): r for r in PRIMER.prompt_rows}


@cache
def prompt_frames() -> tuple[list[ex.PromptRow], pd.DataFrame, pd.DataFrame]:
    """The prompt table's rows; the full table for the download; the compact one shown (the primer in one column)."""
    rows = ex.prompt_table(MODEL)
    printed = primer_prompt_rows()
    frame = pd.DataFrame(
        [
            {
                "prompt": r.prompt,
                "attention": r.configuration,
                "top token": r.top_token,
                "its probability": round(r.probability, 3),
                "p(big) + p(small)": round(r.p_big_small, 3),
                "p(red) + p(blue)": round(r.p_red_blue, 3),
                "primer: top token": row.get("top_token", NOT_PRINTED),
                "primer: probability": primer_value(row.get("probability")),
                "primer: p(big) + p(small)": primer_value(row.get("p_big_small")),
            }
            for r in rows
            for row in [printed.get((r.prompt, r.configuration), {})]
        ]
    )
    shown = frame.iloc[:, :6].assign(
        primer=[
            NOT_PRINTED if t == NOT_PRINTED else f"{t} · {p} · {m}"
            for t, p, m in zip(
                frame["primer: top token"],
                frame["primer: probability"],
                frame["primer: p(big) + p(small)"],
                strict=True,
            )
        ]
    )
    return rows, frame, shown


def prompt_table_tab(_: Setting) -> None:
    """② The primer's prompt table, extended to every single head, its printed rows beside ours."""
    rows, frame, shown = prompt_frames()
    printed = primer_prompt_rows()
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        row_height=35,
        height=35 * (len(shown) + 1) + 4,
        column_config={
            **three_decimals(shown),
            "prompt": st.column_config.TextColumn(width="medium"),
            "its probability": st.column_config.NumberColumn("probability", format="%.3f"),
            "primer": st.column_config.TextColumn(
                "primer (printed)", help="The primer's own model: top token · its probability · p(big) + p(small)"
            ),
        },
    )
    download_table(frame, name="prompt table", key="ablation-prompts")
    by = {(r.prompt, r.configuration): r for r in rows}
    cat, mat = " ".join(ex.CAT), " ".join(ex.MAT)
    cat_on, mat_on, cat_off, mat_off = by[cat, ex.ON], by[mat, ex.ON], by[cat, ex.OFF], by[mat, ex.OFF]
    first = ex.configuration_label([HEADS[0]])
    cat_l1 = by[cat, first]
    printed_off = printed[cat, ex.OFF]
    off_text = (
        f"both answer {cat_off.top_token} at {cat_off.probability:.3f}"
        if (cat_off.top_token, cat_off.probability) == (mat_off.top_token, mat_off.probability)
        else f"{cat_off.top_token} at {cat_off.probability:.3f} and {mat_off.top_token} at {mat_off.probability:.3f}"
    )
    printed_l1 = printed[cat, first]
    explain(
        f"Attention on: {q(cat)} answers {cat_on.top_token} ({cat_on.probability:.3f}, {cat_on.p_big_small:.3f} on "
        f"big + small) and {q(mat)} answers {mat_on.top_token} ({mat_on.probability:.3f}): opposite sides of the "
        f"rule. Attention off: {off_text}, because nothing at *is* can see the noun (the primer's model: "
        f"{printed_off['top_token']} at {printed_off['probability']:.3f}). With {head_label(HEADS[0])} removed, "
        f"{q(cat)} answers {cat_l1.top_token} at {cat_l1.probability:.3f} (primer: "
        f"{printed_l1['top_token']} at {printed_l1['probability']:.3f}).",
        f"A damaged model does not go quiet: with attention off it still says {cat_off.top_token} after {q(cat)} "
        f"with probability {cat_off.probability:.2f}, fluent, confident and wrong. A high probability is not evidence "
        "that a rule was applied, which is why an evaluation has to score what the answer should be, not how sure "
        "the model sounds. These numbers describe a damaged network, not what a model trained without attention "
        "could learn.",
    )


# --------------------------------------------------------------------------------------------------- ③ all subsets
def highlight(row: pd.Series) -> list[str]:
    """Best row green, worst row red, the reader's setting in bold."""
    colour = {"best": "background-color: #dcefd8", "worst": "background-color: #f6d5d1"}
    style = colour.get(row["marker"].split(" · ")[0], "")
    if "your setting" in row["marker"]:
        style += "; font-weight: bold"
    return [style] * len(row)


def subsets_tab(setting: Setting) -> None:
    """③ All 16 head subsets and attention off, best and worst highlighted."""
    s = sweep()
    rows = subset_rows()
    frame, shown = subset_frames(ex.sweep_index(s, setting.removed, setting.off))
    score = {"format": "%.3f", "min_value": 0.0, "max_value": 1.0, "width": "small"}
    st.dataframe(
        shown.style.apply(highlight, axis=1),
        hide_index=True,
        width="stretch",
        row_height=35,
        height=35 * (len(shown) + 1) + 4,
        column_config={
            "heads removed": st.column_config.TextColumn(width="medium", pinned=True),
            "marker": st.column_config.TextColumn(width="small"),
            "rule accuracy (held-out)": st.column_config.ProgressColumn("rule accuracy", **score),
            PRIMER_RULE: st.column_config.TextColumn(
                "primer (printed)",
                width="small",
                help="The primer's single-head table (Appendix A): rule accuracy on its own model, printed for "
                "no head and each single head only.",
            ),
            "right class on copula slots": st.column_config.ProgressColumn("copula class", **score),
            "top-1 on bigram slots": st.column_config.ProgressColumn("bigram top-1", **score),
            "class-adjective mass": st.column_config.NumberColumn("class mass", format="%.3f", width="small"),
        },
    )
    st.caption(
        "Green row: the least damaging ablation; red row: the most damaging (ranked by rule accuracy, then "
        "copula class accuracy, then bigram top-1, among the 15 real ablations)."
    )
    download_table(frame, name="16-subset table", key="ablation-subsets")
    best = next(r for r in rows if r["marker"] == "best")
    worst = next(r for r in rows if r["marker"] == "worst")
    n = subset_counts(s)
    printed = [(r, primer_rule(k)) for k, r in zip(s.removed, rows, strict=True) if primer_rule(k) != NOT_PRINTED]
    explain(
        "The primer printed the single-head rows only: rule accuracy "
        + ", ".join(f"{p} ({r['heads removed']})" for r, p in printed)
        + " on its model, "
        + ", ".join(f"{r['rule accuracy (held-out)']:.2f}" for r, _ in printed)
        + " on ours. "
        f"All {n.real} ways of removing heads, plus attention off, on the whole corpus. The least damaging is "
        f"{best['heads removed']} (rule {best['rule accuracy (held-out)']:.2f}, bigram "
        f"{best['top-1 on bigram slots']:.3f}); the most damaging is {worst['heads removed']} (rule "
        f"{worst['rule accuracy (held-out)']:.2f}, bigram {worst['top-1 on bigram slots']:.3f}). {n.collapsing} of "
        f"the {n.real} switch the rule off (rule accuracy ≤ {COLLAPSE:.1f}), including {n.collapsing_pairs} of the "
        f"{n.pairs} pairs, which the primer did not search.",
        f"Testing components one at a time is cheap but can miss what only shows up in combination. A full search "
        f"is affordable here ({n.real + 1} settings for {len(HEADS)} heads) and not on a real model: every extra "
        "head doubles the count. When a vendor reports that 'removing component X changes nothing', ask which "
        "combinations were tried.",
    )


@cache
def subset_rows() -> list[dict[str, object]]:
    """The 16-subset table's rows with best and worst marked."""
    return ex.subset_table(sweep())


PRIMER_RULE = "primer: rule accuracy (printed)"


def primer_rule(removed: frozenset[HeadKey] | None) -> str:
    """The primer's printed single-head rule accuracy for a sweep row, or a dash where it printed none."""
    printed = PRIMER.single_head_rule.get(removed) if removed is not None else None
    return primer_value(printed, ".2f")


@lru_cache(maxsize=32)
def subset_frames(selected: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The 16-subset table with the reader's setting (its row in the sweep) marked beside best and worst: in full for
    the download, and without the head count for display (the Styler's cost grows with every column it styles)."""
    frame = pd.DataFrame(subset_rows())[
        [
            "heads removed",
            "marker",
            "rule accuracy (held-out)",
            "right class on copula slots",
            "top-1 on bigram slots",
            "class-adjective mass",
            "heads removed (count)",
        ]
    ]
    frame.insert(3, PRIMER_RULE, [primer_rule(removed) for removed in sweep().removed])
    frame["marker"] = [
        " · ".join(filter(None, [m, "your setting" if k == selected else ""])) for k, m in enumerate(frame["marker"])
    ]
    frame["heads removed (count)"] = frame["heads removed (count)"].astype(str)
    return frame, frame.drop(columns="heads removed (count)")


# --------------------------------------------------------------------------------------------------- ④ patterns
def patterns_tab(setting: Setting) -> None:
    """④ What a head looks at next to what breaks without it, and the verdict the data supports."""
    words = setting.words
    s = sweep()
    evidence = trained_evidence()
    shape = attention_rows(words).shape
    verdict = "is" if evidence.brightest_is_load_bearing else "is not"
    family = shipped_family()
    runs, agree = len(family.carriers), family.brightest_load_bearing
    st.markdown(
        f"#### Across {runs} trained models, the brightest head is the load-bearing one in "
        f"{'only ' if agree < runs / 2 else ''}{agree}."
    )
    st.markdown(
        f"In the shipped model, drawn below, it {verdict}; the other {runs - 1} runs are under "
        f"{TABS[-1]} → {BEYOND[-1]}."
    )
    left, right = st.columns([1.3, 1], gap="large")
    with left:
        st.markdown(f"**What a demo shows:** where the last token of {q(words)} looks, in each head")
        chart(
            demo_heatmap(words),
            key="demo-heatmap",
            alt=f"Attention of the last token of {q(words)} in each of the four heads.",
        )
        st.caption(f"shape heads × T = {shape[0]} × {shape[1]} (the last row of each head's pattern)")
    with right:
        st.markdown("**The primer's printed table** (its own model, §6, query *is* on <BOS> the cat is)")
        st.dataframe(
            primer_attention_frame(),
            hide_index=True,
            column_config={key: st.column_config.NumberColumn(format="%.3f") for key in PRIMER.attention_keys},
        )
    chart(
        brightness_figure(),
        key="bright-vs-damage",
        alt="Per head: attention on the subject noun next to the damage its removal does.",
    )
    bright, load, dim = evidence.brightest, evidence.load_bearing, evidence.dimmest
    b, lb, d = evidence.index(bright), evidence.index(load), evidence.index(dim)
    primer_bright = PRIMER.brightest("cat")
    primer_weight = PRIMER.copula_attention[primer_bright][PRIMER.attention_keys.index("cat")]
    bright_text = f"{head_label(bright)} ({evidence.attention[b]:.2f} of the copula's attention, mean over the " + (
        f"{s.n_copula_slots} copula slots)"
    )
    if evidence.brightest_is_load_bearing:
        first = (
            f"The brightest head on the noun, {bright_text}, is also the one whose removal hurts the rule most "
            f"(rule accuracy {evidence.baseline_rule:.2f} → {evidence.rule_accuracy[lb]:.2f})."
        )
    else:
        first = (
            f"The brightest head on the noun is {bright_text}; removing it leaves rule accuracy at "
            f"{evidence.rule_accuracy[b]:.2f}, while removing {head_label(load)} takes it to "
            f"{evidence.rule_accuracy[lb]:.2f}."
        )
    what = (
        f"{first} The dimmest, {head_label(dim)} at {evidence.attention[d]:.2f}, still takes rule accuracy to "
        f"{evidence.rule_accuracy[d]:.2f} and top-1 on the bigram slots from {evidence.baseline_bigram:.3f} to "
        f"{evidence.bigram_top1[d]:.3f}. Across the {runs} training runs of the model family the brightest "
        f"head was the load-bearing one in {agree}. In the primer's model the brightest, {head_label(primer_bright)} "
        f"({primer_weight:.3f} on cat), left the rule at {PRIMER.single_head_rule[frozenset({primer_bright})]:.2f}."
    )
    explain(
        what,
        f"An attention heatmap shows what a head looks at, not what it does: in {runs - agree} of our "
        f"{runs} training runs the brightest head is not the one the rule rests on. A vendor demo that "
        "points at a bright heatmap cell as 'the model reasoning about X' is showing a picture; evidence is a "
        "measured change in behaviour when the part is switched off.",
    )
    larger_model_findings(family)


def larger_model_findings(family: ex.Family) -> None:
    """The primer's three findings on a larger model, quoted beside what our model family shows."""
    single, spread = PRIMER.larger_model["single_head_rule"], PRIMER.larger_model["no_single_head_rule"]
    counts = family.verdict_counts
    ev = trained_evidence()
    mild = int(np.argmax(ev.rule_accuracy))
    st.markdown(
        "**The primer's findings on a larger model** (Appendix A, from *The clockwork and the dice*; quoted, "
        "not re-run here)"
    )
    frame = pd.DataFrame(
        {
            "finding": [
                "A rule can rest on a single head: zero its W_O block",
                "… and zeroing an inert head instead",
                f"A rule can rest on no single head: each of the {spread['n_heads']} heads ablated in turn",
                "Attention patterns can mislead",
            ],
            "primer (printed)": [
                f"p(right token) {single['p_right_token_before']:.3f} → {single['p_right_token_after']:.4f}",
                f"p(right token) stays {single['p_after_inert_head']:.3f}",
                f"largest single effect: rule accuracy {spread['largest_single_effect_rule_accuracy']:.3f}",
                "a bright head may change nothing when ablated; a dull one may hold the rule",
            ],
            f"our {len(family.carriers)} trained models": [
                f"the rule rests on one head in {counts['one head']}",
                f"shipped model: without {short_label(ev.heads[mild])}, rule accuracy {ev.rule_accuracy[mild]:.2f}",
                f"no single head in {counts['no single head']}, several in {counts['several heads']}",
                f"the brightest head is load-bearing in {family.brightest_load_bearing}",
            ],
        }
    )
    st.table(frame.set_index("finding"))


@cache
def trained_evidence() -> HeadEvidence:
    """Brightness against single-head ablation damage on the trained model."""
    return head_evidence(sweep())


def shipped_family() -> ex.Family:
    """The model family's rule carriers: computed once per server process (a few seconds, under a spinner), then
    shared by every session without the spinner's cost."""
    if ex.shipped_family.cache_info().currsize:
        return ex.shipped_family()
    with st.spinner("Running the ablation sweep on every model of the family…"):
        return ex.shipped_family()


@lru_cache(maxsize=64)
def demo_heatmap(words: tuple[str, ...]) -> go.Figure:
    """The last token's attention row in each head: what a vendor's demo would show."""
    names = [head_label(h) for h in HEADS]
    return heatmap(attention_rows(words), x=list(words), y=names, title="", signed=False, height=60 + 40 * len(names))


@cache
def primer_attention_frame() -> pd.DataFrame:
    """The primer's printed §6 copula attention, one row per head."""
    return pd.DataFrame(
        [[short_label(h), *PRIMER.copula_attention[h]] for h in HEADS], columns=["head", *PRIMER.attention_keys]
    )


@cache
def brightness_figure() -> go.Figure:
    """Per head: attention on the subject noun beside the rule and bigram damage its removal does."""
    evidence = trained_evidence()
    fig = paired_bars(
        [head_label(h) for h in evidence.heads],
        ("attention on the subject noun", evidence.attention),
        [("rule accuracy lost", evidence.rule_drop), ("bigram top-1 lost (collateral)", evidence.bigram_drop)],
        title="How bright a head looks vs what breaks without it",
        left_title=f"Looks at the noun (mean of {sweep().n_copula_slots} copula slots)",
        right_title="Lost when the head is removed",
        highlight=[h in (evidence.brightest, evidence.load_bearing) for h in evidence.heads],
        height=380,
    )
    return shared(fig)


# --------------------------------------------------------------------------------------------------- ⑤ collateral
def collateral_tab(setting: Setting) -> None:
    """⑤ Collateral (bigram) vs targeted (copula) damage per configuration, the primer's values as markers."""
    s = sweep()
    fig, columns, rows = collateral_views(setting.removed, setting.off)
    chart(fig, key="collateral", alt="Bigram top-1 and copula class accuracy per ablation configuration.")
    static_table(
        columns,
        rows,
        label="Collateral vs targeted",
        formats=dict.fromkeys(columns[1:], three_places),
        download=("collateral vs targeted", "ablation-collateral"),
    )
    ev = trained_evidence()
    blunt, clean = ev.index(ev.bluntest), ev.index(ev.cleanest)
    explain(
        f"Removing {head_label(ev.heads[blunt])} takes the bigram slots from {ev.baseline_bigram:.3f} to "
        f"{ev.bigram_top1[blunt]:.3f}: damage to predictions that need no attention, so part of its effect on the "
        f"rule ({ev.baseline_class:.2f} → {ev.class_accuracy[blunt]:.2f} on the copula slots) is collateral. The "
        f"cleanest cut is {head_label(ev.heads[clean])}: bigram {ev.bigram_top1[clean]:.3f}, copula class "
        f"{ev.class_accuracy[clean]:.2f}. Attention off leaves {s.bigram_top1[-1]:.3f} on the bigram slots (primer: "
        f"{PRIMER.collateral[None][0]:.3f}).",
        f"A probe meant to remove one capability can remove several: with {len(HEADS)} heads there is no spare "
        "capacity, so 'turning off X broke Y' is only evidence about Y if what else broke is reported too. Ask for "
        f"both numbers, the targeted one and the collateral one: here {head_label(ev.heads[blunt])} costs "
        f"{ev.bigram_drop[blunt]:.3f} of bigram top-1 it was never meant to touch.",
    )
    c = ceilings()
    st.caption(
        f"The {s.n_bigram_slots} bigram slots need no attention to other tokens. Reading only the current token, the "
        f"best possible top-1 on them is {c.token_only:.3f}; the token and its position reach {c.position_aware:.3f}; "
        f"the trained model scores {ev.baseline_bigram:.3f}."
    )
    slip_box(appendix_a_slips(), key="ablation-slips")


@lru_cache(maxsize=32)
def collateral_views(
    removed: tuple[HeadKey, ...], off: bool
) -> tuple[go.Figure, tuple[str, ...], tuple[tuple[str | float | None, ...], ...]]:
    """Trained model, each single head, the reader's subset (if it is another one) and attention off: both metrics,
    with the primer's printed values as markers, and the same as a table's columns and rows (drawn as plain HTML: a
    click that changes the subset redraws a few rows, not a data grid; None where the primer printed no value)."""
    s = sweep()
    settings = [((), False), *(((h,), False) for h in HEADS), ((), True)]
    if (removed, off) not in settings and not off:
        settings.insert(-1, (removed, False))
    idx = [ex.sweep_index(s, r, o) for r, o in settings]
    labels = [s.labels[k] for k in idx]
    printed = [PRIMER.collateral.get(None if o else frozenset(r)) for r, o in settings]
    fig = grouped_bars(
        labels,
        [
            ("top-1 on bigram slots (collateral: needs no attention)", [s.bigram_top1[k] for k in idx]),
            ("right class on copula slots (targeted)", [s.copula_class_accuracy[k] for k in idx]),
        ],
        markers=[
            ("primer, printed: bigram", [p[0] if p else float("nan") for p in printed]),
            ("primer, printed: copula", [p[1] if p else float("nan") for p in printed]),
        ],
        title="Collateral vs targeted damage per configuration (bars: ours; diamonds: the primer's model)",
        value_format=".2f",
    )
    # values inside the bars, halfway up, so the primer's diamonds near the bar tops do not cover them (once per
    # cached figure, not per rerun)
    fig.update_traces(textposition="inside", insidetextanchor="middle", selector={"type": "bar"})
    columns = (
        "configuration",
        f"top-1 on the {s.n_bigram_slots} bigram slots",
        "primer: bigram",
        f"right class on the {s.n_copula_slots} copula slots",
        "primer: copula",
    )
    rows = tuple(
        (label, s.bigram_top1[k], p[0] if p else None, s.copula_class_accuracy[k], p[1] if p else None)
        for label, k, p in zip(labels, idx, printed, strict=True)
    )
    return shared(fig), columns, rows


# --------------------------------------------------------------------------------------------------- ⑥ beyond
def beyond_tab(setting: Setting) -> None:
    """⑥ The experiments the primer did not run, one at a time."""
    choice = st.segmented_control(
        "Experiment", BEYOND, default=BEYOND[0], key="beyond", bind="query-params", required=True
    )
    {
        BEYOND[0]: zero_vs_mean_view,
        BEYOND[1]: neuron_view,
        BEYOND[2]: patching_view,
        BEYOND[3]: family_view,
    }[choice or BEYOND[0]](setting)


def zero_vs_mean_view(setting: Setting) -> None:
    """Zero ablation against mean ablation, per head, for the reader's subset and for all four."""
    rows, fig, frame = zero_mean_views(setting.removed)
    chart(fig, key="zero-mean", alt="Copula class accuracy with each head zero-ablated and mean-ablated.")
    short = {"rule accuracy": "rule", "right class on copula slots": "copula class", "top-1 on bigram slots": "bigram"}
    labels = {c: next((c.replace(k, v) for k, v in short.items() if c.startswith(k)), c) for c in frame.columns[1:]}
    config = {c: st.column_config.NumberColumn(labels[c], format="%.3f") for c in frame.columns[1:]}
    st.dataframe(frame, hide_index=True, width="stretch", column_config=config)
    download_table(frame, name="zero vs mean ablation", key="ablation-zero-mean")
    gap = ex.method_gap(rows)
    agree, r = gap.agree, rows[gap.largest]
    difference = (
        f" The largest difference is {r['heads removed']}: {r['right class on copula slots, zero']:.3f} when "
        f"zeroed, {r['right class on copula slots, mean']:.3f} when replaced by the mean; bigram top-1 "
        f"{r['top-1 on bigram slots, zero']:.3f} vs {r['top-1 on bigram slots, mean']:.3f}."
        if agree < len(rows)
        else ""
    )
    explain(
        f"On {agree} of {len(rows)} settings the two methods give the same copula class accuracy.{difference}",
        "Zeroing a part pushes the model into states it never saw in training, so some of the damage is shock, not "
        "loss of function; mean ablation keeps the part's typical contribution and removes only what varies with "
        f"the input. On {len(rows) - agree} of these {len(rows)} settings the verdict depends on the method, so a "
        "report should say which one it used.",
    )


@lru_cache(maxsize=16)
def zero_mean_views(chosen: tuple[HeadKey, ...]) -> tuple[list[dict], go.Figure, pd.DataFrame]:
    """Zero against mean ablation per head, for the reader's subset and all four: rows, chart and table."""
    rows = ex.zero_vs_mean(MODEL, chosen)
    fig = grouped_bars(
        [r["heads removed"] for r in rows],
        [
            ("right class on copula slots, zero ablation", [r["right class on copula slots, zero"] for r in rows]),
            ("right class on copula slots, mean ablation", [r["right class on copula slots, mean"] for r in rows]),
        ],
        title="Zero ablation vs mean ablation: the heads' output set to 0, or to its average over the corpus",
    )
    return rows, shared(fig), pd.DataFrame(rows).round(3)


def neuron_view(_: Setting) -> None:
    """Which MLP neurons the copula rule needs."""
    mode = st.radio(
        "Ablate each neuron by",
        ["zero", "mean"],
        key="neuron_mode",
        bind="query-params",
        horizontal=True,
        help="zero: the neuron's activation set to 0; mean: set to its average over the corpus.",
    )
    mode = mode or "zero"
    with st.spinner("Ablating each MLP neuron in turn…"):
        report, fig, frame = neuron_views(mode)
    st.markdown(
        f"**Right class on the {sweep().n_copula_slots} copula slots with one neuron {mode}-ablated** (trained model: "
        f"{report.baseline_class:.2f})"
    )
    chart(fig, key="neurons", alt="Copula class accuracy with each MLP neuron ablated in turn.")
    layers, d_ff = report.class_accuracy.shape
    total = layers * d_ff
    st.caption(f"shape layers × d_ff = {layers} × {d_ff} ({total} neurons)")
    st.dataframe(frame, hide_index=True, width="stretch", height=250, column_config=three_decimals(frame))
    download_table(frame, name="neuron ablation", key="ablation-neurons")
    needed = report.needed
    if needed:
        worst = needed[0]
        what = (
            f"{len(needed)} of the {total} neurons cost at least one copula decision when {mode}-ablated; the rest "
            f"change none. The most needed is {ex.neuron_label(worst)}: the right class falls from "
            f"{report.baseline_class:.2f} to {report.class_accuracy[worst]:.2f}, and top-1 on the bigram slots moves "
            f"from {report.baseline_bigram:.3f} to {report.bigram_top1[worst]:.3f}."
        )
    else:
        what = f"No single neuron's {mode}-ablation costs a copula decision: the rule needs none of the {total} alone."
    explain(
        what,
        "The MLP cannot move information between words, yet the rule still depends on "
        f"{len(needed)} of its {total} neurons: they turn what attention carried over into the answer. A rule "
        "'lives' in a circuit of parts, so finding one necessary part (a head) is not finding the whole mechanism.",
    )


@lru_cache(maxsize=2)
def neuron_views(mode: str) -> tuple[ex.NeuronReport, go.Figure, pd.DataFrame]:
    """Every MLP neuron ablated alone (zero or mean): the report, its heatmap and its table."""
    report = ex.neuron_report(MODEL, mode)
    n_layers, d_ff = report.class_accuracy.shape
    fig = heatmap(
        report.class_accuracy,
        x=[f"n{j + 1}" for j in range(d_ff)],
        y=[f"layer {layer + 1} MLP" for layer in range(n_layers)],
        title="",
        height=160,
        signed=False,
        decimals=2,
        colorbar=True,
    )
    frame = pd.DataFrame(
        [
            {
                "neuron": ex.neuron_label((layer, j)),
                "right class on copula slots": report.class_accuracy[layer, j],
                "rule accuracy (held-out)": report.rule_accuracy[layer, j],
                "top-1 on bigram slots": report.bigram_top1[layer, j],
            }
            for layer in range(n_layers)
            for j in range(d_ff)
        ]
    ).round(3)
    return report, fig, frame


def patching_view(_: Setting) -> None:
    """Run one prompt with head outputs copied from another: does the answer follow?"""
    left, right = st.columns(2)
    target = left.selectbox("Run this prompt", PROMPTS[:8], index=4, key="patch_target", bind="query-params")
    source = right.selectbox(
        "…copying head outputs from", PROMPTS[:8], index=0, key="patch_source", bind="query-params"
    )
    target_words, source_words = tuple((target or PROMPTS[4]).split()), tuple((source or PROMPTS[0]).split())
    try:
        rows, fig, frame = patching_views(target_words, source_words)
    except ValueError as problem:
        st.warning(f"{problem}: pick a source with an animal subject for a surface prompt, or the other way round.")
        return
    chart(fig, key="patching", alt="Class probabilities after patching each head's output from the source prompt.")
    st.dataframe(frame, hide_index=True, width="stretch", column_config=three_decimals(frame))
    download_table(frame, name="activation patching", key="ablation-patching")
    clean = rows[0]
    singles = rows[1 : 1 + len(HEADS)]
    flips = [r for r in singles if r.flipped]
    if flips:
        best = max(flips, key=lambda r: r.p_source_class)
        core = (
            f"Patching one head flips it: with {best.patched}'s output copied from {q(source_words)}, the model "
            f"answers {best.top_token} ({best.probability:.2f}), {best.p_source_class:.2f} on the source's class."
        )
    else:
        core = "No single head's output flips it on its own; " + (
            "the layer pairs or all four do." if any(r.flipped for r in rows[1 + len(HEADS) :]) else "nothing does."
        )
    explain(
        f"Unpatched, {q(target_words)} answers {clean.top_token} ({clean.probability:.2f}). {core} "
        f"{len(flips)} of the {len(singles)} single heads flip{'s' if len(flips) == 1 else ''} the answer.",
        "Ablation shows a part is needed; patching shows it carries the deciding information: transplant one part's "
        "state from another input and the answer follows it. That is the strongest causal evidence interpretability "
        f"offers today, and it is still evidence about this pair of prompts, {q(target_words)} and "
        f"{q(source_words)}, not a guarantee about every input.",
    )


@lru_cache(maxsize=64)
def patching_views(target: tuple[str, ...], source: tuple[str, ...]) -> tuple[list[PatchRow], go.Figure, pd.DataFrame]:
    """Activation patching of the target prompt from the source prompt: rows, chart and table."""
    rows = patching_table(MODEL, target, source)
    fig = grouped_bars(
        [r.patched for r in rows],
        [
            (f"p(class of {q(source)})", [r.p_source_class for r in rows]),
            (f"p(class of {q(target)})", [r.p_target_class for r in rows]),
        ],
        title=f"Run {q(target)}, patch head outputs from {q(source)}: where does the answer go?",
    )
    frame = pd.DataFrame(
        [
            {
                "heads patched": r.patched,
                "top token": r.top_token,
                "its probability": round(r.probability, 3),
                "p(source class)": round(r.p_source_class, 3),
                "p(target class)": round(r.p_target_class, 3),
                "answer flipped": "yes" if r.flipped else "no",
            }
            for r in rows
        ]
    )
    return rows, shared(fig), frame


def family_view(_: Setting) -> None:
    """Which heads carry the rule in each independently trained model."""
    family = shipped_family()
    names, carriers = family_names(family), family.carriers
    fig, frame = family_views()
    chart(fig, key="family", alt="Small multiples: per training run, rule accuracy lost with each single head removed.")
    st.caption(
        f"Blue bar: without that head the rule collapses (rule accuracy ≤ {COLLAPSE:.1f}, at most one of the "
        "five held-out decisions right). ★ marks the head that looks hardest at the noun (mean attention of the "
        "copula on its subject)."
    )
    st.dataframe(frame, hide_index=True, width="stretch", column_config=three_decimals(frame))
    download_table(frame, name="model family", key="ablation-family")
    counts = family.verdict_counts
    none = [(n, c) for n, c in zip(names, carriers, strict=True) if c.verdict == "no single head"]
    none_text = (
        f" In {none[0][0]} the largest single effect still leaves rule accuracy at {none[0][1].weakest_survivor:.2f}."
        if none
        else ""
    )
    explain(
        f"Same architecture, same data, different random starts: in {counts['one head']} of {len(names)} runs the "
        f"rule rests on one head, in {counts['several heads']} on several, and in {counts['no single head']} on no "
        f"single head.{none_text}",
        "Where a behaviour lives is a fact about one trained model, not about the architecture: retrain, and it can "
        f"move or spread out ({family.distinct_answers} different answers in {len(names)} runs). An "
        "interpretability finding is evidence about the model that was examined; it does not carry over to the next "
        "version without being measured again.",
    )


@cache
def family_views() -> tuple[go.Figure, pd.DataFrame]:
    """Small multiples of each training run's rule damage per head, and the family table."""
    family = ex.shipped_family()
    names, carriers = family_names(family), family.carriers
    panels = []
    for name, c in zip(names, carriers, strict=True):
        ev = c.evidence
        labels = [short_label(h) + (" ★" if h == ev.brightest else "") for h in ev.heads]
        panels.append((f"{name}: {c.verdict}", labels, list(ev.rule_drop), [h in c.collapsing for h in ev.heads]))
    fig = bar_panels(
        panels, title=f"Rule accuracy lost when each head is removed, {len(names)} training runs", panel_height=210
    )
    frame = pd.DataFrame(
        [
            {
                "model": name,
                "rule rests on": c.verdict,
                "heads that switch it off": ", ".join(short_label(h) for h in c.collapsing) or "none",
                "largest single effect (rule accuracy left)": round(c.weakest_survivor, 2),
                "brightest head": short_label(c.evidence.brightest),
                "brightest is load-bearing": "yes" if c.evidence.brightest_is_load_bearing else "no",
                **{
                    f"rule accuracy, {short_label(h)} removed": round(v, 2)
                    for h, v in zip(c.evidence.heads, c.evidence.rule_accuracy, strict=True)
                },
            }
            for name, c in zip(names, carriers, strict=True)
        ]
    )
    return shared(fig), frame


# --------------------------------------------------------------------------------------------------- method box
def method_box() -> None:
    """What the three probes measure and their limits, in plain words."""
    with st.expander("Method: what zero-ablation, mean-ablation and patching measure, and their limits"):
        st.markdown(
            "- **Zero-ablation** sets a part's contribution to zero (for a head, its rows of W_O) and measures what "
            "changes. It shows whether the model *needs* the part on these inputs. Limit: zero may be a value the "
            "part never takes, so some damage is the shock of an unnatural state; and a part that others can stand "
            "in for looks unimportant.\n"
            "- **Mean-ablation** replaces the part's output by its average over the corpus instead. It removes only "
            "the information that varies with the input. Limit: the average depends on which corpus you chose.\n"
            "- **Activation patching** runs one input, copies a part's output from another input, and sees whether "
            "the answer follows. It shows the part *carries* the deciding information. Limit: it is tested on "
            "chosen pairs of prompts; other inputs may route differently.\n"
            f"- None of them reads a mechanism off a picture: a head's pattern ({link('attention-head')}) says "
            "where it looks, not what it contributes. And every finding is about the model measured, on the inputs "
            "measured."
        )
        st.latex(
            r"\text{attn} = \operatorname{concat}(z_1, \dots, z_h)\, W_O + b_O, \qquad \text{ablate head } j: "
            r"\; W_O[j d_v : (j+1) d_v,\, :] = 0"
        )


VIEWS = (both_roads, prompt_table_tab, subsets_tab, patterns_tab, collateral_tab, beyond_tab)  # one per tab
