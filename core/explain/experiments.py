"""Appendix A as an experiment bench: the checks and tables core/explain/analysis.py does not assemble itself.

The identity checks (Method 1 vs Method 2, a head's W_O rows vs the engine's routine, the cat/mat swap), the prompt
table, the 16-subset table, which heads carry the rule across the shipped model family (computed once per process),
zero vs mean ablation and the neuron ablation summary. Every measurement runs through
core.explain.transformer.forward and core.explain.analysis (which also reads a sweep as evidence and patches
activations); this module only chooses the runs and summarises them.
The primer's printed Appendix A numbers are loaded from assets/primer_appendix_a.json, to be shown beside ours.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from core.assets import ASSETS
from core.explain.analysis import (
    VERDICTS,
    Carriers,
    Sweep,
    ablation_extremes,
    family_sweep,
    head_label,
    heads,
    heads_name,
    mean_ablation,
    neuron_sweep,
    rule_carriers,
    score_slots,
)
from core.explain.transformer import NO_INTERVENTION, HeadKey, Intervention, Model, forward, zero_head_rows
from core.explain.weights import family, trained_model
from core.explain.world import CLASS_ADJECTIVES, corpus

ASSET = ASSETS / "primer_appendix_a.json"
CAT: tuple[str, ...] = ("<BOS>", "the", "cat", "is")
MAT: tuple[str, ...] = ("<BOS>", "the", "mat", "is")
COPULA_PROMPTS: tuple[tuple[str, ...], ...] = tuple(
    ("<BOS>", "the", noun, copula) for noun in ("cat", "dog", "mat", "floor") for copula in ("is", "was")
)
ON, OFF = "on", "off (W_O = 0)"
MAX_PROMPT_TOKENS = 12


# ------------------------------------------------------------------------------------------------ configurations
def configuration(removed: Iterable[HeadKey] = (), attention_off: bool = False) -> Intervention:
    """The intervention for a bench setting: attention off (Method 2 in every layer) or the given heads zeroed."""
    if attention_off:
        return Intervention(attention="off")
    removed = frozenset(removed)
    return Intervention(zero_heads=removed) if removed else NO_INTERVENTION


def configuration_label(removed: Iterable[HeadKey] = (), attention_off: bool = False) -> str:
    """The primer's wording: 'on', 'off (W_O = 0)', 'on, layer 1 head 1 removed'."""
    if attention_off:
        return OFF
    names = [head_label(h).replace(",", "") for h in sorted(removed)]
    return ON if not names else f"on, {' and '.join(names)} removed"


def sweep_index(sweep: Sweep, removed: Iterable[HeadKey] = (), attention_off: bool = False) -> int:
    """Row of a sweep for a bench setting (attention off is the last row)."""
    return sweep.removed.index(None if attention_off else frozenset(removed))


@dataclass(frozen=True)
class Measure:
    """One of the bench's measures under a setting, beside the trained model's."""

    now: float
    trained: float

    @property
    def change(self) -> float:
        """Setting minus trained model (negative: the setting lost this much)."""
        return self.now - self.trained


@dataclass(frozen=True)
class BenchReading:
    """The bench's read-out for a setting: the primer's three measures against the trained model."""

    changed: bool  # the setting differs from the trained model
    rule_accuracy: Measure
    bigram_top1: Measure
    copula_class_accuracy: Measure
    right_class_slots: int  # copula slots whose top prediction has the subject's class, under the setting


def bench_reading(sweep: Sweep, removed: Iterable[HeadKey] = (), attention_off: bool = False) -> BenchReading:
    """Read a bench setting off the sweep, beside the trained model (the sweep's empty subset)."""
    i, base = sweep_index(sweep, removed, attention_off), sweep_index(sweep)
    rule, bigram, cls = sweep.rule_accuracy, sweep.bigram_top1, sweep.copula_class_accuracy
    return BenchReading(
        changed=i != base,
        rule_accuracy=Measure(float(rule[i]), float(rule[base])),
        bigram_top1=Measure(float(bigram[i]), float(bigram[base])),
        copula_class_accuracy=Measure(float(cls[i]), float(cls[base])),
        right_class_slots=round(float(cls[i]) * sweep.n_copula_slots),
    )


def with_weights(model: Model, replacements: dict[str, np.ndarray]) -> Model:
    """A copy of a model with some parameters replaced (fabricated weights, as Appendix A's Method 2)."""
    return Model(
        config=model.config,
        params={**model.params, **replacements},
        vocabulary=model.vocabulary,
        prompt=model.prompt,
        metadata=model.metadata,
    )


