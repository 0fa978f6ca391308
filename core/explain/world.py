"""The toy English world of primer §6: vocabulary, the 64 sentence types, the held-out split and the slot bookkeeping.

Grammar (documented in docs/world.md, generated from this module):
  sat    the [big|small] {cat|dog} sat on the [red|blue] {mat|floor}   36 types
  ran    the [big|small] {cat|dog} ran {fast|slow}                      12 types
  copula the {cat|dog|mat|floor} {is|was} <class adjective>             16 types
Animals take big/small, surfaces red/blue; `sat` is always followed by `on`; a copula subject carries no adjective.
Every sequence is <BOS> … <EOS>. Each next-token decision is a *slot*: the adjective after is/was is a copula slot
(its answer depends on the subject noun, one place back); every other slot is a bigram slot.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from functools import cache
from typing import Literal

import numpy as np

VOCABULARY: tuple[str, ...] = (
    "<PAD>", "<BOS>", "<EOS>", "<SEP>", "the", "cat", "dog", "mat", "floor", "sat",
    "ran", "is", "was", "on", "big", "small", "red", "blue", "fast", "slow",
)  # fmt: skip
TOKEN_ID = {word: index for index, word in enumerate(VOCABULARY)}
PAD, BOS, EOS = TOKEN_ID["<PAD>"], TOKEN_ID["<BOS>"], TOKEN_ID["<EOS>"]

ANIMALS, SURFACES = ("cat", "dog"), ("mat", "floor")
CLASS_ADJECTIVES = {"animal": ("big", "small"), "surface": ("red", "blue")}
NOUN_CLASS = {"cat": "animal", "dog": "animal", "mat": "surface", "floor": "surface"}
COPULAS = ("is", "was")

Family = Literal["sat", "ran", "copula"]

# Held out of training: 8 types, 5 of them copula types. Each held-out copula type keeps its sibling (same noun, same
# copula, the other class adjective) in training, so the held-out question is "does the model still answer inside the
# noun's class on a sentence it never saw?" The primer's two copula prompts (the cat is, the mat is) keep both
# adjectives in training.
HELD_OUT: frozenset[str] = frozenset(
    {
        "the cat was big",
        "the dog is small",
        "the mat was blue",
        "the floor is red",
        "the floor was red",
        "the dog sat on the red mat",
        "the big cat ran slow",
        "the small dog sat on the blue floor",
    }
)


@dataclass(frozen=True)
class SentenceType:
    """One of the 64 sentence types: its words (without <BOS>/<EOS>), family, subject noun and split."""

    index: int
    words: tuple[str, ...]
    family: Family
    subject: str
    held_out: bool

    @property
    def text(self) -> str:
        """The sentence as plain words, e.g. 'the cat is big'."""
        return " ".join(self.words)

    @property
    def tokens(self) -> tuple[str, ...]:
        """The sequence the model sees: <BOS> words <EOS>."""
        return ("<BOS>", *self.words, "<EOS>")


def _optional(choices: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return ((), *((choice,) for choice in choices))


@cache
def sentence_types() -> tuple[SentenceType, ...]:
    """All 64 types in a fixed order: 36 sat, 12 ran, 16 copula."""
    rows: list[tuple[tuple[str, ...], Family, str]] = []
    for subject_adj, subject, object_adj, obj in itertools.product(
        _optional(CLASS_ADJECTIVES["animal"]), ANIMALS, _optional(CLASS_ADJECTIVES["surface"]), SURFACES
    ):
        rows.append((("the", *subject_adj, subject, "sat", "on", "the", *object_adj, obj), "sat", subject))
    for subject_adj, subject, manner in itertools.product(
        _optional(CLASS_ADJECTIVES["animal"]), ANIMALS, ("fast", "slow")
    ):
        rows.append((("the", *subject_adj, subject, "ran", manner), "ran", subject))
    for noun, copula in itertools.product((*ANIMALS, *SURFACES), COPULAS):
        for adjective in CLASS_ADJECTIVES[NOUN_CLASS[noun]]:
            rows.append((("the", noun, copula, adjective), "copula", noun))
    types = tuple(
        SentenceType(index=i, words=words, family=family, subject=subject, held_out=" ".join(words) in HELD_OUT)
        for i, (words, family, subject) in enumerate(rows)
    )
    unknown = HELD_OUT - {t.text for t in types}
    if unknown:
        raise ValueError(f"held-out sentences not in the grammar: {sorted(unknown)}")
    return types


SlotKind = Literal["copula", "bigram"]


@dataclass(frozen=True)
class Corpus:
    """Sentence types as a right-padded id batch, and every next-token decision (slot) as flat arrays.

    Slot s reads position `slot_position[s]` of sentence `slot_sentence[s]` and should predict `slot_target[s]`.
    `allowed_prefix[s]` marks the tokens the grammar allows after the whole prefix; `allowed_current[s]` the tokens it
    allows after the current token alone (over all 64 types). A bigram slot whose two sets coincide is
    `context_free`: a model reading only the current token has all the information the context carries.
    """

    types: tuple[SentenceType, ...]
    ids: np.ndarray  # (n_types, T) int, <PAD> after each sentence
    lengths: np.ndarray  # (n_types,)
    slot_sentence: np.ndarray  # (n_slots,)
    slot_position: np.ndarray  # (n_slots,) query position, predicting the token at position + 1
    slot_target: np.ndarray  # (n_slots,)
    slot_copula: np.ndarray  # (n_slots,) bool
    slot_class: np.ndarray  # (n_slots, 2) the subject's class adjectives at copula slots, -1 elsewhere
    slot_subject_position: np.ndarray  # (n_slots,) position of the subject noun at copula slots, -1 elsewhere
    slot_held_out: np.ndarray  # (n_slots,) bool: the slot's sentence type is held out of training
    allowed_prefix: np.ndarray  # (n_slots, V) bool
    allowed_current: np.ndarray  # (n_slots, V) bool

    @property
    def n_slots(self) -> int:
        """Number of next-token decisions."""
        return int(self.slot_target.size)

    @property
    def slot_kind(self) -> np.ndarray:
        """'copula' or 'bigram' for every slot."""
        return np.where(self.slot_copula, "copula", "bigram")

    @property
    def context_free(self) -> np.ndarray:
        """Bigram slots whose allowed set is the same after the whole prefix as after the current token alone."""
        return ~self.slot_copula & (self.allowed_prefix == self.allowed_current).all(axis=1)

    def select(self, held_out: bool | None = None) -> Corpus:
        """The sub-corpus of training (held_out=False) or held-out (True) types; None keeps all 64."""
        if held_out is None:
            return self
        return build_corpus(tuple(t for t in self.types if t.held_out == held_out))


def encode(words: tuple[str, ...] | list[str]) -> list[int]:
    """Token ids of words in the world's vocabulary."""
    return [TOKEN_ID[word] for word in words]


