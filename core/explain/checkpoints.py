"""The training replay: ~40 snapshots of the shipped model's own training run, and what the page reads from them.

`python -m core.training` keeps the weights of the seed-0 run (the shipped model's: same seed, recipe and corpus) at
step 0 and at 39 log-spaced steps up to the last, and writes them to assets/model/checkpoints.json with the metrics
the engine computes from each (loss, rule accuracy, P(on | the cat sat), class mass on the copula prompt, …). The
last snapshot is the shipped model bit for bit (tests/unit/test_checkpoints.py). Log spacing puts most snapshots
where training changes fastest, at the start.

Everything here is numpy: the page looks a step up instead of running the corpus through the model per click; the
per-prompt forward pass for the attention patterns is one 4-token pass, cached.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

import numpy as np

from core.explain.analysis import head_label, heads, score_slots
from core.explain.trace_views import rule_emergence
from core.explain.transformer import Config, Model, forward, parameter_shapes
from core.explain.weights import LOG_DIR, MAIN, MODEL_DIR, trained_model
from core.explain.world import CLASS_ADJECTIVES, NOUN_CLASS, corpus, training_corpus

CHECKPOINTS = MODEL_DIR / "checkpoints.json"
FORMAT = "tiny-transformer-checkpoints/1"
LIVE_SOURCE = "retrained live"  # a replay's source when the page retrained it in the reader's session
COUNT = 40  # snapshots kept: step 0 and 39 log-spaced steps up to the last
BIGRAM_PROMPT = ("<BOS>", "the", "cat", "sat")  # the primer's §6 prompt: P(on) is its answer
COPULA_PROMPT = ("<BOS>", "the", "cat", "is")  # the primer's copula prompt: the class mass is its answer

METRICS = {
    "loss": "mean cross-entropy over every next-token decision of the 56 training types (what training lowers)",
    "rule_accuracy_held_out": "share of the 5 held-out copula types answered inside the subject noun's class",
    "copula_class_accuracy": "share of all 16 copula types answered inside the subject noun's class",
    "bigram_top1": "share of the 432 bigram slots whose top prediction is the token that comes next",
    "p_on": "P(on | <BOS> the cat sat)",
    "class_mass": "P(big) + P(small) after <BOS> the cat is (the probability on the subject class's two adjectives)",
    "class_mass_mean": "the class mass averaged over the 16 copula types",
}

# Word classes the embedding picture colours by. fast/slow (after ran) count as adjectives; the four markers and the
# two words that only glue a sentence together (the, on) are function words.
WORD_CLASSES = ("noun", "adjective", "verb", "function word")
WORD_CLASS = {
    **dict.fromkeys(("cat", "dog", "mat", "floor"), "noun"),
    **dict.fromkeys(("big", "small", "red", "blue", "fast", "slow"), "adjective"),
    **dict.fromkeys(("sat", "ran", "is", "was"), "verb"),
    **dict.fromkeys(("<PAD>", "<BOS>", "<EOS>", "<SEP>", "the", "on"), "function word"),
}


def checkpoint_steps(steps: int, count: int = COUNT) -> tuple[int, ...]:
    """Step 0 and `count` − 1 distinct steps log-spaced from 1 to `steps` (rounded), so the last is the end of
    training. The geometric grid is made denser until rounding leaves exactly `count` − 1 distinct steps."""
    if steps < count - 1:
        raise ValueError(f"{steps} steps hold fewer than {count - 1} distinct log-spaced steps")
    n = count - 1
    while True:
        grid = sorted({round(x) for x in np.geomspace(1, steps, n)})
        if len(grid) >= count - 1:
            break
        n += 1
    if len(grid) > count - 1:  # drop the surplus from the densest (earliest) end, keeping step 1
        extra = len(grid) - (count - 1)
        grid = [grid[0], *grid[1 + extra :]]
    return (0, *grid)


def metrics(model: Model) -> dict[str, float]:
    """The replay's metrics of one set of weights, computed by the engine (batched passes over the world)."""
    train = score_slots(model, training_corpus())
    data = train.data
    loss = -np.log(train.probs[np.arange(data.n_slots), data.slot_target]).mean()
    scores = score_slots(model, corpus())
    copula = scores.data.slot_copula
    on = forward(model, model.encode(BIGRAM_PROMPT))["hook_probs"][-1][model.vocabulary.index("on")]
    probs = forward(model, model.encode(COPULA_PROMPT))["hook_probs"][-1]
    adjectives = CLASS_ADJECTIVES[NOUN_CLASS[COPULA_PROMPT[-2]]]
    return {
        "loss": float(loss),
        "rule_accuracy_held_out": scores.rule_accuracy,
        "copula_class_accuracy": scores.copula_class_accuracy,
        "bigram_top1": scores.bigram_top1,
        "p_on": float(on),
        "class_mass": float(sum(probs[model.vocabulary.index(a)] for a in adjectives)),
        "class_mass_mean": float(scores.class_mass[copula].mean()),
    }