def attention_zeroed(model: Model) -> Model:
    """Method 2 as weights: W_O = 0 and b_O = 0 in every layer, nothing else changed."""
    zeros = {}
    for layer in range(model.config.n_layers):
        for name in ("W_O", "b_O"):
            key = f"blocks.{layer}.attn.{name}"
            zeros[key] = np.zeros_like(model.params[key])
    return with_weights(model, zeros)


def head_rows_zeroed(model: Model, head: HeadKey) -> Model:
    """One head's rows of W_O set to 0 in the weights themselves (b_O kept)."""
    key = f"blocks.{head[0]}.attn.W_O"
    return with_weights(model, {key: zero_head_rows(model.params[key], [head[1]], model.config.d_head)})


def parse_prompt(model: Model, text: str, max_tokens: int = MAX_PROMPT_TOKENS) -> tuple[str, ...]:
    """A typed prompt as tokens, <BOS> first (added if missing); ValueError with a readable reason otherwise."""
    words = str(text).split()
    if words[:1] != ["<BOS>"]:
        words.insert(0, "<BOS>")
    if len(words) < 2:
        raise ValueError("type at least one word after <BOS>, e.g. 'the cat is'")
    if len(words) > max_tokens:
        raise ValueError(f"the prompt has {len(words)} tokens; this bench takes at most {max_tokens}")
    model.encode(words)  # raises ValueError naming the unknown words and the vocabulary
    if any(w in ("<PAD>", "<BOS>") for w in words[1:]):
        raise ValueError("<PAD> and <BOS> cannot appear inside a prompt")
    return tuple(words)


def query_attention(model: Model, words: Sequence[str]) -> np.ndarray:
    """The last token's attention weights in every head, (layers·heads, T): what a vendor's heatmap shows."""
    trace = forward(model, model.encode(words))
    return np.stack([trace[f"blocks.{layer}.attn.hook_pattern"][head, -1] for layer, head in heads(model.config)])


# ------------------------------------------------------------------------------------------------ identities
@dataclass(frozen=True)
class Check:
    """One row of the primer's identity table: the largest |Δ| over the logits and whether every bit agrees."""

    key: str
    check: str
    max_abs_delta: float
    identical: bool

    @property
    def shown(self) -> str:
        """As the primer prints it: '0 (identical to the last bit)' or the difference to 3 decimals."""
        return "0 (identical to the last bit)" if self.identical else f"{self.max_abs_delta:.3f}"


def _compare(key: str, check: str, a: np.ndarray, b: np.ndarray) -> Check:
    return Check(key, check, float(np.max(np.abs(a - b))), bool(np.array_equal(a, b)))


def _last_logits(model: Model, words: Sequence[str], intervention: Intervention = NO_INTERVENTION) -> np.ndarray:
    return forward(model, model.encode(words), intervention=intervention)["hook_logits"][-1]


def identity_checks(model: Model, prompt: Sequence[str] = CAT, swapped: Sequence[str] = MAT) -> tuple[Check, ...]:
    """Appendix A's four checks on the last position's logits, plus Method 1 vs 2 on every position of the corpus."""
    text, other = " ".join(prompt), " ".join(swapped)
    deleted = Intervention(attention="deleted")
    method2 = attention_zeroed(model)
    head_pairs = [
        (_last_logits(head_rows_zeroed(model, h), prompt), _last_logits(model, prompt, configuration([h])))
        for h in heads(model.config)
    ]
    data = corpus()
    whole = [
        forward(m, data.ids, lengths=data.lengths, intervention=i)["hook_logits"]
        for m, i in ((method2, NO_INTERVENTION), (model, deleted))
    ]
    return (
        _compare(
            "method2_vs_method1",
            "Method 2 (W_O = 0, b_O = 0 in both layers) against Method 1 (attention blocks deleted)",
            _last_logits(method2, prompt),
            _last_logits(model, prompt, deleted),
        ),
        _compare(
            "head_rows_vs_routine",
            "one head's rows of W_O zeroed against the engine's own head-ablation routine (each of the 4 heads)",
            np.stack([a for a, _ in head_pairs]),
            np.stack([b for _, b in head_pairs]),
        ),
        _compare(
            "swap_attention_off",
            f"attention off: {text} against {other}",
            _last_logits(model, prompt, configuration(attention_off=True)),
            _last_logits(model, swapped, configuration(attention_off=True)),
        ),
        _compare(
            "swap_attention_on",
            "attention on: the same swap",
            _last_logits(model, prompt),
            _last_logits(model, swapped),
        ),
        _compare(
            "method2_vs_method1_corpus",
            f"Method 2 against Method 1 at every position of all {len(data.types)} sentence types",
            whole[0][data.slot_sentence, data.slot_position],
            whole[1][data.slot_sentence, data.slot_position],
        ),
    )


