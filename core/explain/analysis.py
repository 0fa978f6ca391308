"""What we measure on the model (primer Appendix A), vectorised over the whole corpus.

Every next-token decision of the 64 sentence types is a slot (core/explain/world.py). The measures, as in the primer:
- top-1 on bigram slots: the top prediction is the token that actually comes next;
- class accuracy on copula slots: after is/was the top prediction is an adjective of the subject noun's class;
- rule accuracy: class accuracy over the copula slots of the held-out types (5 of them, so it moves in fifths);
- attention of the copula query on the subject noun, per head.
The ablation sweep runs all 16 subsets of the 4 heads plus "attention off" (Method 2) in one batched pass. Read off
a sweep: the least and most damaging subsets, which single heads switch the rule off, and how bright each head looks
against what its removal breaks. Activation patching copies head outputs from one prompt into another's run.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from core.explain.attention import softmax
from core.explain.transformer import (
    NO_INTERVENTION,
    Config,
    HeadKey,
    Intervention,
    Model,
    Trace,
    forward,
    forward_ablations,
    logit_lens,
)
from core.explain.world import CLASS_ADJECTIVES, NOUN_CLASS, TOKEN_ID, VOCABULARY, Corpus, corpus

ATTENTION_OFF = "attention off"


def heads(config: Config) -> tuple[HeadKey, ...]:
    """Every (layer, head), counted from 0, in the primer's reading order."""
    return tuple(itertools.product(range(config.n_layers), range(config.n_heads)))


def head_label(head: HeadKey) -> str:
    """The primer's name for a head, counted from 1: 'layer 1, head 2'."""
    return f"layer {head[0] + 1}, head {head[1] + 1}"


def short_label(head: HeadKey) -> str:
    """A compact name for tables: 'L1H2'."""
    return f"L{head[0] + 1}H{head[1] + 1}"


def head_subsets(config: Config) -> tuple[frozenset[HeadKey], ...]:
    """All 2^(layers·heads) sets of heads (16 for the primer's shape), by size, then in reading order."""
    every = heads(config)
    return tuple(frozenset(c) for size in range(len(every) + 1) for c in itertools.combinations(every, size))


def subset_label(removed: frozenset[HeadKey] | None) -> str:
    """'none', 'L1H1 + L2H2', … or 'attention off' (None)."""
    if removed is None:
        return ATTENTION_OFF
    return " + ".join(short_label(h) for h in sorted(removed)) or "none"


@dataclass(frozen=True)
class SlotScores:
    """The model's read-out at every slot of a corpus (one configuration) and the primer's measures on it."""

    data: Corpus
    probs: np.ndarray  # (n_slots, V)
    logits: np.ndarray  # (n_slots, V)

    @cached_property
    def top(self) -> np.ndarray:
        """Top prediction at every slot."""
        return self.logits.argmax(axis=-1)

    @cached_property
    def correct(self) -> np.ndarray:
        """Top prediction equals the token that actually comes next."""
        return self.top == self.data.slot_target

    @cached_property
    def right_class(self) -> np.ndarray:
        """At copula slots: the top prediction is an adjective of the subject's class (False elsewhere)."""
        return (self.top[:, None] == self.data.slot_class).any(axis=1) & self.data.slot_copula

    @cached_property
    def class_mass(self) -> np.ndarray:
        """At copula slots: probability on the subject class's two adjectives (NaN elsewhere)."""
        classes = np.where(self.data.slot_copula[:, None], self.data.slot_class, 0)
        mass = np.take_along_axis(self.probs, classes, axis=1).sum(axis=1)
        return np.where(self.data.slot_copula, mass, np.nan)

    @property
    def bigram_top1(self) -> float:
        """Top-1 accuracy on the bigram slots."""
        return float(self.correct[~self.data.slot_copula].mean())

    @property
    def copula_class_accuracy(self) -> float:
        """Right-class rate on all copula slots."""
        return float(self.right_class[self.data.slot_copula].mean())

    @property
    def rule_accuracy(self) -> float:
        """Right-class rate on the copula slots of the held-out types (the primer's rule accuracy)."""
        return float(self.right_class[self.data.slot_copula & self.data.slot_held_out].mean())


