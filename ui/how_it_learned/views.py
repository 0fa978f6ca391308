"""How it learned: the replay (a step slider with play/pause, the curves, the embedding map, the four heads and what
changed between milestones) and the eight siblings. Every figure and sentence is read from the replay's checkpoints
(assets/model/checkpoints.json, or a replay retrained live in this session) and the family's training logs; a step
change is a lookup plus, for the heads, one cached 4-token pass.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.explain.checkpoints import (
    BIGRAM_PROMPT,
    COPULA_PROMPT,
    Change,
    Milestone,
    Replay,
    change,
    family_emergence,
    milestones,
)
from core.explain.recipe import MAIN_SEED, RECIPE
from core.explain.world import corpus
from ui.elements import leads
from ui.elements.glossary import link, tip
from ui.elements.static_table import static_table
from ui.elements.widgets import chart, explain
from ui.how_it_learned import figures
from ui.how_it_learned.live import retrain_box
from ui.how_it_learned.state import PLAY_SECONDS, PLAYING, PROMPT, PROMPTS, STEP, advance, toggle_play

_COPULA = [t for t in corpus().types if t.family == "copula"]
N_COPULA = len(_COPULA)  # the world's copula sentence types
N_HELD_COPULA = sum(t.held_out for t in _COPULA)  # those held out of training: what rule accuracy scores
N_BIGRAM = int((~corpus().slot_copula).sum())  # every other next-word decision
ACCURACIES = (
    ("rule_accuracy_held_out", f"rule accuracy ({N_HELD_COPULA} held-out copula types)"),
    ("copula_class_accuracy", f"right class, all {N_COPULA} copula types"),
    ("bigram_top1", f"top-1, {N_BIGRAM} bigram slots"),
)
ANSWERS = (
    ("p_on", "P(on | the cat sat)"),
    ("class_mass", "class mass after the cat is"),
    ("class_mass_mean", f"class mass, mean of {N_COPULA} copula types"),
)


def _q(tokens: tuple[str, ...]) -> str:
    """A prompt in running text without <BOS>: 'the cat sat'."""
    return " ".join(t for t in tokens if t != "<BOS>")


def _moved(before: float, after: float, what: str) -> str:
    """'the loss fell from 3.665 to 0.913' / 'rose' / 'stayed at'."""
    if round(before, 3) == round(after, 3):
        return f"{what} stayed at {after:.3f}"
    return f"{what} {'rose' if after > before else 'fell'} from {before:.3f} to {after:.3f}"


def change_text(ch: Change) -> str:
    """What changed between two milestones, in plain words, every figure from the checkpoints."""
    f = ch.figures
    parts = [
        _moved(*f["loss"], "the loss"),
        _moved(*f["p_on"], f"P(on | {_q(BIGRAM_PROMPT)})"),
        _moved(*f["class_mass"], f"the class mass after *{_q(COPULA_PROMPT)}*"),
        _moved(*f["rule_accuracy_held_out"], "the held-out rule accuracy"),
        _moved(*f["bigram_top1"], "bigram top-1"),
    ]
    gap_before, gap_after = f["noun_gap"]
    apart = "further apart" if gap_after > gap_before else "closer together"
    head_before, head_after = ch.head_attention
    return (
        f"**From step {ch.before.step:,} ({ch.before.name}) to step {ch.after.step:,} ({ch.after.name}):** "
        + "; ".join(parts)
        + f". The animals' and the surfaces' embedding rows moved {apart} relative to their spread inside a class "
        f"(gap {gap_before:.1f} → {gap_after:.1f}). The head whose attention from *is* onto *cat* moved most is "
        f"{ch.head}: {head_before:.3f} → {head_after:.3f}."
    )


@lru_cache(maxsize=16)  # 16 × ~0.5 kB
def _milestones(replay: Replay) -> tuple[Milestone, ...]:
    return milestones(replay)


@lru_cache(maxsize=64)  # 64 × ~1 kB
def _change(replay: Replay, at: int) -> Change:
    marks = _milestones(replay)
    return change(replay, marks[at], marks[at + 1])


def _segment(replay: Replay, index: int) -> Change:
    """The milestones around the shown checkpoint: the last one at or before it and the next one (the last two at
    the end of training)."""
    marks = _milestones(replay)
    at = max(i for i, m in enumerate(marks) if m.index <= index)
    return _change(replay, min(at, len(marks) - 2))


def play_button(replay: Replay) -> None:
    """Play / pause, outside the step fragment: pressing it reruns the page, which declares the fragment again with
    (or without) its timer."""
    playing = bool(st.session_state.get(PLAYING))
    st.button(
        "Pause" if playing else "Play the training",
        key="learned_play",
        icon=":material/pause:" if playing else ":material/play_arrow:",
        on_click=toggle_play,
        args=(replay,),
        help=f"Moves the slider one checkpoint every {PLAY_SECONDS:g} s, from the start (or from where it is) to "
        "the end of training.",
    )


def replay_section(replay: Replay, lead: DeltaGenerator) -> None:
    """The replay: play/pause, then the step fragment (on a timer while playing)."""
    play_button(replay)
    run_every = PLAY_SECONDS if st.session_state.get(PLAYING) else None
    st.fragment(run_every=run_every)(replay_step)(replay, lead)
    retrain_box(replay)


def replay_step(replay: Replay, lead: DeltaGenerator) -> None:
    """The step slider and everything it moves (a fragment: a step reruns only this part and the lead above)."""
    advance(replay)
    steps = replay.steps.tolist()
    if STEP not in st.session_state and STEP not in st.query_params:
        st.session_state[STEP] = steps[-1]
    step = st.select_slider(
        f"Training step: {len(replay)} checkpoints, log-spaced from {steps[0]:,} to {steps[-1]:,}",
        steps,
        key=STEP,
        bind="query-params",
        help="Each position is a checkpoint of the shipped model's own training run (assets/model/checkpoints.json). "
        "Steps are log-spaced because most of the change happens early.",
    )
    index = replay.index(step)
    lead.markdown(leads.how_it_learned(replay, index))
    marks = _milestones(replay)
    st.caption("Milestones: " + " · ".join(f"step {m.step:,}: {m.name}" for m in marks))
    st.container(border=True).markdown(change_text(_segment(replay, index)))
    a, b = st.columns(2)
    with a:
        chart(
            figures.curves(replay, (("loss", "training loss"),), index, "training loss (cross-entropy)", "loss"),
            key="learned-loss",
            alt="Training loss over the checkpoints, the shown step marked",
        )
    with b:
        chart(
            figures.curves(replay, ACCURACIES, index, "what the model gets right", "share"),
            key="learned-accuracy",
            alt="Rule accuracy, copula class accuracy and bigram top-1 over the checkpoints",
        )
    first, stays = replay.emergence
    values = {name: float(replay.values[name][index]) for name, _ in (*ACCURACIES, *ANSWERS, ("loss", ""))}
    explain(
        f"At step {step:,} the loss is {values['loss']:.3f} (it starts at {replay.values['loss'][0]:.3f} and ends "
        f"at {replay.values['loss'][-1]:.3f}); the model answers inside the subject's class on "
        f"{values['rule_accuracy_held_out']:.0%} of the held-out copula types and puts the right word first on "
        f"{values['bigram_top1']:.0%} of the bigram slots. The dashed line is step {first:,}, the first checkpoint "
        "where every held-out copula type is answered inside its class"
        + (f"; it holds from step {stays:,} to the end." if stays is not None else ".")
        if first is not None
        else f"At step {step:,} the loss is {values['loss']:.3f}; no checkpoint answers every held-out copula type.",
        "The loss is what training lowers; the rule is what we wanted. They move at different times: the loss falls "
        "steadily while the rule appears in a jump, so a loss curve alone would not say when the model learnt it. "
        f"Bigram top-1 ends at {replay.values['bigram_top1'][-1]:.3f}, short of full marks, because the world leaves "
        "several next words open (after *the*, any noun).",
    )
    c, d = st.columns(2)
    with c:
        chart(
            figures.curves(replay, ANSWERS, index, "the answers the primer prints, step by step", "probability"),
            key="learned-answers",
            alt="P(on | the cat sat) and the class mass over the checkpoints",
        )
    with d:
        fig, emap = figures.embeddings(replay, index)
        chart(fig, key="learned-embedding", alt=f"Embedding rows in two dimensions at step {step:,}")
    explain(
        f"After *{_q(BIGRAM_PROMPT)}* the model puts {values['p_on']:.3f} on *on* at this step; after "
        f"*{_q(COPULA_PROMPT)}* it puts {values['class_mass']:.3f} on *big* and *small* together "
        f"({link('class-mass', 'class mass')}), {values['class_mass_mean']:.3f} on average over the {N_COPULA} copula "
        f"types. On the right, the {replay.config.vocab_size} rows of E ({link('embedding', 'embeddings')}) drawn in "
        f"the plane that shows the final model's rows best ({emap.explained:.0%} of their spread), fitted once so "
        "the picture does not spin.",
        "Training is, in the primer's words, the search for weights that put every entity in the right place: here "
        "you watch the words find their places. Words that play the same part in a sentence end up near each "
        "other, which is what lets the model treat a sentence it never saw like the ones it did.",
    )
    heads(replay, index)


def heads(replay: Replay, index: int) -> None:
    """The four heads' attention weights on the chosen prompt at the shown step (2 × 2, one chart per head)."""
    st.selectbox(
        "Prompt for the attention patterns",
        PROMPTS,
        key=PROMPT,
        bind="query-params",
        help=tip("attention-head"),
    )
    tokens = tuple((st.session_state.get(PROMPT) or PROMPTS[0]).split())
    config = replay.config
    pairs = [(layer, head) for layer in range(config.n_layers) for head in range(config.n_heads)]
    for row in range(0, len(pairs), 2):
        columns = st.columns(2)
        for column, (layer, head) in zip(columns, pairs[row : row + 2], strict=True):
            with column:
                chart(
                    figures.head_map(replay, index, tokens, layer, head),
                    key=f"learned-head-{layer}-{head}",
                    alt=f"Attention weights of layer {layer + 1}, head {head + 1} at step {int(replay.steps[index]):,}",
                )
    last = figures.patterns(replay, index, tokens)[:, :, -1, :]
    start = figures.patterns(replay, 0, tokens)[:, :, -1, :]
    focus = [(layer, head, int(last[layer, head].argmax())) for layer, head in pairs]
    explain(
        f"Rows are the reading word, columns the word read; each row sums to 1. At this step the last word, "
        f"*{tokens[-1]}*, reads most from: "
        + "; ".join(f"layer {la + 1}, head {he + 1}: *{tokens[k]}* {last[la, he, k]:.2f}" for la, he, k in focus)
        + f". At step {int(replay.steps[0]):,} its largest weight in any head was {start.max():.2f}; at this step it "
        f"is {last.max():.2f}.",
        "Where each head looks is learnt like everything else: play the training and watch each pattern form. A "
        "bright cell shows where a head looks, not that the answer depends on it; the ablation lab tests that.",
    )