def value_zeroed(model: Model, *, keep_out_bias: bool = False) -> Model:
    """Appendix A's "equivalently W_V = 0": W_V = 0 and b_V = 0 in every layer (b_O = 0 too unless kept)."""
    names = ("W_V", "b_V") if keep_out_bias else ("W_V", "b_V", "b_O")
    zeros = {}
    for layer in range(model.config.n_layers):
        for name in names:
            key = f"blocks.{layer}.attn.{name}"
            if key in model.params:
                zeros[key] = np.zeros_like(model.params[key])
    return with_weights(model, zeros)


def value_checks(model: Model, prompt: Sequence[str] = CAT) -> tuple[Check, Check]:
    """W_V = 0 against Method 2 (W_O = 0, b_O = 0) on the prompt's 20 logits: with b_O also 0, and with b_O kept."""
    method2 = _last_logits(attention_zeroed(model), prompt)
    return (
        _compare(
            "value_zeroed",
            "W_V = 0, b_V = 0, b_O = 0 in both layers against Method 2",
            _last_logits(value_zeroed(model), prompt),
            method2,
        ),
        _compare(
            "value_zeroed_out_bias_kept",
            "W_V = 0, b_V = 0 with b_O kept, against Method 2",
            _last_logits(value_zeroed(model, keep_out_bias=True), prompt),
            method2,
        ),
    )


def weight_only_check(model: Model, prompt: Sequence[str] = CAT) -> Check:
    """Appendix A's sentence read literally: W_V = 0 (its bias b_V kept) against W_O = 0 (b_O kept), in every layer.
    With biases the two differ: the first still writes b_V · W_O + b_O into the stream, the second b_O."""

    def zeroed(name: str) -> Model:
        return with_weights(
            model,
            {
                f"blocks.{layer}.attn.{name}": np.zeros_like(model.params[f"blocks.{layer}.attn.{name}"])
                for layer in range(model.config.n_layers)
            },
        )

    return _compare(
        "value_matrix_vs_out_matrix",
        "W_V = 0 against W_O = 0 in both layers, every bias kept",
        _last_logits(zeroed("W_V"), prompt),
        _last_logits(zeroed("W_O"), prompt),
    )


@dataclass(frozen=True)
class SelfAttention:
    """Appendix A's 'identity' fabrication on the §5 head: every token attends only to itself, W_V = W_O = I."""

    h0: np.ndarray  # the input rows
    h1: np.ndarray  # the stream after the attention block
    doubled: bool  # h¹ == 2·h⁰ to the last bit

    @property
    def largest_change(self) -> float:
        """Largest |h¹ − h⁰|: how far from 'passed through unchanged' the stream moved."""
        return float(np.max(np.abs(self.h1 - self.h0)))


def self_attention(model: Model, embeddings: np.ndarray) -> SelfAttention:
    """Run a single-head model with its own attention replaced by 'each token reads only itself' and W_V = W_O = I.

    Each token's value is then its own row, and adding it back doubles the row instead of passing it through.
    """
    d = model.config.d_model
    identity = {"blocks.0.attn.W_V": np.eye(d), "blocks.0.attn.W_O": np.eye(d)}
    X = np.asarray(embeddings, dtype=np.float64)
    fabricated = with_weights(model, identity)
    values = X @ identity["blocks.0.attn.W_V"]  # self-only weights: each head output is the token's own value row
    trace = forward(fabricated, embeddings=X, intervention=Intervention(head_outputs={(0, 0): values}))
    h1 = trace["blocks.0.hook_resid_post"]
    return SelfAttention(h0=X, h1=h1, doubled=bool(np.array_equal(h1, 2 * X)))


def road_logits(model: Model, prompt: Sequence[str] = CAT, swapped: Sequence[str] = MAT) -> dict[str, np.ndarray]:
    """The 20 logits after the prompt with attention on, by Method 1, by Method 2, and by Method 2 on the swapped
    prompt: the identity table as a picture (the last three are the same numbers)."""
    method2 = attention_zeroed(model)
    return {
        "attention on": _last_logits(model, prompt),
        "Method 1 (attention deleted)": _last_logits(model, prompt, Intervention(attention="deleted")),
        "Method 2 (W_O = 0, b_O = 0)": _last_logits(method2, prompt),
        f"Method 2 on {' '.join(swapped[1:])}": _last_logits(method2, swapped),
    }


