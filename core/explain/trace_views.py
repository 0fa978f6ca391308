"""Views of one §6 forward pass for the two-layer trace page: the shape table with a live T, prompt parsing, the
residual stream stage by stage, top-k read-outs, and the primer's own printed §6 figures (assets/primer_section6.json).

Pure numpy on top of core.explain.transformer's trace; nothing here draws or knows about Streamlit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from core.assets import ASSETS
from core.explain.analysis import head_label, heads, score_slots
from core.explain.attention import softmax
from core.explain.transformer import Config, Model, Trace, forward, logit_lens, sinusoidal_positions
from core.explain.world import CLASS_ADJECTIVES, NOUN_CLASS, sentence_types

PRIMER_ASSET = ASSETS / "primer_section6.json"
BOS = "<BOS>"
# Longest prompt the page traces: the world's longest sentence is 10 tokens; 16 keeps a T × T heatmap readable.
MAX_TOKENS = 16


class PromptError(ValueError):
    """A prompt the page cannot trace; the message is written for the reader."""


def parse_prompt(text: str, vocabulary: Sequence[str], max_tokens: int = MAX_TOKENS) -> tuple[str, ...]:
    """Words of a typed prompt as vocabulary tokens (case-insensitive), with <BOS> put first if it is missing.

    Raises PromptError for an empty prompt, an unknown word (naming the vocabulary) or more than max_tokens tokens.
    """
    words = str(text).split()
    if not words:
        raise PromptError("The prompt is empty: type some words or click tokens below.")
    lookup = {token.lower(): token for token in vocabulary}
    unknown = [word for word in words if word.lower() not in lookup]
    if unknown:
        raise PromptError(
            f"The model does not know {', '.join(repr(w) for w in unknown)}. Its whole vocabulary is the "
            f"{len(vocabulary)} tokens: {' '.join(vocabulary)}."
        )
    tokens = [lookup[word.lower()] for word in words]
    if tokens[0] != BOS:
        tokens.insert(0, BOS)
    if len(tokens) > max_tokens:
        raise PromptError(
            f"The prompt has {len(tokens)} tokens; this page traces at most {max_tokens} (the longest sentence of "
            "the model's world is far shorter). Remove some words."
        )
    return tuple(tokens)


@dataclass(frozen=True)
class ShapeRow:
    """One row of the primer's §6 shape table: what the step is, its symbolic and its live output shape.

    `hook` names the trace entry the row displays ({layer} filled in); `shape` is the shape of one displayed block
    (one head's block when per_head), `heads` how many such blocks there are.
    """

    key: str
    step: str
    operation: str
    symbolic: str
    shape: tuple[int, ...]
    heads: int
    hook: str | None
    layered: bool

    @property
    def live(self) -> str:
        """The live shape in the primer's notation, e.g. '4 × 3 each, ×2' or '[20]'."""
        text = f"[{self.shape[0]}]" if len(self.shape) == 1 else " × ".join(str(n) for n in self.shape)
        return f"{text} each, ×{self.heads}" if self.heads > 1 else text


def layer_mark(layer: int) -> str:
    """The primer's superscript layer index, e.g. 2 -> '⁽²⁾' (h⁽²⁾ is the residual stream after layer 2)."""
    return f"⁽{str(layer).translate(str.maketrans('0123456789', '⁰¹²³⁴⁵⁶⁷⁸⁹'))}⁾"


LAYER_ROWS = frozenset(
    {"ln1", "qkv", "heads", "scores", "weights", "z", "concat", "attn_out", "resid_mid", "ln2"}
    | {"mlp_pre", "mlp_post", "mlp_out", "resid_post"}
)


def shape_table(config: Config, T: int, layer: int = 0) -> list[ShapeRow]:
    """The §6 shape table for a prompt of T tokens, with the per-layer rows' hooks filled in for `layer` (from 0).

    Step names do not depend on T or the layer, so they can name a row in a URL.
    """
    d, h, dk, ff, V = config.d_model, config.n_heads, config.d_head, config.d_ff, config.vocab_size
    b, last = f"blocks.{layer}", config.n_layers
    rows = [
        ("ids", "token IDs", "lookup", "[T]", (T,), 1, None),
        ("h0", "h⁰", "embedding + positional", "T × d_model", (T, d), 1, "blocks.0.hook_resid_pre"),
        ("ln1", "LN₁", "LayerNorm, row by row", "T × d_model", (T, d), 1, f"{b}.ln1.hook_normalized"),
        ("qkv", "Q, K, V (all heads)", "LN₁(h) W_Q + b_Q, etc.", "T × (h·d_k), each of Q, K, V", (T, h * dk), 1, None),
        ("heads", "per-head Q, K, V", f"slice into h = {h} blocks", "T × d_k each, per head", (T, dk), h, None),
        ("scores", "scores QKᵀ / √d_k", "per head", "T × T per head", (T, T), h, f"{b}.attn.hook_attn_scores"),
        ("weights", "weights", "mask + softmax", "T × T per head", (T, T), h, f"{b}.attn.hook_pattern"),
        ("z", "head output", "weights · V", "T × d_v per head", (T, dk), h, f"{b}.attn.hook_z"),
        ("concat", "concat", f"join {h} heads", "T × (h·d_v)", (T, h * dk), 1, f"{b}.attn.hook_concat"),
        ("attn_out", "attn write-back", "concat · W_O + b_O", "T × d_model", (T, d), 1, f"{b}.hook_attn_out"),
        ("resid_mid", "h_mid", "h + attn", "T × d_model", (T, d), 1, f"{b}.hook_resid_mid"),
        ("ln2", "LN₂", "LayerNorm, row by row", "T × d_model", (T, d), 1, f"{b}.ln2.hook_normalized"),
        ("mlp_pre", "MLP pre-activation", "LN₂(h_mid) W_1 + b_1", "T × d_ff", (T, ff), 1, f"{b}.mlp.hook_pre"),
        ("mlp_post", "MLP activation", "GELU", "T × d_ff", (T, ff), 1, f"{b}.mlp.hook_post"),
        ("mlp_out", "MLP output", "· W_2 + b_2", "T × d_model", (T, d), 1, f"{b}.hook_mlp_out"),
        ("resid_post", "h⁽ℓ⁾, the layer's output", "h_mid + MLP", "T × d_model", (T, d), 1, f"{b}.hook_resid_post"),
        (
            "final",
            f"h{layer_mark(last)}",
            "final hidden state",
            "T × d_model",
            (T, d),
            1,
            f"blocks.{last - 1}.hook_resid_post",
        ),
        ("final_ln", "final LayerNorm", "row by row", "T × d_model", (T, d), 1, "ln_final.hook_normalized"),
        ("logits", "last row · U", "unembedding", "[V]", (V,), 1, "hook_logits"),
        ("probs", "softmax", "distribution", "[V]", (V,), 1, "hook_probs"),
    ]
    return [ShapeRow(*row, layered=row[0] in LAYER_ROWS) for row in rows]


def head_blocks(trace: Trace, layer: int, name: str) -> list[np.ndarray]:
    """One head's T × d_head block per head of hook_q / hook_k / hook_v / hook_z (the primer's 'slice into heads')."""
    stacked = trace[f"blocks.{layer}.attn.hook_{name}"]
    return [stacked[:, head, :] for head in range(stacked.shape[1])]


def all_heads(trace: Trace, layer: int, name: str) -> np.ndarray:
    """hook_q / hook_k / hook_v of one layer as the T × (h·d_k) matrix before the split (head j owns a column block)."""
    stacked = trace[f"blocks.{layer}.attn.hook_{name}"]
    return stacked.reshape(stacked.shape[0], -1)


def pair_frequencies(d_model: int) -> np.ndarray:
    """Angle each sine/cosine column pair turns per position (radians), read off the engine's own PE table."""
    first_two = sinusoidal_positions(2, d_model)
    return np.arctan2(first_two[1, 0::2], first_two[1, 1::2])


def column_travel(matrix: np.ndarray) -> np.ndarray:
    """How far each column moves down the rows (max − min): large for the fast position columns, ~0 for slow ones."""
    return np.ptp(matrix, axis=0)


def stage_hooks(n_layers: int) -> list[tuple[str, str]]:
    """(label, trace name) of every point where a block has written to the residual stream, in order."""
    stages = [("h⁰", "blocks.0.hook_resid_pre")]
    for layer in range(n_layers):
        stages.append((f"after attention {layer + 1}", f"blocks.{layer}.hook_resid_mid"))
        stages.append((f"after MLP {layer + 1}", f"blocks.{layer}.hook_resid_post"))
    return stages


def residual_stages(trace: Trace, n_layers: int) -> list[tuple[str, np.ndarray]]:
    """The residual stream at every stage: h⁰, then after each attention and each MLP block."""
    return [(label, trace[name]) for label, name in stage_hooks(n_layers)]


def stage_norms(trace: Trace, n_layers: int) -> np.ndarray:
    """Length of each token's residual vector at each stage, shape (stages, T)."""
    return np.stack([np.linalg.norm(matrix, axis=-1) for _, matrix in residual_stages(trace, n_layers)])


def stage_projection(trace: Trace, n_layers: int) -> tuple[np.ndarray, np.ndarray]:
    """Every token's residual vector at every stage on one shared 2-D plane (the top two principal axes).

    Returns coordinates (stages, T, 2) and the share of the variation each axis keeps.
    """
    stacked = np.stack([matrix for _, matrix in residual_stages(trace, n_layers)])
    flat = stacked.reshape(-1, stacked.shape[-1])
    centred = flat - flat.mean(axis=0)
    _, singular, axes = np.linalg.svd(centred, full_matrices=False)
    signs = np.sign(axes[:2, np.argmax(np.abs(axes[:2]), axis=1)].diagonal())  # a fixed orientation per axis
    coordinates = centred @ (axes[:2].T * signs)
    share = singular[:2] ** 2 / max(float(np.sum(singular**2)), 1e-300)
    return coordinates.reshape(*stacked.shape[:2], 2), share


def lens_probabilities(model: Model, trace: Trace) -> tuple[list[str], np.ndarray]:
    """The engine's logit lens read at the last position as next-token probabilities, one row per stage."""
    lens = logit_lens(model, trace)
    stages = stage_hooks(model.config.n_layers)
    return [label for label, _ in stages], np.stack([softmax(lens[name][-1]) for _, name in stages])


@dataclass(frozen=True)
class Prediction:
    """One row of a top-k table."""

    rank: int
    token: str
    logit: float
    probability: float


def top_k(logits: np.ndarray, vocabulary: Sequence[str], k: int = 5, temperature: float = 1.0) -> list[Prediction]:
    """The k most likely next tokens of a logit vector at a temperature (ties keep vocabulary order)."""
    probs = softmax(np.asarray(logits, dtype=np.float64), temperature=temperature)
    order = np.argsort(-probs, kind="stable")[:k]
    return [Prediction(i + 1, vocabulary[j], float(logits[j]), float(probs[j])) for i, j in enumerate(order)]


def query_attention(trace: Trace, n_layers: int, query: int = -1) -> np.ndarray:
    """Attention weights of one query position in every head, rows ordered (layer 1 head 1, layer 1 head 2, …)."""
    return np.concatenate([trace[f"blocks.{layer}.attn.hook_pattern"][:, query, :] for layer in range(n_layers)])


def head_labels(config: Config) -> list[str]:
    """'layer 1, head 1' … (core.explain.analysis's names), in query_attention's row order."""
    return [head_label(head) for head in heads(config)]


def largest_entry(matrix: np.ndarray) -> tuple[int, int, float]:
    """Row, column and value of a matrix's entry of largest magnitude (finite entries only)."""
    values = np.where(np.isfinite(matrix), np.abs(matrix), -1.0)
    row, column = np.unravel_index(int(np.argmax(values)), values.shape)
    return int(row), int(column), float(matrix[row, column])


def row_norms(matrix: np.ndarray) -> np.ndarray:
    """Length of each row vector."""
    return np.linalg.norm(np.asarray(matrix), axis=-1)


def row_moments(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of each row (what a LayerNorm resets)."""
    return np.asarray(matrix).mean(axis=-1), np.asarray(matrix).std(axis=-1)


@dataclass(frozen=True)
class PrimerSection6:
    """The primer's printed §6 figures for ITS trained model, loaded from assets/primer_section6.json."""

    source: str
    note: str
    vocabulary: tuple[str, ...]
    readout: Mapping[str, object]
    final_layernorm: Mapping[str, object]
    layer1_patterns: Mapping[str, object]
    copula_probe: Mapping[str, object]
    copula_query_attention: Mapping[str, object]

    @property
    def query_attention(self) -> np.ndarray:
        """The printed attention of the query `is` on <BOS> the cat is, one row per head (layer 1 head 1 first)."""
        return np.array([row["weights"] for row in self.copula_query_attention["heads"]], dtype=np.float64)


@cache
def primer_section6() -> PrimerSection6:
    """The primer's §6 numbers as printed (three decimals), for the 'primer's model vs ours' comparison."""
    with PRIMER_ASSET.open(encoding="utf-8") as handle:
        data = json.load(handle)
    return PrimerSection6(
        source=data["source"],
        note=data["note"],
        vocabulary=tuple(data["vocabulary"]),
        readout=data["readout"],
        final_layernorm=data["final_layernorm"],
        layer1_patterns=data["layer1_patterns"],
        copula_probe=data["copula_probe"],
        copula_query_attention=data["copula_query_attention"],
    )


# The copula probe of primer §6 extended to both copulas: one subject of each class with each copula.
COPULA_PROBES: tuple[tuple[str, ...], ...] = (
    ("<BOS>", "the", "cat", "is"),
    ("<BOS>", "the", "mat", "is"),
    ("<BOS>", "the", "dog", "was"),
    ("<BOS>", "the", "floor", "was"),
)


@dataclass(frozen=True)
class CopulaProbe:
    """The model's read-out after a copula prompt: the subject's class, its two adjectives and their total mass."""

    prompt: tuple[str, ...]
    subject_class: str
    adjectives: tuple[str, ...]
    probs: np.ndarray  # (V,) next-token distribution
    top: tuple[Prediction, ...]
    class_mass: float  # probability on the two adjectives of the subject's class


def copula_probe(model: Model, prompt: Sequence[str], k: int = 3) -> CopulaProbe:
    """Read out a prompt ending in is/was after a bare subject noun (e.g. <BOS> the cat is)."""
    words = tuple(prompt)
    subject_class = NOUN_CLASS[words[-2]]
    adjectives = CLASS_ADJECTIVES[subject_class]
    logits = forward(model, model.encode(words))["hook_logits"][-1]
    probs = softmax(logits)
    return CopulaProbe(
        prompt=words,
        subject_class=subject_class,
        adjectives=adjectives,
        probs=probs,
        top=tuple(top_k(logits, model.vocabulary, k)),
        class_mass=float(sum(probs[model.vocabulary.index(a)] for a in adjectives)),
    )


@dataclass(frozen=True)
class CopulaRow:
    """One of the world's 16 copula sentence types as the model answers it at the adjective slot."""

    sentence: str
    held_out: bool
    top: str
    top_probability: float
    right_class: bool
    class_mass: float


def copula_table(model: Model) -> list[CopulaRow]:
    """Every copula type of the world, scored at its adjective slot in one batched pass (core.explain.analysis)."""
    scores = score_slots(model)
    data = scores.data
    rows = []
    for slot in np.flatnonzero(data.slot_copula):
        kind = data.types[int(data.slot_sentence[slot])]
        top = int(scores.top[slot])
        rows.append(
            CopulaRow(
                sentence=kind.text,
                held_out=kind.held_out,
                top=model.vocabulary[top],
                top_probability=float(scores.probs[slot, top]),
                right_class=bool(scores.right_class[slot]),
                class_mass=float(scores.class_mass[slot]),
            )
        )
    return rows


def rule_emergence(steps: Sequence[int], rule_accuracy: Sequence[float]) -> tuple[int | None, int | None]:
    """First training step where the held-out rule accuracy reaches 1, and the step from which it stays at 1."""
    accuracy = np.asarray(rule_accuracy, dtype=np.float64)
    full = accuracy >= 1.0
    first = int(steps[int(np.argmax(full))]) if full.any() else None
    if not full[-1]:
        return first, None
    below = np.flatnonzero(~full)
    return first, int(steps[below[-1] + 1]) if below.size else int(steps[0])


def corpus_presets() -> list[tuple[str, bool]]:
    """Every sentence type of the world as a prompt (<BOS> and the words, no <EOS>) and whether it is held out."""
    return [(" ".join((BOS, *kind.words)), kind.held_out) for kind in sentence_types()]