def siblings_section(replay: Replay, lead: DeltaGenerator) -> None:
    """The shipped run and its eight siblings: when the copula rule appears in each (from their training logs)."""
    lead.markdown(leads.how_it_learned(replay, len(replay) - 1))
    runs = family_emergence()
    last = int(replay.steps[-1])
    chart(figures.siblings(runs, last), key="learned-siblings", alt="Rule-emergence step of each seeded run")
    static_table(
        ["run", "rule first holds (logged step)", "holds from (logged step)", "final loss"],
        [
            (f"seed {r.seed}" + (" (shipped)" if r.seed == MAIN_SEED else ""), r.first, r.stays, round(r.final_loss, 4))
            for r in runs
        ],
        label="Rule emergence, run by run",
        footnote=f"Read from assets/model/logs/seed_XX.json, logged every {RECIPE.log_every} steps while each model "
        "trained.",
        download=("rule emergence", "learned-siblings"),
    )
    main, others = runs[0], runs[1:]
    firsts = [r.first for r in others if r.first is not None]
    stays = [r.stays for r in others if r.stays is not None]
    first, _ = replay.emergence
    explain(
        f"The shipped run (seed {main.seed}) first answers every held-out copula type inside its class at logged step "
        f"{main.first:,} and holds it from step {main.stays:,}; its {len(others)} siblings, trained the same way from "
        f"other seeds, first get there between step {min(firsts):,} and {max(firsts):,} and hold it from between "
        f"step {min(stays):,} and {max(stays):,}. (The replay's checkpoints, denser early, catch seed {main.seed}'s "
        f"first at step {first:,}.)",
        "The same recipe on the same data learns the rule in every run, but not at the same moment: when a "
        "capability appears is a fact about one run, not about the method. Judge a recipe by several runs.",
    )


def section_views() -> list[Callable[[Replay, DeltaGenerator], None]]:
    """The page's sections in tab order (the third lives in ui/how_it_learned/discarded.py)."""
    from ui.how_it_learned.discarded import discarded_section

    return [replay_section, siblings_section, discarded_section]