# ------------------------------------------------------------------------------------------------ prompt table
@dataclass(frozen=True)
class PromptRow:
    """One row of the primer's prompt table (plus the surface adjectives' mass)."""

    prompt: str
    configuration: str
    top_token: str
    probability: float
    p_big_small: float
    p_red_blue: float


def prompt_row(model: Model, words: Sequence[str], removed: Iterable[HeadKey] = (), off: bool = False) -> PromptRow:
    """Top next token, its probability and the two classes' adjective mass after a prompt, under a setting."""
    removed = tuple(removed)
    probs = forward(model, model.encode(words), intervention=configuration(removed, off))["hook_probs"][-1]
    top = int(np.argmax(probs))
    mass = {c: float(sum(probs[model.vocabulary.index(a)] for a in adj)) for c, adj in CLASS_ADJECTIVES.items()}
    return PromptRow(
        prompt=" ".join(words),
        configuration=configuration_label(removed, off),
        top_token=model.vocabulary[top],
        probability=float(probs[top]),
        p_big_small=mass["animal"],
        p_red_blue=mass["surface"],
    )


def prompt_table(model: Model, prompts: Sequence[Sequence[str]] = (CAT, MAT)) -> list[PromptRow]:
    """Each prompt with attention on, off, and each single head removed (the primer prints five of these rows)."""
    settings = [((), False), ((), True), *(((h,), False) for h in heads(model.config))]
    return [prompt_row(model, words, removed, off) for removed, off in settings for words in prompts]


# ------------------------------------------------------------------------------------------------ subset table
def subset_table(sweep: Sweep) -> list[dict[str, object]]:
    """The sweep's rows with 'best' and 'worst' marked among the 15 real ablations
    (core.explain.analysis.ablation_extremes) and the number of heads each removes."""
    rows = sweep.rows()
    best, worst = ablation_extremes(sweep)
    for i, row in enumerate(rows):
        removed = sweep.removed[i]
        row["heads removed (count)"] = len(heads_of(removed)) if removed is not None else "all (W_O = 0)"
        row["marker"] = "best" if i == best else "worst" if i == worst else ""
    return rows


def heads_of(removed: frozenset[HeadKey] | None) -> tuple[HeadKey, ...]:
    """The heads of a sweep configuration, sorted (none for 'attention off', which is not a head subset)."""
    return tuple(sorted(removed or ()))


@dataclass(frozen=True)
class Family:
    """Rule carriers of the shipped model and each independently seeded one (the shipped model first)."""

    seeds: tuple[int, ...]
    carriers: tuple[Carriers, ...]

    @property
    def verdict_counts(self) -> dict[str, int]:
        """How many models' rule rests on one head, on several, on no single head."""
        return {v: sum(c.verdict == v for c in self.carriers) for v in VERDICTS}

    @property
    def distinct_answers(self) -> int:
        """How many different sets of rule-carrying heads the training runs produced."""
        return len({c.collapsing for c in self.carriers})

    @property
    def brightest_load_bearing(self) -> int:
        """In how many models the head brightest on the noun is load-bearing (its removal alone leaves rule accuracy
        ≤ COLLAPSE)."""
        return sum(c.evidence.brightest_is_load_bearing for c in self.carriers)


@cache
def shipped_family() -> Family:
    """The 16-subset sweep on every shipped model (assets/model), computed once per process and shared by every
    session: it is keyed by nothing but the shipped weights, and the first run costs seconds."""
    result = family_sweep((trained_model(), *family()))
    return Family(seeds=result.seeds, carriers=tuple(rule_carriers(s) for s in result.sweeps))


# ------------------------------------------------------------------------------------------------ zero vs mean
def zero_vs_mean(model: Model, chosen: Sequence[HeadKey] = ()) -> list[dict[str, object]]:
    """Each head, the chosen subset (if it is neither empty, a single head nor all four) and all four, removed by zero
    ablation and by mean ablation: the primer's three measures both ways."""
    every = heads(model.config)
    chosen = tuple(sorted(chosen))
    extra = [chosen] if 1 < len(chosen) < len(every) else []
    rows = []
    for removed in [*((h,) for h in every), *extra, every]:
        zero = score_slots(model, intervention=configuration(removed))
        mean = score_slots(model, intervention=mean_ablation(model, removed))
        rows.append(
            {
                "heads removed": heads_name(removed, len(every)),
                "rule accuracy, zero": zero.rule_accuracy,
                "rule accuracy, mean": mean.rule_accuracy,
                "right class on copula slots, zero": zero.copula_class_accuracy,
                "right class on copula slots, mean": mean.copula_class_accuracy,
                "top-1 on bigram slots, zero": zero.bigram_top1,
                "top-1 on bigram slots, mean": mean.bigram_top1,
            }
        )
    return rows


