"""The ablation lab's ③ all 16 head subsets and ④ why an attention pattern is not evidence of what a head does."""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.explain import experiments as ex
from core.explain.analysis import (
    COLLAPSE,
    HeadEvidence,
    head_evidence,
    head_label,
    short_label,
    subset_counts,
)
from core.explain.transformer import HeadKey
from ui.ablation_lab.results import (
    NOT_PRINTED,
    PRIMER,
    attention_rows,
    load_bearing_definition,
    primer_value,
    shared,
    sweep,
)
from ui.ablation_lab.state import BEYOND, HEADS, TABS, Setting, q
from ui.elements.comparisons import paired_bars
from ui.elements.figures import heatmap
from ui.elements.widgets import OnFirstUse, chart, download_table, explain

pd = OnFirstUse("pandas")


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
        f"copula class accuracy, then bigram top-1, among the {subset_counts(s).real} real ablations)."
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


@lru_cache(maxsize=32)  # 32 × ~10 kB
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
        f"#### Across {runs} trained models, the brightest head is load-bearing in "
        f"{'only ' if agree < runs / 2 else ''}{agree}."
    )
    st.markdown(
        f"In the shipped model, drawn below, it {verdict}; the other {runs - 1} runs are under "
        f"{TABS[-1]} → {BEYOND[-1]}. The brightest head is the one that puts most of the copula's attention on the "
        f"subject noun; {load_bearing_definition()}."
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
    bright, load, dim = evidence.brightest, evidence.most_damaging, evidence.dimmest
    b, lb, d = evidence.index(bright), evidence.index(load), evidence.index(dim)
    primer_bright = PRIMER.brightest("cat")
    primer_weight = PRIMER.copula_attention[primer_bright][PRIMER.attention_keys.index("cat")]
    bright_text = f"{head_label(bright)} ({evidence.attention[b]:.2f} of the copula's attention, mean over the " + (
        f"{s.n_copula_slots} copula slots)"
    )
    if bright == load:
        first = (
            f"The brightest head on the noun, {bright_text}, is also the one whose removal hurts the rule most "
            f"(rule accuracy {evidence.baseline_rule:.2f} → {evidence.rule_accuracy[lb]:.2f})."
        )
    else:
        kind = "load-bearing" if evidence.brightest_is_load_bearing else "not load-bearing"
        first = (
            f"The brightest head on the noun is {bright_text}; removing it leaves rule accuracy at "
            f"{evidence.rule_accuracy[b]:.2f} ({kind}), while removing {head_label(load)} takes it to "
            f"{evidence.rule_accuracy[lb]:.2f}."
        )
    what = (
        f"{first} The dimmest, {head_label(dim)} at {evidence.attention[d]:.2f}, still takes rule accuracy to "
        f"{evidence.rule_accuracy[d]:.2f} and top-1 on the bigram slots from {evidence.baseline_bigram:.3f} to "
        f"{evidence.bigram_top1[d]:.3f}. Across the {runs} training runs of the model family the brightest "
        f"head was load-bearing in {agree}. In the primer's model the brightest, {head_label(primer_bright)} "
        f"({primer_weight:.3f} on cat), left the rule at {PRIMER.single_head_rule[frozenset({primer_bright})]:.2f}."
    )
    explain(
        what,
        f"An attention heatmap shows what a head looks at, not what it does: in {runs - agree} of our "
        f"{runs} training runs the brightest head is not load-bearing. A vendor demo that "
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


@lru_cache(maxsize=64)  # 64 × ~5 kB
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
        highlight=[h in (evidence.brightest, evidence.most_damaging) for h in evidence.heads],
        height=380,
    )
    return shared(fig)
