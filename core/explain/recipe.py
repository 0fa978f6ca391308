"""The shipped model's training recipe: the seeds and optimiser settings `core.explain.training` runs, numpy and torch
free so that a page can state them without importing torch."""

from __future__ import annotations

from dataclasses import dataclass

MAIN_SEED = 0  # the shipped model's seed
FAMILY_SEEDS = tuple(range(1, 9))  # its siblings: the same recipe from other seeds


@dataclass(frozen=True)
class Recipe:
    """Optimiser settings: Adam, linear warm-up then cosine decay, decoupled weight decay (AdamW)."""

    steps: int = 2000
    learning_rate: float = 0.03
    warmup: int = 100
    weight_decay: float = 0.0
    init_std: float = 0.3
    log_every: int = 50


RECIPE = Recipe()
