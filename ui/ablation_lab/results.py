"""The ablation lab's engine results, cached process-wide by small hashable settings (read-only, shared by every
session), and the number formats its tables share."""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.explain import experiments as ex
from core.explain.analysis import (
    COLLAPSE,
    BigramCeilings,
    Sweep,
    ablation_sweep,
    bigram_ceilings,
    next_token_table,
)
from core.explain.transformer import HeadKey
from ui.ablation_lab.state import MODEL
from ui.elements.widgets import OnFirstUse

pd = OnFirstUse("pandas")


PRIMER = ex.primer_tables()
NOT_PRINTED = "—"


def load_bearing_definition() -> str:
    """The page's one definition of a load-bearing head, with the threshold the engine applies (analysis.COLLAPSE)."""
    held_out = sweep().n_held_out_copula_slots
    return (
        f"load-bearing: removing that head alone leaves held-out rule accuracy at {COLLAPSE:.1f} or less (at most "
        f"{round(COLLAPSE * held_out)} of the {held_out} held-out decisions right)"
    )


# --------------------------------------------------------------------------------------------------- cached engine
@cache
def sweep() -> Sweep:
    """All 16 head subsets plus attention off on the trained model (one batched pass per setting)."""
    return ablation_sweep(MODEL)


@cache
def ceilings() -> BigramCeilings:
    """The best top-1 on the bigram slots without attention: token only, and token plus position."""
    return bigram_ceilings()


@lru_cache(maxsize=512)  # 512 × ~0.5 kB
def prediction(words: tuple[str, ...], removed: tuple[HeadKey, ...], off: bool) -> list[tuple[str, float]]:
    """Top three next tokens after a prompt under a bench setting."""
    return next_token_table(MODEL, words, ex.configuration(removed, off), k=3)


@lru_cache(maxsize=64)  # 64 × ~0.5 kB
def attention_rows(words: tuple[str, ...]) -> np.ndarray:
    """The last token's attention row in every head (the demo heatmap)."""
    return ex.query_attention(MODEL, words)


def family_names(family: ex.Family) -> tuple[str, ...]:
    """'shipped model', then 'seed N' for each independently trained one."""
    return ("shipped model", *(f"seed {seed}" for seed in family.seeds[1:]))


def shared(fig: go.Figure) -> go.Figure:
    """A cached bar chart, shared read-only by every session, without plotly's default template: the chart element
    themes it (ui/elements/chart_element.py), and the template is most of a small figure's JSON. (Heatmaps keep it:
    without it plotly draws tick marks beside their labels.)"""
    return fig.update_layout(template="none")


# --------------------------------------------------------------------------------------------------- formatting
def three_decimals(frame: pd.DataFrame) -> dict[str, object]:
    """Column settings showing every float column of a table to 3 decimals (0.500, not 0.5)."""
    return {
        column: st.column_config.NumberColumn(format="%.3f")
        for column in frame.columns
        if pd.api.types.is_float_dtype(frame[column])
    }


def three_places(value: float | None) -> str:
    """A rate to 3 decimals (0.500, not 0.5), or a dash where there is none (the primer printed no value)."""
    return NOT_PRINTED if value is None else f"{value:.3f}"


def primer_value(value: float | None, fmt: str = ".3f") -> str:
    """A printed primer number, or a dash where the primer printed none."""
    return NOT_PRINTED if value is None else format(value, fmt)