def _continuations(types: tuple[SentenceType, ...]) -> tuple[dict, dict]:
    """Allowed next tokens after every prefix and after every single token, over the whole grammar."""
    after_prefix: dict[tuple[str, ...], set[str]] = {}
    after_token: dict[str, set[str]] = {}
    for sentence in types:
        tokens = sentence.tokens
        for t in range(len(tokens) - 1):
            after_prefix.setdefault(tokens[: t + 1], set()).add(tokens[t + 1])
            after_token.setdefault(tokens[t], set()).add(tokens[t + 1])
    return after_prefix, after_token


def build_corpus(types: tuple[SentenceType, ...], grammar: tuple[SentenceType, ...] | None = None) -> Corpus:
    """Pad the given sentence types into one batch and list their slots (allowed sets from the whole grammar: this
    world's 64 types, or `grammar`'s for another world such as core.explain.discarded_world's)."""
    after_prefix, after_token = _continuations(sentence_types() if grammar is None else grammar)
    T = max(len(t.tokens) for t in types)
    ids = np.full((len(types), T), PAD, dtype=np.int64)
    lengths = np.array([len(t.tokens) for t in types], dtype=np.int64)
    slots: list[tuple] = []
    for row, sentence in enumerate(types):
        tokens = sentence.tokens
        ids[row, : len(tokens)] = encode(tokens)
        for t in range(len(tokens) - 1):
            copula = tokens[t] in COPULAS
            adjectives = CLASS_ADJECTIVES[NOUN_CLASS[sentence.subject]] if copula else None
            slots.append(
                (
                    row,
                    t,
                    TOKEN_ID[tokens[t + 1]],
                    copula,
                    encode(adjectives) if adjectives else [-1, -1],
                    tokens.index(sentence.subject) if copula else -1,
                    sentence.held_out,
                    _mask(after_prefix[tokens[: t + 1]]),
                    _mask(after_token[tokens[t]]),
                )
            )
    columns = list(zip(*slots, strict=True))
    return Corpus(
        types=types,
        ids=_frozen(ids),
        lengths=_frozen(lengths),
        slot_sentence=_frozen(np.array(columns[0], dtype=np.int64)),
        slot_position=_frozen(np.array(columns[1], dtype=np.int64)),
        slot_target=_frozen(np.array(columns[2], dtype=np.int64)),
        slot_copula=_frozen(np.array(columns[3], dtype=bool)),
        slot_class=_frozen(np.array(columns[4], dtype=np.int64)),
        slot_subject_position=_frozen(np.array(columns[5], dtype=np.int64)),
        slot_held_out=_frozen(np.array(columns[6], dtype=bool)),
        allowed_prefix=_frozen(np.array(columns[7], dtype=bool)),
        allowed_current=_frozen(np.array(columns[8], dtype=bool)),
    )


