"""Where the primer's prose and its own printed numbers disagree: each checkable sentence, checked.

The sentences and the printed figures come from assets/primer_section6.json and assets/primer_appendix_a.json
(`prose_claims`). The checks use the printed figures, §4's table (the `gpt2` and `primer-7b` presets) and the toy world
as the dashboard reconstructs it (core/explain/world.py, docs/world.md). One sentence is about the arithmetic of any
model of §6's design (Appendix A's "W_O = 0 (equivalently W_V = 0)"): the primer's weights are not published, so it is
checked on our model of that design. A claim that holds is kept (`holds`): the page says it was checked and why it is
right, rather than listing it among the slips.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

import numpy as np

from core.explain import experiments as ex
from core.explain.analysis import bigram_ceilings, followers
from core.explain.attention import softmax
from core.explain.experiments import ASSET as APPENDIX_A_ASSET
from core.explain.trace_views import PRIMER_ASSET
from core.explain.transformer import layer_norm
from core.explain.weights import trained_model
from core.explain.world import sentence_types
from core.plan.model_config import presets

PRINTED_STEP = 0.0005  # half a unit in the third decimal: the largest rounding error of a printed 3-decimal number
CLOSE = 0.1  # "close to" / "about": within 10% of the stated value


@dataclass(frozen=True)
class Slip:
    """One checkable sentence of the primer: where it stands, what it says, the figures it is checked against."""

    key: str
    section: str
    sentence: str
    holds: bool
    figures: dict[str, object]


def _pattern_row(doc: dict, head: int, row: str) -> tuple[list[str], np.ndarray, int]:
    patterns = doc["layer1_patterns"]
    tokens = list(patterns["prompt"])
    printed = next(h for h in patterns["heads"] if h["head"] == head)
    weights = np.array(printed["weights"], dtype=np.float64)
    return tokens, weights[tokens.index(row), : tokens.index(row) + 1], int(printed["layer"])


def layer_norm_redo(doc: dict) -> dict[str, object]:
    """Step 8's final LayerNorm redone from the printed h²_last, γ and β, against the printed output.

    `bound` is the largest miss that rounding the printed inputs to three decimals can explain (first order: the
    LayerNorm's Jacobian times ±0.0005 on every h² entry, plus ±0.0005 on γ and β).
    """
    ln = doc["final_layernorm"]
    h, gamma, beta = (np.array(ln[k], dtype=np.float64) for k in ("h2_last", "gamma", "beta"))
    printed_out = np.array(ln["normalized_last"], dtype=np.float64)
    redo = layer_norm(h, gamma, beta)
    n, centred = h.size, h - h.mean()
    std = np.sqrt((centred**2).mean())
    z = centred / std
    jacobian = gamma[:, None] / std * (np.eye(n) - 1 / n - np.outer(z, z) / n)
    bound = np.abs(jacobian).sum(axis=1) * PRINTED_STEP + np.abs(z) * PRINTED_STEP + PRINTED_STEP
    return {
        "redo": redo,
        "printed": printed_out,
        "miss": float(np.abs(redo - printed_out).max()),
        "bound": float(bound.max()),
        "step": PRINTED_STEP,
        "mean": float(h.mean()),
        "std": float(std),
        "printed_mean": ln["mean_before"],
        "printed_std": ln["std_before"],
    }


def printed_decimals(values: list[float]) -> int:
    """The most decimals any of the printed values carries (0.997 → 3), as transcribed in the asset."""
    return max(len(f"{v!r}".partition(".")[2].rstrip("0")) if "." in f"{v!r}" else 0 for v in values)


def runners_up(doc: dict, tokens: list[str]) -> dict[str, object]:
    """The runners-up's probabilities as printed (each rounded on its own) and as the printed logits give them."""
    readout, vocab = doc["readout"], doc["vocabulary"]
    index = [vocab.index(t) for t in tokens]
    from_logits = softmax(np.array(readout["logits"], dtype=np.float64))
    printed = [float(readout["probs"][i]) for i in index]
    computed = [float(from_logits[i]) for i in index]
    return {
        "tokens": tokens,
        "printed": printed,
        "logits": [float(readout["logits"][i]) for i in index],
        "n_logits": len(readout["logits"]),
        "printed_sum": float(sum(printed)),
        "computed": computed,
        "computed_sum": float(sum(computed)),
        "step": PRINTED_STEP,
    }


def nonlinearity(doc: dict) -> dict[str, object]:
    """A linear map f has f(2x) = 2·f(x). The final LayerNorm (printed h²_last, γ, β) and the read-out's softmax (the
    printed logits) both fail it: the largest |f(2x) − 2·f(x)| of each."""
    ln, logits = doc["final_layernorm"], np.array(doc["readout"]["logits"], dtype=np.float64)
    h, gamma, beta = (np.array(ln[k], dtype=np.float64) for k in ("h2_last", "gamma", "beta"))
    return {
        "layernorm": float(np.abs(layer_norm(2 * h, gamma, beta) - 2 * layer_norm(h, gamma, beta)).max()),
        "softmax": float(np.abs(softmax(2 * logits) - 2 * softmax(logits)).max()),
    }


def mlp_ratios(preset_ids: list[str]) -> dict[str, object]:
    """d_ff / d_model for the §4 table's columns (GPT-2 small, the modern 7B), and whether the MLP is gated."""
    configs = [presets()[p] for p in preset_ids]
    return {
        "names": [c.name for c in configs],
        "d_model": [c.d_model for c in configs],
        "d_ff": [c.d_ff for c in configs],
        "ratio": [c.d_ff / c.d_model for c in configs],
        "gated": [c.gated_mlp for c in configs],
    }


def _section6(row: dict, doc: dict) -> tuple[bool, dict[str, object]]:
    claim = row["claim"]
    kind = claim["kind"]
    if kind in ("largest_share", "almost_all"):
        tokens, weights, layer = _pattern_row(doc, claim["head"], claim["row"])
        largest = int(np.argmax(weights))
        figures = {
            "layer": layer,
            "head": claim["head"],
            "row": claim["row"],
            "tokens": tokens[: len(weights)],
            "weights": weights.tolist(),
            "claimed": claim["token"],
            "claimed_weight": float(weights[tokens.index(claim["token"])]),
            "largest": tokens[largest],
            "largest_weight": float(weights[largest]),
        }
        holds = tokens[largest] == claim["token"] and (kind == "largest_share" or weights[largest] > 0.5)
        return bool(holds), figures
    ln = doc["final_layernorm"]
    if kind == "gamma_close_to":
        gamma = np.array(ln["gamma"], dtype=np.float64)
        worst = float(np.abs(gamma - claim["value"]).max())
        figures = {
            "value": claim["value"],
            "min": float(gamma.min()),
            "max": float(gamma.max()),
            "mean": float(gamma.mean()),
            "worst": worst,
        }
        return worst <= CLOSE * claim["value"], figures
    if kind == "span_about":
        out = np.array(ln["normalized_last"], dtype=np.float64)
        span = float(np.ptp(out))
        figures = {"value": claim["value"], "span": span, "min": float(out.min()), "max": float(out.max())}
        return abs(span - claim["value"]) <= CLOSE * claim["value"], figures
    if kind == "share":
        figures = {"value": claim["value"], **runners_up(doc, claim["tokens"])}
        return abs(figures["computed_sum"] - claim["value"]) <= PRINTED_STEP, figures
    if kind == "printed_decimals":
        decimals = printed_decimals(doc["readout"]["probs"])
        probs = doc["readout"]["probs"]
        figures = {"value": claim["value"], "decimals": decimals, "printed_sum": float(sum(probs))}
        figures["logit_decimals"] = printed_decimals([r["logit"] for r in doc["readout"]["top5"]])
        return decimals == claim["value"], figures
    if kind == "only_nonlinearity":
        return False, nonlinearity(doc)
    if kind == "ratio_about":
        figures = {"value": claim["value"], **mlp_ratios(claim["presets"])}
        return all(abs(r - claim["value"]) <= CLOSE * claim["value"] for r in figures["ratio"]), figures
    raise ValueError(f"unknown claim kind {kind!r}")


def _appendix_a(row: dict, doc: dict) -> tuple[bool, dict[str, object]]:
    claim = row["claim"]
    if claim["kind"] == "followers":
        anywhere, first = followers(claim["token"]), followers(claim["token"], position=1)
        figures = {
            "token": claim["token"],
            "value": claim["value"],
            "anywhere": anywhere,
            "first": first,
            "n_types": len(sentence_types()),
        }
        return len(anywhere) == claim["value"], figures
    if claim["kind"] == "zero_write_back":
        zeroed, kept = ex.value_checks(trained_model())
        literal = ex.weight_only_check(trained_model())
        figures = {
            "biases": claim["biases"],
            "zeroed": zeroed,
            "kept": kept,
            "literal": literal,
            "n_params": trained_model().n_params,
        }
        return kept.identical and literal.identical, figures
    if claim["kind"] == "token_only_reaches":
        ceilings = bigram_ceilings()
        figures = {
            "value": claim["value"],
            "token_only": ceilings.token_only,
            "position_aware": ceilings.position_aware,
            "n_slots": ceilings.n_slots,
        }
        return ceilings.token_only >= claim["value"], figures
    raise ValueError(f"unknown claim kind {claim['kind']!r}")


@cache
def section6_slips() -> tuple[Slip, ...]:
    """§6's checkable sentences (Steps 3 and 8) against the figures §6 prints."""
    with PRIMER_ASSET.open(encoding="utf-8") as handle:
        doc = json.load(handle)
    return tuple(
        Slip(row["key"], row["section"], row["sentence"], *_section6(row, doc)) for row in doc["prose_claims"]["rows"]
    )


@cache
def appendix_a_slips() -> tuple[Slip, ...]:
    """Appendix A's checkable sentences against the toy world and the printed tables."""
    with APPENDIX_A_ASSET.open(encoding="utf-8") as handle:
        doc = json.load(handle)
    return tuple(
        Slip(row["key"], row["section"], row["sentence"], *_appendix_a(row, doc)) for row in doc["prose_claims"]["rows"]
    )