@dataclass(frozen=True)
class MethodGap:
    """Where zero and mean ablation disagree on copula class accuracy, over the rows of zero_vs_mean."""

    agree: int
    largest: int  # row with the largest |mean - zero|


def method_gap(rows: Sequence[dict[str, object]]) -> MethodGap:
    """Count the settings on which both methods give the same copula class accuracy; find the largest difference."""
    gaps = [float(r["right class on copula slots, mean"]) - float(r["right class on copula slots, zero"]) for r in rows]
    return MethodGap(agree=sum(abs(g) < 1e-12 for g in gaps), largest=max(range(len(rows)), key=lambda j: abs(gaps[j])))


# ------------------------------------------------------------------------------------------------ neurons
@dataclass(frozen=True)
class NeuronReport:
    """Every MLP neuron ablated alone; arrays are (layers, d_ff)."""

    mode: str
    rule_accuracy: np.ndarray
    class_accuracy: np.ndarray
    bigram_top1: np.ndarray
    baseline_class: float
    baseline_bigram: float

    @property
    def needed(self) -> list[tuple[int, int]]:
        """Neurons whose ablation costs any copula decision, most damaging first."""
        hit = [tuple(map(int, i)) for i in np.argwhere(self.class_accuracy < self.baseline_class)]
        return sorted(hit, key=lambda i: (self.class_accuracy[i], i))


def neuron_label(neuron: tuple[int, int]) -> str:
    """'layer 1, neuron 3' (both counted from 1)."""
    return f"layer {neuron[0] + 1}, neuron {neuron[1] + 1}"


def neuron_report(model: Model, mode: str = "zero") -> NeuronReport:
    """Which of the MLP neurons the copula rule needs, under zero or mean ablation."""
    sweep = neuron_sweep(model, mode)
    base = score_slots(model)
    return NeuronReport(
        mode=mode,
        rule_accuracy=sweep["rule_accuracy"],
        class_accuracy=sweep["copula_class_accuracy"],
        bigram_top1=sweep["bigram_top1"],
        baseline_class=base.copula_class_accuracy,
        baseline_bigram=base.bigram_top1,
    )


# ------------------------------------------------------------------------------------------------ the primer's tables
@dataclass(frozen=True)
class PrimerTables:
    """The primer's printed Appendix A numbers (and §6's copula attention), heads counted from 0 like ours."""

    identity: dict[str, dict]
    prompt_rows: tuple[dict, ...]
    single_head_rule: dict[frozenset[HeadKey], float]
    collateral: dict[frozenset[HeadKey] | None, tuple[float, float]]
    copula_attention: dict[HeadKey, tuple[float, ...]]
    attention_keys: tuple[str, ...]
    source: str
    larger_model: dict[str, dict[str, float]]  # findings stated on a larger model, quoted (not re-run here)
    remarks: dict[str, str]  # Method 2's two remarks: W_V = 0 is equivalent; self-attention doubles

    def brightest(self, token: str) -> HeadKey:
        """The head whose copula query puts the most weight on a token in the primer's printed §6 table."""
        column = self.attention_keys.index(token)
        return max(self.copula_attention, key=lambda h: self.copula_attention[h][column])


def _heads(rows: Iterable[Sequence[int]]) -> frozenset[HeadKey]:
    return frozenset((layer - 1, head - 1) for layer, head in rows)


@cache
def primer_tables() -> PrimerTables:
    """The asset assets/primer_appendix_a.json, keyed like the engine's sweep (None = attention off)."""
    doc = json.loads(ASSET.read_text(encoding="utf-8"))
    return PrimerTables(
        identity={row["key"]: row for row in doc["identity_checks"]["rows"]},
        prompt_rows=tuple(doc["prompt_table"]["rows"]),
        single_head_rule={_heads(r["removed"]): r["rule_accuracy"] for r in doc["single_head_ablation"]["rows"]},
        collateral={
            None if r["attention_off"] else _heads(r["removed"]): (r["bigram_top1"], r["copula_class_accuracy"])
            for r in doc["collateral_vs_targeted"]["rows"]
        },
        copula_attention={
            (r["head"][0] - 1, r["head"][1] - 1): tuple(r["weights"]) for r in doc["copula_attention"]["rows"]
        },
        attention_keys=tuple(doc["copula_attention"]["keys"]),
        source=doc["source"],
        larger_model={k: v for k, v in doc["larger_model_findings"].items() if k != "description"},
        remarks={k: v for k, v in doc["method2_remarks"].items() if k != "description"},
    )