def score_slots(model: Model, data: Corpus | None = None, intervention: Intervention = NO_INTERVENTION) -> SlotScores:
    """Score every slot of the corpus (default: all 64 types) in one batched forward pass."""
    data = corpus() if data is None else data
    trace = forward(model, data.ids, lengths=data.lengths, intervention=intervention)
    return _scores(data, trace["hook_logits"], trace["hook_probs"])


def _scores(data: Corpus, logits: np.ndarray, probs: np.ndarray) -> SlotScores:
    return SlotScores(
        data=data,
        logits=logits[data.slot_sentence, data.slot_position],
        probs=probs[data.slot_sentence, data.slot_position],
    )


def copula_attention(trace: Trace, data: Corpus) -> np.ndarray:
    """Attention weight of each copula query (is/was) on its subject noun: (n_copula_slots, layers, heads).

    `trace` is a batched forward pass over `data`.
    """
    slots = np.flatnonzero(data.slot_copula)
    sentence, query, key = data.slot_sentence[slots], data.slot_position[slots], data.slot_subject_position[slots]
    layers = sorted({int(name.split(".")[1]) for name in trace if name.endswith("attn.hook_pattern")})
    return np.stack([trace[f"blocks.{layer}.attn.hook_pattern"][sentence, :, query, key] for layer in layers], axis=1)


@dataclass(frozen=True)
class Sweep:
    """Appendix A's tables for every configuration: the 16 head subsets, then attention off.

    Arrays are indexed by configuration; attention_on_subject is (configurations, layers, heads), the mean over the
    16 copula slots of the copula query's weight on the subject noun (patterns of removed heads are still computed,
    they just write nothing).
    """

    removed: tuple[frozenset[HeadKey] | None, ...]
    rule_accuracy: np.ndarray
    bigram_top1: np.ndarray
    copula_class_accuracy: np.ndarray
    copula_class_mass: np.ndarray
    attention_on_subject: np.ndarray
    n_bigram_slots: int
    n_copula_slots: int
    n_held_out_copula_slots: int

    @property
    def labels(self) -> tuple[str, ...]:
        """One label per configuration ('none', 'L1H1', …, 'attention off')."""
        return tuple(subset_label(r) for r in self.removed)

    def rows(self) -> list[dict[str, object]]:
        """One dict per configuration, ready for a table or CSV."""
        return [
            {
                "heads removed": label,
                "rule accuracy (held-out)": float(self.rule_accuracy[i]),
                "top-1 on bigram slots": float(self.bigram_top1[i]),
                "right class on copula slots": float(self.copula_class_accuracy[i]),
                "class-adjective mass": float(self.copula_class_mass[i]),
            }
            for i, label in enumerate(self.labels)
        ]


def configuration(removed: frozenset[HeadKey] | None) -> Intervention:
    """The intervention for one sweep row: zero the given heads' rows of W_O, or attention off (None)."""
    return Intervention(attention="off") if removed is None else Intervention(zero_heads=removed)


def ablation_sweep(model: Model, data: Corpus | None = None) -> Sweep:
    """All 16 head subsets plus attention off, every slot scored: one stacked pass over the corpus for all of them
    (no full trace is kept, only logits and attention patterns, so the stack stays small)."""
    data = corpus() if data is None else data
    removed = (*head_subsets(model.config), None)
    slots = (data.slot_sentence, data.slot_position)
    stacked = forward_ablations(model, data.ids, data.lengths, [configuration(r) for r in removed], at=slots)
    logits, row = stacked["hook_logits"], stacked["row"]  # (configurations, distinct slots, V), each slot's row
    top = logits.argmax(axis=-1)[:, row]
    copula = data.slot_copula
    # The class scores need only the copula slots: softmax and class checks on those rows alone.
    probs = softmax(logits[:, row[copula]], axis=-1)
    classes = data.slot_class[copula]
    right_class = (top[:, copula, None] == classes[None]).any(axis=2)
    held = data.slot_held_out[copula]
    sentence, query, key = (data.slot_sentence, data.slot_position, data.slot_subject_position)
    sentence, query, key = sentence[copula], query[copula], key[copula]  # copula query, subject-noun key
    mass = np.take_along_axis(probs, np.broadcast_to(classes, (len(removed), *classes.shape)), axis=2).sum(axis=2)
    return Sweep(
        removed=removed,
        rule_accuracy=right_class[:, held].mean(axis=1),
        bigram_top1=(top[:, ~copula] == data.slot_target[~copula]).mean(axis=1),
        copula_class_accuracy=right_class.mean(axis=1),
        copula_class_mass=mass.mean(axis=1),
        attention_on_subject=np.stack(
            [
                stacked[f"{prefix}.hook_pattern"][:, sentence, :, query, key].mean(axis=0)[stacked[f"{prefix}.history"]]
                for prefix in (f"blocks.{layer}.attn" for layer in range(model.config.n_layers))
            ],
            axis=1,
        ),
        n_bigram_slots=int((~copula).sum()),
        n_copula_slots=int(copula.sum()),
        n_held_out_copula_slots=int(held.sum()),
    )