@dataclass(frozen=True, eq=False)
class Replay:
    """The snapshots of one training run: steps, the engine's metrics at each, and the weights (read-only). Compared
    and hashed by identity, so caches can key on a replay."""

    config: Config
    vocabulary: tuple[str, ...]
    steps: np.ndarray  # (n,) int
    values: Mapping[str, np.ndarray]  # metric name -> (n,) float
    weights: tuple[Mapping[str, np.ndarray], ...]  # one parameter mapping per step
    source: str  # where the replay came from: the asset's path, or "retrained live"
    _models: dict[int, Model] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return int(self.steps.size)

    def index(self, step: int) -> int:
        """The snapshot nearest to `step` (the earlier one on a tie)."""
        return int(np.argmin(np.abs(self.steps - int(step))))

    def model(self, i: int) -> Model:
        """The engine model at snapshot i (built on first use, kept with the replay)."""
        if i not in self._models:
            self._models[i] = Model(self.config, dict(self.weights[i]), self.vocabulary, BIGRAM_PROMPT)
        return self._models[i]

    @cached_property
    def emergence(self) -> tuple[int | None, int | None]:
        """The first snapshot step where every held-out copula type is answered in class, and the step from which
        that holds to the end (None when it never does)."""
        return rule_emergence(self.steps.tolist(), self.values["rule_accuracy_held_out"].tolist())


def replay_from(snapshots: Sequence[tuple[int, Mapping[str, np.ndarray]]], base: Model, source: str) -> Replay:
    """A replay made from (step, weights) snapshots of a run of `base`'s shape, its metrics computed here."""
    steps = np.array([step for step, _ in snapshots], dtype=np.int64)
    models = [Model(base.config, dict(w), base.vocabulary, BIGRAM_PROMPT) for _, w in snapshots]
    rows = [metrics(m) for m in models]
    values = {name: np.array([row[name] for row in rows]) for name in METRICS}
    for array in (steps, *values.values()):
        array.setflags(write=False)
    return Replay(base.config, base.vocabulary, steps, values, tuple(m.params for m in models), source)


