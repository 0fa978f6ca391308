"""The primer's printed examples (Section 5 and Appendix B), loaded from the documented asset `assets/primer.json`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import cache

import numpy as np

from core.assets import ASSETS

ASSET = ASSETS / "primer.json"


def _frozen(values: object) -> np.ndarray:
    """A float64 array nobody can write to, so one copy can be shared by every session."""
    array = np.array(values, dtype=np.float64)
    array.setflags(write=False)
    return array


@dataclass(frozen=True)
class HandExample:
    """Section 5: the three-token prompt, its embedding rows and the single head's weights."""

    vocabulary: tuple[str, ...]
    prompt: tuple[str, ...]
    embedding_rows: dict[str, np.ndarray]
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    illustrative_logits: np.ndarray

    @property
    def token_ids(self) -> list[int]:
        """The prompt's ids in the Section 5 vocabulary ([0, 1, 3] for 'the cat sat')."""
        return [self.vocabulary.index(token) for token in self.prompt]

    @property
    def X(self) -> np.ndarray:
        """The prompt's embedding rows stacked: the initial residual stream h⁰, shape T × d_model."""
        return _frozen([self.embedding_rows[token] for token in self.prompt])


@dataclass(frozen=True)
class ConvExample:
    """Appendix B: the image, the two filters and the class names."""

    image: np.ndarray
    filters: dict[str, np.ndarray]
    classes: tuple[str, ...]


@cache
def _load() -> dict:
    with ASSET.open(encoding="utf-8") as handle:
        return json.load(handle)


@cache
def hand_example() -> HandExample:
    """The Section 5 worked example exactly as printed."""
    raw = _load()["section5"]
    return HandExample(
        vocabulary=tuple(raw["vocabulary"]),
        prompt=tuple(raw["prompt"]),
        embedding_rows={token: _frozen(row) for token, row in raw["embedding_rows"].items()},
        W_Q=_frozen(raw["W_Q"]),
        W_K=_frozen(raw["W_K"]),
        W_V=_frozen(raw["W_V"]),
        W_O=_frozen(raw["W_O"]),
        illustrative_logits=_frozen(raw["illustrative_logits"]["values"]),
    )


@cache
def conv_example() -> ConvExample:
    """The Appendix B worked example exactly as printed."""
    raw = _load()["appendix_b"]
    return ConvExample(
        image=_frozen(raw["image"]),
        filters={name: _frozen(kernel) for name, kernel in raw["filters"].items()},
        classes=tuple(raw["classes"]),
    )


def printed(value: float, decimals: int) -> str:
    """A number rounded the way a person prints it: decimal, half up (0.10275 → '0.1028' at 4 decimals).

    float64 stores ties such as 0.10275 just below or above the decimal value, so f-string rounding can go either
    way; the value is first read back at 12 decimals (far below the printed digits, far above float noise) and then
    rounded half up in decimal arithmetic.
    """
    exact = Decimal(f"{value:.12f}")
    rounded = exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return f"{rounded + 0:.{decimals}f}"  # + 0 turns a rounded -0 into 0
