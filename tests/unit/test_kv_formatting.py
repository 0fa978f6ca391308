"""The cost page's formatters return one kind of result for every input range, and its tables hold every count."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ui.elements.numbers import dollars, short
from ui.kv_cost.arrow_rows import arrow_table
from ui.kv_cost.numbers import count, gb, money, size, size_parts


@given(st.floats(0, 1e30, allow_nan=False))
def test_size_always_names_a_decimal_and_a_binary_unit(n_bytes):
    decimal, binary = size_parts(n_bytes)
    assert size(n_bytes) == f"{decimal} = {binary}" and size(n_bytes).count(" = ") == 1
    assert binary.endswith("iB")


@pytest.mark.parametrize(("n_bytes", "expected"), [(0.5, "0 bytes = 0.00 KiB"), (128, "128 bytes = 0.12 KiB")])
def test_size_below_a_kilobyte(n_bytes, expected):
    assert size(n_bytes) == expected


@given(st.floats(0, 1e30, allow_nan=False))
def test_number_formatters_return_text_for_any_magnitude(value):
    for text in (gb(value), money(value), count(value), dollars(value), short(value)):
        assert isinstance(text, str) and text


def test_counts_beyond_64_bits_fit_an_arrow_table():
    rows = [{"part": "a", "total": 10**20}, {"part": "b", "total": 5}]
    table = arrow_table(rows)
    assert table.column("total").to_pylist() == [1e20, 5.0]
    assert arrow_table([{"total": 5}]).column("total").type == "int64"
