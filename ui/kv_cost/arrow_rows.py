"""Rows of a table as an Arrow table that holds every value a model's sizes can reach.

Arrow stores whole numbers in 64 bits; a model the field limits accept can count more parameters than that (10,000
layers of width 10⁶ hold about 10²⁰). A column holding such a number is stored as decimals (float64) instead, which
keep its size to 15 digits and still read as a number with thousands separators.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ui.elements.widgets import OnFirstUse

pa = OnFirstUse("pyarrow")

INT64 = (-(2**63), 2**63 - 1)


def _too_wide(value: object) -> bool:
    """True for a whole number (not a bool) outside Arrow's 64-bit range."""
    return isinstance(value, int) and not isinstance(value, bool) and not INT64[0] <= value <= INT64[1]


def arrow_table(rows: Sequence[Mapping[str, object]]) -> pa.Table:
    """`pa.Table.from_pylist(rows)`, with every column that holds a whole number beyond 64 bits made decimal."""
    wide = {key for row in rows for key, value in row.items() if _too_wide(value)}
    if wide:
        rows = [{k: float(v) if k in wide and v is not None else v for k, v in row.items()} for row in rows]
    return pa.Table.from_pylist(list(rows))