@dataclass(frozen=True)
class BigramCeilings:
    """The best top-1 any model can reach on the bigram slots with no attention to other tokens.

    token_only reads the current token alone; position_aware reads the current token and its position (what a
    per-position network sees, since the positional encoding is added to the token's own row).
    """

    token_only: float
    position_aware: float
    full_context: float  # reading the whole prefix: no model can do better
    n_slots: int


def _best_guess_accuracy(keys: Sequence[tuple[int, ...]], targets: np.ndarray) -> float:
    """Share of slots answered right when every group of slots with the same key gets its most frequent target."""
    groups: dict[tuple[int, ...], Counter] = {}
    for key, target in zip(keys, targets.tolist(), strict=True):
        groups.setdefault(key, Counter())[target] += 1
    return sum(max(counts.values()) for counts in groups.values()) / len(targets)


def bigram_ceilings(data: Corpus | None = None) -> BigramCeilings:
    """Top-1 ceilings on the bigram slots for a predictor reading only the current token, it and its position, or the
    whole prefix."""
    data = corpus() if data is None else data
    bigram = ~data.slot_copula
    current = data.ids[data.slot_sentence, data.slot_position][bigram].tolist()
    position = data.slot_position[bigram].tolist()
    targets = data.slot_target[bigram]
    prefixes = [
        tuple(data.ids[s, : p + 1].tolist())
        for s, p in zip(data.slot_sentence[bigram], data.slot_position[bigram], strict=True)
    ]
    return BigramCeilings(
        token_only=_best_guess_accuracy([(t,) for t in current], targets),
        position_aware=_best_guess_accuracy(list(zip(current, position, strict=True)), targets),
        full_context=_best_guess_accuracy(prefixes, targets),
        n_slots=int(bigram.sum()),
    )


def followers(word: str, data: Corpus | None = None, position: int | None = None) -> tuple[str, ...]:
    """The tokens that follow `word` anywhere in the world (or only where `word` sits at `position`), sorted."""
    data = corpus() if data is None else data
    current = data.ids[data.slot_sentence, data.slot_position]
    here = current == TOKEN_ID[word]
    if position is not None:
        here &= data.slot_position == position
    return tuple(sorted(VOCABULARY[t] for t in set(data.slot_target[here].tolist())))


@dataclass(frozen=True)
class FamilySweep:
    """The ablation sweep repeated on several independently trained models: arrays are (models, configurations)."""

    seeds: tuple[int, ...]
    sweeps: tuple[Sweep, ...]

    @property
    def labels(self) -> tuple[str, ...]:
        """Configuration labels (the same for every model)."""
        return self.sweeps[0].labels

    def metric(self, name: str) -> np.ndarray:
        """One measure for every model and configuration, e.g. metric('rule_accuracy')."""
        return np.stack([getattr(sweep, name) for sweep in self.sweeps])


def family_sweep(models: Sequence[Model], data: Corpus | None = None) -> FamilySweep:
    """Run the ablation sweep on every model of a family (does a finding hold across training runs?)."""
    return FamilySweep(
        seeds=tuple(int(m.metadata.get("seed", i)) for i, m in enumerate(models)),
        sweeps=tuple(ablation_sweep(m, data) for m in models),
    )


