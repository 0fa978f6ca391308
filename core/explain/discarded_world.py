"""The primer's discarded second rule, reproduced: a world where a copula subject may carry an adjective that the
answer must repeat (*the big cat is big*; *the big cat is small* is not a sentence).

Primer §6: "An earlier version let the subject carry an adjective at the copula and required is to repeat it … The
model never learned it. Across four training configurations and an early checkpoint it answered the class's first
adjective whatever the subject adjective was, getting the repeat right on between a half and three quarters of those
sentence types, no better on the ones it had trained on than on the held-out ones. The behavioural metric I was
watching scores the class … so it read 1.000 throughout and reported nothing."

This module defines that world (80 sentence types: the shipped world's 64 plus 16 repeat types), the four training
configurations and the early checkpoint we ran, and the two metrics side by side: the class metric the primer
watched, and repeat accuracy on trained and on held-out repeat types. `python -m core.training --discarded-world`
trains the runs (core.explain.training, torch) and writes assets/model/discarded_world.json with the table and every
run's weights, so the engine can recompute the table from the file (tests/unit/test_discarded_world.py). numpy only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

from core.explain.analysis import score_slots
from core.explain.transformer import PRIMER_CONFIG, Config, Model, parameter_shapes
from core.explain.weights import MODEL_DIR
from core.explain.world import (
    ANIMALS,
    CLASS_ADJECTIVES,
    COPULAS,
    NOUN_CLASS,
    SURFACES,
    VOCABULARY,
    Corpus,
    SentenceType,
    build_corpus,
    sentence_types,
)

ASSET = MODEL_DIR / "discarded_world.json"
FORMAT = "discarded-world-runs/1"
# Held out of training among the 16 repeat types: one per noun, each keeping its sibling with the other copula (and
# the same adjective) in training, as the shipped world keeps a held-out copula type's sibling.
HELD_OUT_REPEATS = frozenset(
    {"the big cat was big", "the small dog is small", "the blue mat is blue", "the red floor was red"}
)
LESSON = "A metric is evidence about the thing it scores and about nothing else."


@cache
def discarded_types() -> tuple[SentenceType, ...]:
    """The shipped world's 64 types (same held-out split) and the 16 repeat types: the [adjective] noun is/was
    [the same adjective], for every noun, copula and adjective of the noun's class."""
    rows = list(sentence_types())
    for noun in (*ANIMALS, *SURFACES):
        for copula in COPULAS:
            for adjective in CLASS_ADJECTIVES[NOUN_CLASS[noun]]:
                words = ("the", adjective, noun, copula, adjective)
                rows.append(SentenceType(len(rows), words, "copula", noun, " ".join(words) in HELD_OUT_REPEATS))
    return tuple(rows)


@lru_cache(maxsize=3)  # 3 × ~50 kB: all, training, held out
def discarded_corpus(held_out: bool | None = None) -> Corpus:
    """The discarded world's types as a corpus (all 80, or the training / held-out ones), allowed sets from its own
    grammar."""
    types = discarded_types()
    chosen = types if held_out is None else tuple(t for t in types if t.held_out == held_out)
    return build_corpus(chosen, grammar=types)


def is_repeat(kind: SentenceType) -> bool:
    """A copula type whose subject carries an adjective (the answer must repeat it)."""
    return kind.family == "copula" and len(kind.words) == 5


@dataclass(frozen=True)
class RunConfig:
    """One training configuration of the discarded world: its name, seed, learning rate and architecture."""

    name: str
    label: str
    seed: int
    learning_rate: float
    config: Config


