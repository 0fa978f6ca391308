"""How it learned, section ③: the rule it could not learn. The primer's discarded second rule (a copula subject's
adjective must be repeated) reproduced as a second world, its runs' two metrics side by side, the answers type by
type, and the primer's lesson with what the two metrics showed here. Everything is read from
assets/model/discarded_world.json (written by `python -m core.training --discarded-world`).
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.explain.checkpoints import Replay
from core.explain.discarded_world import (
    EARLY,
    LESSON,
    RunRow,
    discarded_corpus,
    discarded_types,
    is_repeat,
    shipped_runs,
    verdict,
)
from ui.elements import leads
from ui.elements.glossary import link
from ui.elements.static_table import static_table
from ui.elements.widgets import chart, explain
from ui.how_it_learned import figures

PRIMER_QUOTE = (
    "An earlier version let the subject carry an adjective at the copula and required is to repeat it: the big cat "
    "is big was a sentence, the big cat is small was not. The model never learned it. Across four training "
    "configurations and an early checkpoint it answered the class's first adjective whatever the subject adjective "
    "was, getting the repeat right on between a half and three quarters of those sentence types, no better on the "
    "ones it had trained on than on the held-out ones. The behavioural metric I was watching scores the class, and "
    "big and small are both animal adjectives, so it read 1.000 throughout and reported nothing."
)


def _three(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _span(low: float, high: float) -> str:
    return f"{low:.3f}" if low == high else f"between {low:.3f} and {high:.3f}"


def _who(row: RunRow) -> str:
    return f"run {row.name} ({row.n_params:,} parameters)" if row.step == shipped_runs().steps else row.name


def discarded_section(replay: Replay, lead: DeltaGenerator) -> None:
    """The second world, the table, the chart, the answers per type and the lesson."""
    lead.markdown(leads.how_it_learned(replay, len(replay) - 1))
    runs = shipped_runs()
    rows = runs.rows
    types = discarded_types()
    repeats = [t for t in types if is_repeat(t)]
    held = [t.text for t in repeats if t.held_out]
    st.container(border=True, key="learned-primer-quote").markdown(
        f"**The primer reports a rule its model never learned (§6):** “{PRIMER_QUOTE}”"
    )
    st.markdown(
        f"We rebuilt that world: the shipped world's {len(types) - len(repeats)} sentence types plus "
        f"{len(repeats)} where the subject carries an adjective that the answer repeats (*the big cat is big*). "
        f"{len(held)} of those are {link('held-out', 'held out')} of training: "
        + ", ".join(f"*{h}*" for h in held)
        + f". We trained it with four configurations and kept an early checkpoint (run {EARLY[0]} at step "
        f"{EARLY[1]:,}), and scored each with two metrics: the class metric the primer watched (the answer after "
        f"*is* or *was* is an adjective of the subject's class, on every {link('copula-slot', 'copula slot')}), and "
        "repeat accuracy (the answer is the subject's own adjective)."
    )
    n_trained = sum(not t.held_out for t in repeats)
    copula_slots = int(discarded_corpus().slot_copula.sum())
    chart(
        figures.discarded_bars(rows, copula_slots, n_trained, len(held)),
        key="learned-discarded",
        alt="Class metric and repeat accuracy per run",
    )
    share = ["class metric", f"repeat: trained ({n_trained})", f"repeat: held out ({len(held)})", "first adjective"]
    static_table(
        ["run", "parameters", *share, "configuration"],  # the figures first: on a narrow screen the text scrolls
        [
            (
                r.name,
                r.n_params,
                r.class_metric,
                r.repeat_trained,
                r.repeat_held_out,
                r.first_adjective,
                r.label,
            )
            for r in rows
        ],
        label="Runs of the discarded world",
        formats=dict.fromkeys(share, _three),
        footnote=f"Each run: {runs.steps:,} steps of the shipped recipe (AdamW, warm-up then cosine) on the "
        "discarded world's training types; seeds, learning rates (lr) and sizes as listed. “first adjective”: share of "
        "the repeat types answered with the class's first adjective (big, red). Deterministic: python -m "
        "core.training --discarded-world rewrites assets/model/discarded_world.json.",
        download=("the discarded world's runs", "learned-discarded"),
    )
    v = verdict(rows)
    learner = v.smallest_learner
    learnt = (
        f"Unlike the primer's, our runs do learn the repeat: the smallest run that gets every repeat type right, "
        f"held-out ones included, is {_who(learner)}."
        if learner is not None
        else "Like the primer's, none of our runs gets every repeat type right."
    )
    blind = (
        f" Where the class metric reads {max(r.class_metric for r in v.blind):.3f} while the repeat is still wrong on "
        "some types: "
        + "; ".join(
            f"{_who(r)}: repeat {r.repeat_trained:.3f} trained, {r.repeat_held_out:.3f} held out" for r in v.blind
        )
        + "."
        if v.blind
        else ""
    )
    explain(
        f"The class metric reads {_span(*v.class_range)} across the {len(rows)} rows; repeat accuracy reads "
        f"{_span(*v.trained_range)} on trained types and {_span(*v.held_out_range)} on held-out ones. {learnt}" + blind,
        "Two metrics on the same models tell different stories. The class metric cannot see the repeat at all: *big* "
        "and *small* are both animal adjectives, so a model that always answers *big* scores full marks on it.",
    )
    answers_table(rows)
    lesson(rows)


def answers_table(rows: tuple[RunRow, ...]) -> None:
    """Every repeat type as each run answered it: the top word and the probability on the right one."""
    with st.expander("Each repeat type, as each run answered it"):
        columns = ["prompt", "held out", *(f"{r.name}: top word (P of the repeat)" for r in rows)]
        body = []
        for i, answer in enumerate(rows[0].answers):
            cells = [f"{r.answers[i].top} ({r.answers[i].p_repeat:.3f})" for r in rows]
            body.append((answer.prompt, "yes" if answer.held_out else "", *cells))
        static_table(
            columns,
            body,
            label="Repeat types, answered",
            footnote="The top word after the copula, and in brackets the probability on the subject's own adjective "
            "(the right answer).",
            download=("the answers", "learned-discarded-answers"),
        )


def lesson(rows: tuple[RunRow, ...]) -> None:
    """The section's end: the primer's lesson, quoted, and what the two metrics showed here."""
    v = verdict(rows)
    early = next((r for r in rows if r.step != shipped_runs().steps), None)
    here = (
        f"Here the class metric read {_span(*v.class_range)} on every row, while repeat accuracy ran from "
        f"{min(v.trained_range[0], v.held_out_range[0]):.3f} to {max(v.trained_range[1], v.held_out_range[1]):.3f}"
    )
    if early is not None:
        here += (
            f"; at the early checkpoint ({early.name}) the class metric already read {early.class_metric:.3f} while "
            f"the repeat was right on {early.repeat_trained:.3f} of trained and {early.repeat_held_out:.3f} of "
            "held-out types"
        )
    st.container(border=True, key="learned-lesson").markdown(
        f"#### “{LESSON}”\n\n— the primer, §6\n\n{here}. Only the metric that scores the repeat could tell whether "
        "the repeat was learnt."
    )
