"""The cost page's side-by-side table of the compared models, with its CSV download and its footnote."""

from __future__ import annotations

from functools import lru_cache

import streamlit as st

from core.plan import kv_cache as kv
from ui.elements.inert import frame_csv
from ui.elements.numbers import plural
from ui.elements.static_table import Cell, static_table
from ui.elements.widgets import OnFirstUse, download_csv
from ui.kv_cost.numbers import COST_COLUMN, READABLE, Compared, money
from ui.kv_cost.planner import MONEY, PINNED

pa = OnFirstUse("pyarrow")


def table(
    rows: pa.Table,
    *,
    download: tuple[str, str] | None = None,
    readable: tuple[str, ...] = (),
    money_columns: tuple[str, ...] = (),
) -> None:
    """A full-width table without index, `readable` columns with thousands separators, money columns pinned at the
    left (after the first column, pinned too) with a $ sign, and an optional CSV download (name, key) built only when
    clicked. Tables arrive as cached Arrow tables: a rerun converts nothing."""
    config = dict.fromkeys(readable, READABLE) | dict.fromkeys(money_columns, MONEY)
    if money_columns:
        config[rows.column_names[0]] = PINNED
    st.dataframe(rows, hide_index=True, width="stretch", column_config=config)
    if download:
        name, key = download
        download_csv(lambda: frame_csv(rows.to_pandas(), index=False), name=name, key=key)


@lru_cache(maxsize=64)  # 64 × ~1 kB
def _comparison(compared: Compared) -> tuple[tuple[str, ...], tuple[tuple[Cell, ...], ...]]:
    """The side-by-side table's columns and rows (raw values: the CSV keeps them, the page formats them)."""
    dep = compared[0][2]
    t = dep.context
    columns = (
        "model",
        COST_COLUMN,
        "attention",
        "parameters (B)",
        "KV per token (kB)",
        f"KV per user at {t:,} (GB)",
        f"KV per user at {t:,} (GiB)",
        "weights (GB)",
        "GPUs per copy",
        "users per copy",
        f"GPUs for {plural(dep.users, 'user')}",
        "tokens/s per copy (full batch)",
    )
    rows = tuple(
        (
            c.name,
            round(p.cost_per_million, 4) if p.cost_per_million else None,
            c.attention_kind,
            round(p.params / 1e9, 3),
            round(p.kv_per_token / 1e3, 2),
            round(kv.to_gb(p.kv_per_user), 3),
            round(kv.to_gib(p.kv_per_user), 3),
            round(kv.to_gb(p.weights_bytes), 2),
            d.tp,
            p.max_users,
            p.gpus_needed,
            round(p.tokens_per_second, 1) if p.tokens_per_second else None,
        )
        for _, c, d, p in compared
    )
    return columns, rows


def comparison_table(compared: Compared) -> None:
    """Up to five models side by side, with a CSV download. Drawn as plain HTML: it is on the page's first screen,
    where an Arrow table would import pandas and make the browser load its data grid before the page settles."""
    dep, t = compared[0][2], compared[0][2].context
    columns, rows = _comparison(compared)
    beyond = [f"{label} ({c.max_context:,})" for label, c, _, _ in compared[1:] if c.exceeds_context(t)]
    footnote = (
        f"Every row: {dep.gpu.name}, {dep.kv_dtype.upper()} cache, {dep.weight_bits}-bit weights, "
        f"{t:,} tokens, {plural(dep.users, 'user')}; compared models at your GPUs per copy, or the smallest number "
        "that holds them."
    )
    if beyond:  # in the footnote, not a note of its own: one coming or going moves nothing on the page
        footnote += (
            f" ⚠ Maximum context shorter than {t:,} tokens: {', '.join(beyond)}; "
            f"{'its row still assumes' if len(beyond) == 1 else 'their rows still assume'} the full {t:,} tokens."
        )
    static_table(
        columns,
        rows,
        label="Side by side",
        formats={COST_COLUMN: money},
        footnote=footnote,
        heading="Side by side",
        download=("comparison", "kv-comparison"),
    )