def _mask(words: set[str]) -> np.ndarray:
    mask = np.zeros(len(VOCABULARY), dtype=bool)
    mask[encode(sorted(words))] = True
    return mask


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@cache
def corpus() -> Corpus:
    """The whole world: all 64 types (448 slots)."""
    return build_corpus(sentence_types())


@cache
def training_corpus() -> Corpus:
    """The 56 types the model is trained on."""
    return corpus().select(held_out=False)


@cache
def held_out_corpus() -> Corpus:
    """The 8 types held out of training."""
    return corpus().select(held_out=True)


def corpus_hash() -> str:
    """SHA-256 of the vocabulary and the training sentences (one per line): identifies what a model was trained on."""
    text = " ".join(VOCABULARY) + "\n" + "\n".join(" ".join(t.tokens) for t in training_corpus().types)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def world_markdown() -> str:
    """docs/world.md's grammar section: counts and the table of all 64 types (held-out ones marked)."""
    full = corpus()
    kinds = full.slot_kind
    counts = {family: sum(t.family == family for t in full.types) for family in ("sat", "ran", "copula")}
    lines = [
        "## The world: 64 sentence types",
        "",
        "Generated from `core/explain/world.py` by `python -m core.explain.world`; `tests/unit/test_world.py` fails if "
        "it drifts.",
        "",
        f"- Vocabulary ({len(VOCABULARY)} tokens, primer order): " + " ".join(f"`{w}`" for w in VOCABULARY) + ".",
        "- Every sequence is `<BOS>` sentence `<EOS>`; `<PAD>` fills batches; `<SEP>` is in the vocabulary but no "
        "sentence uses it.",
        "- `the [big|small] {cat|dog} sat on the [red|blue] {mat|floor}`: "
        f"{counts['sat']} types (animals take big/small, surfaces red/blue, `sat` is always followed by `on`).",
        f"- `the [big|small] {{cat|dog}} ran {{fast|slow}}`: {counts['ran']} types.",
        f"- `the {{cat|dog|mat|floor}} {{is|was}} <adjective of the noun's class>`: {counts['copula']} copula types; "
        "a copula subject carries no adjective, so both class adjectives are always possible after is/was.",
        f"- Held out of training: {sum(t.held_out for t in full.types)} types, "
        f"{sum(t.held_out and t.family == 'copula' for t in full.types)} of them copula types. Each held-out copula "
        "type keeps its sibling (same noun, same copula, the other adjective) in training, so the rule stays "
        "learnable and the held-out question is whether the model answers inside the noun's class on a sentence it "
        "never saw; `the cat is` and `the mat is` (the primer's prompts) keep both adjectives in training.",
        f"- Next-token decisions (slots): {full.n_slots} = {int((kinds == 'bigram').sum())} bigram slots + "
        f"{int((kinds == 'copula').sum())} copula slots (the adjective after is/was, decided by the subject noun one "
        f"place back). Of the bigram slots, {int(full.context_free.sum())} are strictly context-free (the grammar "
        "allows the same next tokens after the whole prefix as after the current token alone); in the others the "
        "context narrows the choice but the current token already names its candidates (after `cat`, the verbs; "
        "after the second `the`, a surface or its adjective), as in the primer's bigram/copula split.",
        "",
        "| # | sentence | family | slots | held out |",
        "|---:|---|---|---:|:---:|",
    ]
    for t in full.types:
        lines.append(
            f"| {t.index} | {t.text} | {t.family} | {len(t.tokens) - 1} | {'**held out**' if t.held_out else ''} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(world_markdown())
