"""The cost page's numbers in words: sizes in decimal and binary units, dollars, counts, and the rows of the models
compared side by side."""

from __future__ import annotations

from functools import lru_cache

import streamlit as st

from core.plan import kv_cache as kv
from core.plan.model_config import (
    ModelConfig,
)
from ui.elements.numbers import plural

READABLE = st.column_config.NumberColumn(format="localized")  # 124,439,808 rather than 124439808
COLOURS = ["#1f5f99", "#d9822b", "#2e8b57", "#8e44ad", "#c0392b"]
Compared = tuple[tuple[str, ModelConfig, kv.Deployment, kv.Plan], ...]
COST_COLUMN = "$ per 1M output tokens at full batch, for comparison"


# --------------------------------------------------------------------------------------------------- formatting
def size_parts(n_bytes: float) -> tuple[str, str]:
    """A byte count in the unit that reads best, decimal and binary, for every count: ('17.18 GB', '16.00 GiB'),
    ('512 bytes', '0.50 KiB') below a kilobyte."""
    for dec, dec_name, binary, bin_name in (
        (1e12, "TB", 2**40, "TiB"),
        (1e9, "GB", 2**30, "GiB"),
        (1e6, "MB", 2**20, "MiB"),
        (1e3, "kB", 2**10, "KiB"),
    ):
        if abs(n_bytes) >= dec:
            return f"{n_bytes / dec:,.2f} {dec_name}", f"{n_bytes / binary:,.2f} {bin_name}"
    return f"{n_bytes:,.0f} bytes", f"{n_bytes / 2**10:,.2f} KiB"


def size(n_bytes: float) -> str:
    """A byte count, decimal and binary both named: '17.18 GB = 16.00 GiB', '512 bytes = 0.50 KiB'."""
    return " = ".join(size_parts(n_bytes))


def same_bytes(n_bytes: float) -> str:
    """One size in both units, as the footnote under the headline numbers says it: 'One user's KV cache here, 16.00
    GiB, reads as 17.18 GB.'"""
    return f"One user's KV cache here, {kv.to_gib(n_bytes):,.2f} GiB, reads as {kv.to_gb(n_bytes):,.2f} GB."


def gb(n_bytes: float) -> str:
    """Bytes as decimal gigabytes, '17.18 GB'."""
    return f"{kv.to_gb(n_bytes):,.2f} GB"


def money(value: float | None) -> str:
    """Dollars to the cent, or to 1/100 cent below ten cents; 'n/a' for no value."""
    return "n/a" if value is None else f"${value:,.2f}" if value >= 0.1 else f"${value:,.4f}"


def count(n: float) -> str:
    """A parameter count in billions or millions."""
    return f"{n / 1e9:,.2f} B" if n >= 1e9 else f"{n / 1e6:,.1f} M" if n >= 1e6 else f"{n:,.0f}"


def gpus_text(n: int) -> str:
    return plural(n, "GPU")


@lru_cache(maxsize=64)  # 64 × ~5 kB
def compared_rows(config: ModelConfig, dep: kv.Deployment, others: tuple[ModelConfig, ...]) -> Compared:
    """The chosen model and the compared ones, labelled with their GPUs per copy when that differs from the choice."""
    return tuple(
        (c.name if d.tp == dep.tp else f"{c.name} ({d.tp} GPUs)", c, d, p)
        for c, d, p in kv.compared_plans(config, dep, list(others))
    )
