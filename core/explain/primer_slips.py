"""Where the primer's prose and its own printed numbers disagree: each checkable sentence, checked.

The sentences and the printed figures come from assets/primer_section6.json and assets/primer_appendix_a.json
(`prose_claims`); the checks use only those printed figures and the toy world (core/explain/world.py), never our model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

import numpy as np

from core.explain.analysis import bigram_ceilings, followers
from core.explain.experiments import ASSET as APPENDIX_A_ASSET
from core.explain.trace_views import PRIMER_ASSET
from core.explain.transformer import layer_norm

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


def _pattern_row(doc: dict, head: int, row: str) -> tuple[list[str], np.ndarray]:
    patterns = doc["layer1_patterns"]
    tokens = list(patterns["prompt"])
    weights = np.array(next(h["weights"] for h in patterns["heads"] if h["head"] == head), dtype=np.float64)
    return tokens, weights[tokens.index(row), : tokens.index(row) + 1]


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


def _section6(row: dict, doc: dict) -> tuple[bool, dict[str, object]]:
    claim = row["claim"]
    kind = claim["kind"]
    if kind in ("largest_share", "almost_all"):
        tokens, weights = _pattern_row(doc, claim["head"], claim["row"])
        largest = int(np.argmax(weights))
        figures = {
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
    if kind == "redo_within":
        redo = layer_norm_redo(doc)
        return redo["miss"] <= claim["value"], {"value": claim["value"], **redo}
    raise ValueError(f"unknown claim kind {kind!r}")


def _appendix_a(row: dict, doc: dict) -> tuple[bool, dict[str, object]]:
    claim = row["claim"]
    if claim["kind"] == "followers":
        anywhere, first = followers(claim["token"]), followers(claim["token"], position=1)
        figures = {"token": claim["token"], "value": claim["value"], "anywhere": anywhere, "first": first}
        return len(anywhere) == claim["value"], figures
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