WIDE = Config(vocab_size=20, d_model=12, n_heads=2, d_head=6, n_layers=2, d_ff=24)
WIDER = Config(vocab_size=20, d_model=16, n_heads=4, d_head=4, n_layers=2, d_ff=64)
RUNS = (
    RunConfig("A", "primer's shape, seed 0, lr 0.03 (the shipped recipe)", 0, 0.03, PRIMER_CONFIG),
    RunConfig("B", "primer's shape, seed 1, lr 0.01", 1, 0.01, PRIMER_CONFIG),
    RunConfig("C", "d_model 12, 2 heads of 6, d_ff 24, seed 0, lr 0.03", 0, 0.03, WIDE),
    RunConfig("D", "d_model 16, 4 heads of 4, d_ff 64, seed 2, lr 0.01", 2, 0.01, WIDER),
)
EARLY = ("A", 200)  # the early checkpoint: run A after 200 of its 2,000 steps
# "lr" in a label is the learning rate (the peak of the warm-up and cosine schedule)


@dataclass(frozen=True)
class Answer:
    """One repeat type as a model answers it at the copula: the prompt, its split, the top word and probabilities."""

    prompt: str
    held_out: bool
    top: str
    p_top: float
    p_repeat: float  # probability on the subject's own adjective (the right answer)


@dataclass(frozen=True)
class RunRow:
    """One row of the table: a run (or the early checkpoint) and its metrics on the discarded world."""

    name: str
    label: str
    step: int
    n_params: int
    loss: float  # mean cross-entropy on the discarded world's training types
    class_metric: float  # right class on all 32 copula slots: the metric the primer watched
    repeat_trained: float  # repeat right on the 12 trained repeat types
    repeat_held_out: float  # repeat right on the 4 held-out repeat types
    first_adjective: float  # share of the 16 repeat types answered with the class's first adjective (big, red)
    answers: tuple[Answer, ...]


def evaluate(model: Model, name: str, label: str, step: int) -> RunRow:
    """Score a model on the discarded world: the class metric and repeat accuracy, in one batched pass each."""
    train = score_slots(model, discarded_corpus(held_out=False))
    data = train.data
    loss = float(-np.log(train.probs[np.arange(data.n_slots), data.slot_target]).mean())
    scores = score_slots(model, discarded_corpus())
    data = scores.data
    copula = np.flatnonzero(data.slot_copula)
    repeat = [s for s in copula if is_repeat(data.types[int(data.slot_sentence[s])])]
    right = scores.top[repeat] == data.slot_target[repeat]
    held = np.array([data.types[int(data.slot_sentence[s])].held_out for s in repeat])
    first = np.array([CLASS_ADJECTIVES[NOUN_CLASS[data.types[int(data.slot_sentence[s])].subject]][0] for s in repeat])
    answers = []
    for s in repeat:
        kind, top = data.types[int(data.slot_sentence[s])], int(scores.top[s])
        answers.append(
            Answer(
                prompt=" ".join(kind.words[:4]),
                held_out=kind.held_out,
                top=model.vocabulary[top],
                p_top=float(scores.probs[s, top]),
                p_repeat=float(scores.probs[s, data.slot_target[s]]),
            )
        )
    return RunRow(
        name=name,
        label=label,
        step=step,
        n_params=model.n_params,
        loss=loss,
        class_metric=float(scores.right_class[copula].mean()),
        repeat_trained=float(right[~held].mean()),
        repeat_held_out=float(right[held].mean()),
        first_adjective=float(np.mean([a.top == f for a, f in zip(answers, first, strict=True)])),
        answers=tuple(answers),
    )


@dataclass(frozen=True)
class DiscardedRuns:
    """The shipped table: one row per run and the early checkpoint, and each row's weights (to recompute it)."""

    rows: tuple[RunRow, ...]
    models: tuple[Model, ...]
    steps: int
    doc: Mapping[str, object]


def _row_json(row: RunRow, model: Model) -> dict:
    return {**asdict(row), "answers": [asdict(a) for a in row.answers], "config": asdict(model.config)}