def lens_scores(model: Model, data: Corpus | None = None) -> dict[str, dict[str, float]]:
    """Logit lens over the corpus: the primer's measures read out from the residual stream after every block."""
    data = corpus() if data is None else data
    trace = forward(model, data.ids, lengths=data.lengths)
    out = {}
    for name, logits in logit_lens(model, trace).items():
        scores = _scores(data, logits, _softmax(logits))
        out[name] = {
            "top-1 on bigram slots": scores.bigram_top1,
            "right class on copula slots": scores.copula_class_accuracy,
            "class-adjective mass": float(np.nanmean(scores.class_mass)),
        }
    return out


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def _real_positions(data: Corpus) -> np.ndarray:
    return np.arange(data.ids.shape[1])[None, :] < data.lengths[:, None]


def head_means(model: Model, data: Corpus | None = None) -> dict[HeadKey, np.ndarray]:
    """Each head's output z averaged over every real (unpadded) position of the corpus: the mean-ablation value."""
    data = corpus() if data is None else data
    trace = forward(model, data.ids, lengths=data.lengths)
    real = _real_positions(data)
    return {
        (layer, head): trace[f"blocks.{layer}.attn.hook_z"][real][:, head, :].mean(axis=0)
        for layer, head in heads(model.config)
    }


def neuron_means(model: Model, data: Corpus | None = None) -> np.ndarray:
    """Each MLP neuron's activation averaged over every real position of the corpus: (layers, d_ff)."""
    data = corpus() if data is None else data
    trace = forward(model, data.ids, lengths=data.lengths)
    real = _real_positions(data)
    return np.stack(
        [trace[f"blocks.{layer}.mlp.hook_post"][real].mean(axis=0) for layer in range(model.config.n_layers)]
    )


def mean_ablation(model: Model, removed: Sequence[HeadKey], data: Corpus | None = None) -> Intervention:
    """Replace the given heads' outputs by their corpus means (instead of zeroing their rows of W_O)."""
    means = head_means(model, data)
    return Intervention(head_outputs={head: means[head] for head in removed})


def neuron_ablation(
    model: Model, neurons: Sequence[HeadKey], mode: str = "zero", data: Corpus | None = None
) -> Intervention:
    """Zero ('zero') or mean-ablate ('mean') the given MLP neurons, keyed (layer, neuron)."""
    if mode not in ("zero", "mean"):
        raise ValueError("mode must be 'zero' or 'mean'")
    means = neuron_means(model, data) if mode == "mean" else None
    return Intervention(neurons={(layer, n): 0.0 if means is None else means[layer, n] for layer, n in neurons})


def neuron_sweep(model: Model, mode: str = "zero", data: Corpus | None = None) -> dict[str, np.ndarray]:
    """Every MLP neuron ablated alone: the primer's measures, each an array (layers, d_ff)."""
    data = corpus() if data is None else data
    shape = (model.config.n_layers, model.config.d_ff)
    out = {key: np.empty(shape) for key in ("rule_accuracy", "bigram_top1", "copula_class_accuracy")}
    for layer, neuron in itertools.product(*map(range, shape)):
        scores = score_slots(model, data, neuron_ablation(model, [(layer, neuron)], mode, data))
        for key in out:
            out[key][layer, neuron] = getattr(scores, key)
    return out


def patch_heads(
    model: Model, target: Sequence[int], source: Sequence[int], patched: Sequence[HeadKey]
) -> tuple[Trace, Trace]:
    """Activation patching: run `source`, then run `target` with the given heads' outputs taken from the source run.

    Both prompts must have the same length. Returns (source trace, patched target trace).
    """
    if len(target) != len(source):
        raise ValueError("patching needs two prompts of the same length")
    source_trace = forward(model, list(source))
    outputs = {(layer, head): source_trace[f"blocks.{layer}.attn.hook_z"][:, head, :] for layer, head in patched}
    return source_trace, forward(model, list(target), intervention=Intervention(head_outputs=outputs))


def next_token_table(
    model: Model, words: Sequence[str], intervention: Intervention = NO_INTERVENTION, k: int = 3
) -> list[tuple[str, float]]:
    """The k most likely next tokens after a prompt, with their probabilities."""
    probs = forward(model, model.encode(words), intervention=intervention)["hook_probs"][-1]
    order = np.argsort(-probs, kind="stable")[:k]
    return [(model.vocabulary[i], float(probs[i])) for i in order]


# The ablation sweep read as evidence (Appendix A): best and worst subsets, which heads switch the rule off, how bright
# a head looks against what its removal breaks, and activation patching of head outputs between two prompts.
COLLAPSE = 0.2  # a head "switches the rule off" if at most one of the five held-out copula decisions survives
VERDICTS = ("one head", "several heads", "no single head")