def save(replay: Replay, seed: int, total_steps: int, path: Path = CHECKPOINTS) -> Path:
    """Write the replay as documented JSON: a header, then one checkpoint per line (its metrics, then every weight in
    the header's parameter order, unrounded: float64 decimals that round-trip exactly)."""
    shapes = parameter_shapes(replay.config)
    header = {
        "format": FORMAT,
        "about": "Snapshots of the shipped model's own training run (seed, recipe and corpus of "
        f"{MAIN.name}), at step 0 and {len(replay) - 1} log-spaced steps up to {total_steps}; the last is the "
        "shipped model bit for bit. Each checkpoint lists the engine's metrics of its weights and the weights "
        "themselves, flattened row by row in the order of `parameters`. Written by `python -m core.training`; see "
        "docs/model.md.",
        "model": MAIN.name,
        "seed": seed,
        "steps": total_steps,
        "prompts": {"p_on": list(BIGRAM_PROMPT), "class_mass": list(COPULA_PROMPT)},
        "metrics": METRICS,
    }
    lines = json.dumps(header, indent=1, ensure_ascii=False)[:-2].splitlines()
    lines[-1] += ","
    lines.append(' "parameters": [')
    names = list(shapes)
    lines += [f"  {json.dumps([n, list(shapes[n])])}" + ("," if n != names[-1] else "") for n in names]
    lines += [" ],", ' "checkpoints": [']
    for i in range(len(replay)):
        row = {"step": int(replay.steps[i]), **{name: float(replay.values[name][i]) for name in METRICS}}
        flat = np.concatenate([np.asarray(replay.weights[i][name]).ravel() for name in shapes])
        body = json.dumps(row)[:-1] + ',\n   "weights": ' + json.dumps(flat.tolist()) + "}"
        lines.append("  " + body + ("," if i < len(replay) - 1 else ""))
    lines += [" ]", "}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def load(path: Path = CHECKPOINTS) -> Replay:
    """Read a replay file; checks its format and that every checkpoint holds the right number of weights."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} file")
    base = trained_model()
    shapes = {name: tuple(shape) for name, shape in doc["parameters"]}
    if shapes != parameter_shapes(base.config):
        raise ValueError(f"{path}: its parameters are not those of {MAIN.name}")
    sizes = [int(np.prod(shape)) for shape in shapes.values()]
    weights = []
    for checkpoint in doc["checkpoints"]:
        flat = np.array(checkpoint["weights"], dtype=np.float64)
        if flat.size != sum(sizes):
            raise ValueError(f"{path}: step {checkpoint['step']} holds {flat.size} weights, not {sum(sizes)}")
        parts = np.split(flat, np.cumsum(sizes)[:-1])
        pairs = zip(shapes.items(), parts, strict=True)
        weights.append({name: _frozen(part.reshape(shape)) for (name, shape), part in pairs})
    steps = _frozen(np.array([c["step"] for c in doc["checkpoints"]], dtype=np.int64))
    values = {name: _frozen(np.array([c[name] for c in doc["checkpoints"]], dtype=np.float64)) for name in METRICS}
    return Replay(base.config, base.vocabulary, steps, values, tuple(weights), str(Path(path).name))


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@cache
def shipped_replay() -> Replay:
    """The shipped replay (assets/model/checkpoints.json), read once per server."""
    return load()


# ------------------------------------------------------------------------------------------------ what a step shows
def head_patterns(model: Model, tokens: Sequence[str]) -> np.ndarray:
    """Every head's attention pattern on a prompt: (layers, heads, T, T), rows = queries (causal)."""
    trace = forward(model, model.encode(tokens))
    return np.stack([trace[f"blocks.{layer}.attn.hook_pattern"] for layer in range(model.config.n_layers)])


@dataclass(frozen=True)
class EmbeddingMap:
    """Every snapshot's embedding rows E in the plane of the final model's first two principal components (fitted
    once, so the picture does not spin from step to step), and the share of the final rows' spread it shows."""

    points: np.ndarray  # (n_snapshots, V, 2)
    explained: float  # share of the final E's variance in the two components
    classes: tuple[str, ...]  # word class of each token, in vocabulary order


def embedding_map(replay: Replay) -> EmbeddingMap:
    """Project each snapshot's E onto the final E's two leading principal axes (centred on the final rows' mean).
    Each axis's sign is fixed so its largest loading is positive (the same picture on every machine)."""
    final = np.asarray(replay.weights[-1]["E"])
    centre = final.mean(axis=0)
    _, singular, axes = np.linalg.svd(final - centre, full_matrices=False)
    axes = axes[:2] * np.sign(axes[:2][np.arange(2), np.abs(axes[:2]).argmax(axis=1)])[:, None]
    points = np.stack([(np.asarray(w["E"]) - centre) @ axes.T for w in replay.weights])
    explained = float((singular[:2] ** 2).sum() / (singular**2).sum())
    return EmbeddingMap(points, explained, tuple(WORD_CLASS[token] for token in replay.vocabulary))


def noun_gap(E: np.ndarray, vocabulary: Sequence[str]) -> float:
    """How far apart the animals' and the surfaces' embedding rows sit: the distance between the two classes' mean
    rows divided by the mean distance of a noun's row from its class mean (larger = classes apart, rows together)."""
    rows = {noun: np.asarray(E)[list(vocabulary).index(noun)] for noun in NOUN_CLASS}
    means = {kind: np.mean([rows[n] for n in NOUN_CLASS if NOUN_CLASS[n] == kind], axis=0) for kind in CLASS_ADJECTIVES}
    spread = np.mean([np.linalg.norm(rows[n] - means[NOUN_CLASS[n]]) for n in NOUN_CLASS])
    return float(np.linalg.norm(means["animal"] - means["surface"]) / spread)


# ------------------------------------------------------------------------------------------- milestones and changes
@dataclass(frozen=True)
class Milestone:
    """A snapshot worth stopping at: its index, step and what happened there, in a few words."""

    index: int
    step: int
    name: str


def milestones(replay: Replay) -> tuple[Milestone, ...]:
    """Start, the first step *on* is the favourite after *the cat sat*, the first step the copula rule holds on every
    held-out type, the step from which it keeps holding (if later), and the end, in step order, one per step."""
    found: list[tuple[int, str]] = [(0, "random start")]
    on = np.flatnonzero(replay.values["p_on"] > 0.5)
    if on.size:
        found.append((int(on[0]), "on becomes the likeliest word after the cat sat"))
    first, stays = replay.emergence
    if first is not None:
        found.append((replay.index(first), "the copula rule first holds on every held-out type"))
    if stays is not None and stays != first:
        found.append((replay.index(stays), "the copula rule holds from here to the end"))
    found.append((len(replay) - 1, "end of training"))
    seen: dict[int, str] = {}
    for index, name in sorted(found, key=lambda item: item[0]):
        seen[index] = f"{seen[index]}; {name}" if index in seen else name
    return tuple(Milestone(i, int(replay.steps[i]), name) for i, name in seen.items())


@dataclass(frozen=True)
class Change:
    """What changed between two snapshots: each figure before and after, and the head whose attention from the copula
    onto the subject noun (on the copula prompt) moved most."""

    before: Milestone
    after: Milestone
    figures: Mapping[str, tuple[float, float]]  # metric name (and "noun_gap") -> (before, after)
    head: str
    head_attention: tuple[float, float]


def change(replay: Replay, before: Milestone, after: Milestone) -> Change:
    """The figures of two milestones side by side (from the asset's metrics and the snapshots' weights)."""
    figures = {
        name: (float(replay.values[name][before.index]), float(replay.values[name][after.index])) for name in METRICS
    }
    gaps = [noun_gap(replay.weights[m.index]["E"], replay.vocabulary) for m in (before, after)]
    figures["noun_gap"] = (gaps[0], gaps[1])
    subject = COPULA_PROMPT.index("cat")
    rows = [head_patterns(replay.model(m.index), COPULA_PROMPT)[:, :, -1, subject] for m in (before, after)]
    keys = heads(replay.config)
    moved = int(np.argmax(np.abs(rows[1] - rows[0]).ravel()))
    layer, head = keys[moved]
    return Change(
        before, after, figures, head_label(keys[moved]), (float(rows[0][layer, head]), float(rows[1][layer, head]))
    )


# ------------------------------------------------------------------------------------------------------ the family
@dataclass(frozen=True)
class Emergence:
    """One training run's rule emergence, read from its logged training log (every 50 steps)."""

    seed: int
    first: int | None  # first logged step with every held-out copula type answered in class
    stays: int | None  # logged step from which that holds to the end
    final_loss: float


@cache
def family_emergence() -> tuple[Emergence, ...]:
    """The shipped run (seed 0) and its 8 siblings, from assets/model/logs/seed_XX.json (logged while training)."""
    rows = []
    for path in sorted(LOG_DIR.glob("seed_*.json")):
        log = json.loads(path.read_text(encoding="utf-8"))
        first, stays = rule_emergence(log["step"], log["rule_accuracy_held_out"])
        rows.append(Emergence(int(log["seed"]), first, stays, float(log["loss"][-1])))
    return tuple(rows)
