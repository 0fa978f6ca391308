"""Ablation lab (primer Appendix A as an experiment bench): the bench read-out, the method box and the tabs in order.

Each section reads the engine (core.explain.analysis, core.explain.experiments) through process-wide caches keyed by
small, hashable settings (ui/ablation_lab/results.py), draws the figures with ui.elements.figures and writes "what you
see / why it matters" from the same numbers. The primer's printed tables come from assets/primer_appendix_a.json,
labelled."""

from __future__ import annotations

import streamlit as st

from core.explain import experiments as ex
from core.explain.analysis import head_label, short_label
from ui.ablation_lab.beyond import beyond_tab, collateral_tab
from ui.ablation_lab.results import ceilings, prediction, sweep
from ui.ablation_lab.roads import both_roads, prompt_table_tab
from ui.ablation_lab.state import HEADS, Setting, q
from ui.ablation_lab.subsets import patterns_tab, subsets_tab
from ui.elements.glossary import link
from ui.elements.widgets import explain


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
            f"After is / was, all {s.n_copula_slots} copula decisions of the world: is the top prediction an "
            "adjective of the subject's class?",
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
        "Switching a part off and measuring what breaks tests what a component does rather than what it looks at: "
        "whether the model needs it. (Activation patching, under ⑥, asks the next question: whether the part "
        "carries the deciding information.) An auditor holding the weights can run both on any model; a claim that "
        f"a component 'does X' deserves to be asked for this measurement, including what else broke.{collateral}",
    )


# --------------------------------------------------------------------------------------------------- first words
def answers(words: tuple[str, ...]) -> str:
    """The trained model's two likeliest next words after a prompt, in running text: '**big** or **small**'."""
    first, second = prediction(words, (), False)[:2]
    return f"**{first[0]}** or **{second[0]}**"


def plain_words() -> str:
    """What the page shows, in words, before any symbol; then the symbols the bench uses, each explained."""
    s = sweep()
    cat, mat = ex.CAT, ex.MAT
    names = "; ".join(f"{short_label(h)} is {head_label(h)}" for h in HEADS[:2])
    return (
        "**What this page shows.** A small language model has learned a grammar rule: after "
        f"{q(cat)} it answers {answers(cat)}, after {q(mat)} it answers {answers(mat)}. The right kind of word "
        "depends on the noun one word back, and only attention can carry a word to another position "
        f"({link('attention-head')}). Here you switch parts of its attention off and see whether the rule survives "
        f"({link('ablation')}).\n\n"
        f"**How to read the bench.** The model has {len(HEADS)} attention heads, named by layer and head ({names}; "
        f"and so on). *Rule accuracy* is the share of the {s.n_held_out_copula_slots} rule decisions in test "
        f"sentences kept out of training ({link('held-out', 'held out')}) that the model gets right. The "
        f"*{s.n_bigram_slots} bigram slots* are the other next-word decisions, which need only the current word and "
        f"its place (after *sat* comes *on*; {link('bigram-slot', 'bigram slot')}): if accuracy there falls, the "
        "switch broke more than the rule. The tabs run the primer's Appendix A experiments, its numbers beside ours, "
        "and the ones it did not run."
    )


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