def ablation_extremes(sweep: Sweep) -> tuple[int, int]:
    """Rows of the least and the most damaging real ablation (a non-empty head subset; not the trained model, not
    attention off), ranked by rule accuracy, then copula class accuracy, then bigram top-1."""
    candidates = [i for i, r in enumerate(sweep.removed) if r]
    rank = {i: (sweep.rule_accuracy[i], sweep.copula_class_accuracy[i], sweep.bigram_top1[i]) for i in candidates}
    return max(candidates, key=rank.__getitem__), min(candidates, key=rank.__getitem__)


@dataclass(frozen=True)
class SubsetCounts:
    """How many of the real ablations (non-empty head subsets) switch the rule off, overall and among the pairs."""

    real: int
    collapsing: int
    pairs: int
    collapsing_pairs: int


def subset_counts(sweep: Sweep) -> SubsetCounts:
    """Count the head subsets that leave rule accuracy ≤ COLLAPSE (the pairs are the ones the primer did not search)."""
    real = [i for i, r in enumerate(sweep.removed) if r]
    pairs = [i for i in real if len(sweep.removed[i]) == 2]
    return SubsetCounts(
        real=len(real),
        collapsing=sum(bool(sweep.rule_accuracy[i] <= COLLAPSE) for i in real),
        pairs=len(pairs),
        collapsing_pairs=sum(bool(sweep.rule_accuracy[i] <= COLLAPSE) for i in pairs),
    )


@dataclass(frozen=True)
class HeadEvidence:
    """Per head, in reading order: how bright it looks (mean attention of the copula query on the subject noun in the
    trained model, over the 16 copula slots) and what its single-head ablation breaks."""

    heads: tuple[HeadKey, ...]
    attention: np.ndarray
    rule_accuracy: np.ndarray  # with that head removed
    class_accuracy: np.ndarray
    bigram_top1: np.ndarray
    baseline_rule: float
    baseline_class: float
    baseline_bigram: float

    @property
    def rule_drop(self) -> np.ndarray:
        """Fall in held-out rule accuracy when the head is removed."""
        return self.baseline_rule - self.rule_accuracy

    @property
    def bigram_drop(self) -> np.ndarray:
        """Collateral: fall in top-1 on the bigram slots when the head is removed."""
        return self.baseline_bigram - self.bigram_top1

    @property
    def brightest(self) -> HeadKey:
        """The head that puts most of the copula's attention on the subject noun."""
        return self.heads[int(np.argmax(self.attention))]

    @property
    def most_damaging(self) -> HeadKey:
        """The head whose removal hurts the rule most: rule accuracy, then class accuracy on the 16 copula slots."""
        order = sorted(range(len(self.heads)), key=lambda i: (self.rule_accuracy[i], self.class_accuracy[i]))
        return self.heads[order[0]]

    @property
    def load_bearing(self) -> tuple[HeadKey, ...]:
        """The load-bearing heads, one definition for every page: removing the head alone leaves held-out rule
        accuracy ≤ COLLAPSE (at most one of the five held-out decisions right). The same test as `rule_carriers`."""
        return tuple(h for h, acc in zip(self.heads, self.rule_accuracy, strict=True) if acc <= COLLAPSE)

    @property
    def brightest_is_load_bearing(self) -> bool:
        """The question a vendor's heatmap invites: is the head that looks hardest at the noun load-bearing?"""
        return self.brightest in self.load_bearing

    @property
    def rule_breakers(self) -> tuple[HeadKey, ...]:
        """Heads whose removal at least halves the class accuracy on the copula slots (the primer's 'clean case'
        test: halving the class accuracy while sparing the bigram slots)."""
        half = self.baseline_class / 2
        return tuple(h for h, acc in zip(self.heads, self.class_accuracy, strict=True) if acc <= half)

    @property
    def dimmest(self) -> HeadKey:
        """The head that attends least to the subject noun."""
        return self.heads[int(np.argmin(self.attention))]

    @property
    def bluntest(self) -> HeadKey:
        """The head whose removal costs most collateral top-1 on the bigram slots."""
        return self.heads[int(np.argmax(self.bigram_drop))]

    @property
    def cleanest(self) -> HeadKey:
        """The head whose removal costs least collateral top-1 on the bigram slots (which may also be the head that
        does least to the rule: see `rule_breakers`)."""
        return self.heads[int(np.argmin(self.bigram_drop))]

    def index(self, head: HeadKey) -> int:
        """Position of a head in the arrays."""
        return self.heads.index(head)


