"""The ablation lab's ⑤ collateral damage against the targeted rule, and ⑥ the experiments beyond the primer: zero
vs mean ablation, MLP neurons, activation patching and the model family."""

from __future__ import annotations

from functools import cache, lru_cache

import plotly.graph_objects as go
import streamlit as st

from core.explain import experiments as ex
from core.explain.analysis import (
    HeadEvidence,
    PatchRow,
    head_label,
    patching_table,
    short_label,
)
from core.explain.transformer import HeadKey
from ui.ablation_lab.results import (
    PRIMER,
    ceilings,
    family_names,
    load_bearing_definition,
    shared,
    sweep,
    three_decimals,
    three_places,
)
from ui.ablation_lab.state import BEYOND, HEADS, MODEL, PROMPTS, Setting, q
from ui.ablation_lab.subsets import shipped_family, trained_evidence
from ui.elements.comparisons import bar_panels, grouped_bars
from ui.elements.figures import heatmap
from ui.elements.primer_slips import slip_box, slips
from ui.elements.static_table import static_table
from ui.elements.widgets import OnFirstUse, chart, download_table, explain

pd = OnFirstUse("pandas")


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
    explain(
        collateral_sentence(ev) + f" Attention off leaves {s.bigram_top1[-1]:.3f} on the bigram slots (primer: "
        f"{PRIMER.collateral[None][0]:.3f}).",
        f"A probe meant to remove one capability can remove several: with {len(HEADS)} heads there is no spare "
        "capacity, so 'turning off X broke Y' is only evidence about Y if what else broke is reported too. Ask for "
        f"both numbers, the targeted one and the collateral one: here {head_label(ev.bluntest)} costs "
        f"{ev.bigram_drop[ev.index(ev.bluntest)]:.3f} of bigram top-1 it was never meant to touch.",
    )
    c = ceilings()
    st.caption(
        f"The {s.n_bigram_slots} bigram slots need no attention to other tokens. Reading only the current token, the "
        f"best possible top-1 on them is {c.token_only:.3f}; the token and its position reach {c.position_aware:.3f}; "
        f"the trained model scores {ev.baseline_bigram:.3f}."
    )
    slip_box(slips("five_after_the", "bigram_could_answer"), key="ablation-slips")


def collateral_sentence(ev: HeadEvidence) -> str:
    """The bluntest cut, the one with least collateral damage and what it does to the rule, and whether any head
    breaks the rule (halves the copula class accuracy) while sparing the bigram slots, as the primer's layer-2 heads
    do in its model."""
    blunt, clean = ev.index(ev.bluntest), ev.index(ev.cleanest)
    text = (
        f"Removing {head_label(ev.bluntest)} takes the bigram slots from {ev.baseline_bigram:.3f} to "
        f"{ev.bigram_top1[blunt]:.3f}: damage to predictions that need no attention, so part of its effect on the "
        f"rule ({ev.baseline_class:.2f} → {ev.class_accuracy[blunt]:.2f} on the copula slots) is collateral. The "
        f"least collateral damage comes from removing {head_label(ev.cleanest)} (bigram {ev.bigram_top1[clean]:.3f})"
    )
    if ev.cleanest in ev.rule_breakers:
        return text + f", and it still cuts the rule: copula class {ev.class_accuracy[clean]:.2f}, a clean cut."
    text += f", but it barely touches the rule either (copula class {ev.baseline_class:.2f} → "
    text += f"{ev.class_accuracy[clean]:.2f})."
    breakers = [ev.index(h) for h in ev.rule_breakers]
    if breakers:
        least = min(ev.bigram_drop[i] for i in breakers)
        text += (
            " Every head whose removal at least halves the copula class accuracy ("
            + ", ".join(f"{short_label(ev.heads[i])} {ev.class_accuracy[i]:.2f}" for i in breakers)
            + f") also costs at least {least:.3f} of bigram top-1: no single head is a clean cut here, unlike the "
            f"primer's layer-{max(layer for layer, _ in HEADS) + 1} heads, which halve its class accuracy and leave "
            "its bigram slots at " + " and ".join(f"{v:.3f}" for v in primer_clean_bigram()) + "."
        )
    return text


def primer_clean_bigram() -> list[float]:
    """The primer's printed bigram top-1 with each layer-2 head removed (its 'clean case')."""
    last = max(layer for layer, _ in HEADS)
    return [PRIMER.collateral[frozenset({h})][0] for h in HEADS if h[0] == last and frozenset({h}) in PRIMER.collateral]


@lru_cache(maxsize=32)  # 32 × ~5 kB
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


@lru_cache(maxsize=16)  # 16 × ~5 kB
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


@lru_cache(maxsize=2)  # 2 × ~10 kB
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
        "Ablation and patching answer different questions. Switching a part off shows whether the model needs it; "
        "transplanting its state from another input shows whether it carries the deciding information, because the "
        "answer follows the transplant. Patching is the more specific test (it names what the part carries), and "
        f"both are evidence about the inputs tried: here the pair {q(target_words)} and {q(source_words)}, not "
        "every input.",
    )


@lru_cache(maxsize=64)  # 64 × ~5 kB
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
        f"Blue bar: a load-bearing head ({load_bearing_definition()}). ★ marks the brightest head, the one that "
        "looks hardest at the noun (mean attention of the copula on its subject)."
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
                "load-bearing heads": ", ".join(short_label(h) for h in c.collapsing) or "none",
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