def save(rows: list[RunRow], models: list[Model], steps: int, path: Path = ASSET) -> Path:
    """Write the table and the weights (flattened row by row in parameter order, unrounded) as documented JSON."""
    header = {
        "format": FORMAT,
        "about": "The primer's discarded second rule (§6), reproduced: a copula subject may carry an adjective that "
        "the answer must repeat (the big cat is big). Four training configurations and an early checkpoint, each "
        "scored by the class metric the primer watched (right class on all copula slots) and by repeat accuracy on "
        "trained and on held-out repeat types. Written by `python -m core.training --discarded-world` "
        "(deterministic); see docs/model.md.",
        "world": {
            "types": len(discarded_types()),
            "repeat_types": sum(is_repeat(t) for t in discarded_types()),
            "held_out": sorted(t.text for t in discarded_types() if t.held_out),
        },
        "recipe": f"as the shipped model's ({steps} steps, AdamW, warm-up then cosine), on the discarded world's "
        f"{len(discarded_corpus(held_out=False).types)} training types; seeds, learning rates and sizes per run",
        "early_checkpoint": {"run": EARLY[0], "step": EARLY[1]},
        "lesson": LESSON,
        "steps": steps,
    }
    lines = json.dumps(header, indent=1, ensure_ascii=False)[:-2].splitlines()
    lines[-1] += ","
    lines.append(' "runs": [')
    for i, (row, model) in enumerate(zip(rows, models, strict=True)):
        flat = np.concatenate([np.asarray(model.params[n]).ravel() for n in parameter_shapes(model.config)])
        body = (
            json.dumps(_row_json(row, model), ensure_ascii=False)[:-1] + ',\n   "weights": ' + json.dumps(flat.tolist())
        )
        lines.append("  " + body + "}" + ("," if i < len(rows) - 1 else ""))
    lines += [" ]", "}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def load(path: Path = ASSET) -> DiscardedRuns:
    """Read the shipped table and each row's model (format and weight counts checked)."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} file")
    rows, models = [], []
    for run in doc["runs"]:
        config = Config(**run["config"])
        shapes = parameter_shapes(config)
        sizes = [int(np.prod(s)) for s in shapes.values()]
        flat = np.array(run["weights"], dtype=np.float64)
        if flat.size != sum(sizes):
            raise ValueError(f"{path}: run {run['name']} holds {flat.size} weights, not {sum(sizes)}")
        parts = np.split(flat, np.cumsum(sizes)[:-1])
        params = {n: p.reshape(s) for (n, s), p in zip(shapes.items(), parts, strict=True)}
        models.append(Model(config, params, VOCABULARY, ("<BOS>", "the", "big", "cat", "is")))
        fields = {k: v for k, v in run.items() if k not in ("weights", "config", "answers")}
        rows.append(RunRow(**fields, answers=tuple(Answer(**a) for a in run["answers"])))
    meta = {k: v for k, v in doc.items() if k != "runs"}
    return DiscardedRuns(tuple(rows), tuple(models), int(doc["steps"]), meta)


@cache
def shipped_runs() -> DiscardedRuns:
    """The shipped table (assets/model/discarded_world.json), read once per server."""
    return load()


@dataclass(frozen=True)
class Verdict:
    """What the table says, in figures: each metric's range over the rows, the smallest run that gets every repeat
    type right (trained and held out), and the rows where the class metric reads full while the repeat does not."""

    class_range: tuple[float, float]
    trained_range: tuple[float, float]
    held_out_range: tuple[float, float]
    smallest_learner: RunRow | None
    blind: tuple[RunRow, ...]


def verdict(rows: tuple[RunRow, ...]) -> Verdict:
    """Summarise the table (see Verdict)."""

    def span(values: list[float]) -> tuple[float, float]:
        return (min(values), max(values))

    learners = [r for r in rows if r.repeat_trained == 1.0 and r.repeat_held_out == 1.0]
    return Verdict(
        class_range=span([r.class_metric for r in rows]),
        trained_range=span([r.repeat_trained for r in rows]),
        held_out_range=span([r.repeat_held_out for r in rows]),
        smallest_learner=min(learners, key=lambda r: (r.n_params, r.step)) if learners else None,
        blind=tuple(r for r in rows if r.class_metric == 1.0 and min(r.repeat_trained, r.repeat_held_out) < 1.0),
    )