def head_evidence(sweep: Sweep) -> HeadEvidence:
    """Brightness against single-head ablation damage, read off one sweep."""
    every = tuple(sorted(frozenset().union(*(r for r in sweep.removed if r))))
    rows = [sweep.removed.index(frozenset({h})) for h in every]
    base = sweep.removed.index(frozenset())
    return HeadEvidence(
        heads=every,
        attention=np.array([sweep.attention_on_subject[base][h] for h in every]),
        rule_accuracy=sweep.rule_accuracy[rows],
        class_accuracy=sweep.copula_class_accuracy[rows],
        bigram_top1=sweep.bigram_top1[rows],
        baseline_rule=float(sweep.rule_accuracy[base]),
        baseline_class=float(sweep.copula_class_accuracy[base]),
        baseline_bigram=float(sweep.bigram_top1[base]),
    )


@dataclass(frozen=True)
class Carriers:
    """Which single heads switch the rule off in one model (rule accuracy ≤ COLLAPSE once removed)."""

    evidence: HeadEvidence
    collapsing: tuple[HeadKey, ...]

    @property
    def verdict(self) -> str:
        """'one head', 'several heads' or 'no single head'."""
        return {0: "no single head", 1: "one head"}.get(len(self.collapsing), "several heads")

    @property
    def weakest_survivor(self) -> float:
        """The lowest rule accuracy any single-head removal leaves (the largest single effect)."""
        return float(self.evidence.rule_accuracy.min())


def rule_carriers(sweep: Sweep) -> Carriers:
    """Classify a model: does its copula rule rest on one head, on several, or on no single head?"""
    evidence = head_evidence(sweep)
    return Carriers(evidence=evidence, collapsing=evidence.load_bearing)


@dataclass(frozen=True)
class PatchRow:
    """Run the target prompt with some heads' outputs copied from the source prompt's run."""

    patched: str
    top_token: str
    probability: float
    p_source_class: float
    p_target_class: float
    flipped: bool


def _subject_class(model: Model, words: Sequence[str]) -> tuple[str, ...]:
    nouns = [w for w in words if w in NOUN_CLASS]
    if not nouns:
        raise ValueError(f"'{' '.join(words)}' has no subject noun")
    return CLASS_ADJECTIVES[NOUN_CLASS[nouns[-1]]]


def heads_name(removed: Sequence[HeadKey], n_heads: int) -> str:
    """A set of heads for tables and chart axes: 'none', 'L1H1 + L2H2' or 'all four heads'."""
    if not removed:
        return "none"
    return "all four heads" if len(removed) == n_heads == 4 else " + ".join(short_label(h) for h in sorted(removed))


def patching_table(model: Model, target: Sequence[str], source: Sequence[str]) -> list[PatchRow]:
    """Activation patching, one head at a time, each layer's pair, then all four: does the answer cross to the
    source subject's class? The first row is the clean target run."""
    source_class, target_class = _subject_class(model, source), _subject_class(model, target)
    if source_class == target_class:
        raise ValueError("the source's subject must be of the other class, or no answer can flip")
    every = heads(model.config)
    layers = [tuple(h for h in every if h[0] == layer) for layer in range(model.config.n_layers)]
    sets = [(), *((h,) for h in every), *layers, every]
    ids_t, ids_s = model.encode(target), model.encode(source)
    rows = []
    for patched in sets:
        probs = patch_heads(model, ids_t, ids_s, list(patched))[1]["hook_probs"][-1]
        top = int(np.argmax(probs))
        mass = [float(sum(probs[model.vocabulary.index(a)] for a in adj)) for adj in (source_class, target_class)]
        rows.append(
            PatchRow(
                patched=heads_name(patched, len(every)) if patched else "none (clean run)",
                top_token=model.vocabulary[top],
                probability=float(probs[top]),
                p_source_class=mass[0],
                p_target_class=mass[1],
                flipped=model.vocabulary[top] in source_class,
            )
        )
    return rows
