"""Text that leaves the page made inert where it lands: a spreadsheet's cells and JSON inside an HTML <script>.

A CSV cell starting with =, +, -, @, a tab or a carriage return is read by Excel and LibreOffice as a formula; OWASP's
rule is to start such a text with a single quote, which the spreadsheet shows as the text itself. The check looks past
leading spaces and invisible characters (' =1+1' is still a formula to some spreadsheets) and at the full-width signs
some keyboards type. Numbers are left as numbers (a negative number is not a formula).

JSON inside a <script> element must not hold '<' (which could close the element or open a comment), '>' or '&', nor the
line separators U+2028/2029 that older script parsers treat as line breaks: each is written as its \\uXXXX escape,
which JSON reads back as the same character.
"""

from __future__ import annotations

import json
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def csv_cell(value: object) -> object:
    """A cell for a CSV download: text a spreadsheet would run as a formula, even after leading spaces or invisible
    characters, gets a leading single quote."""
    if isinstance(value, str) and _visible_start(value).startswith(FORMULA_START):
        return "'" + value
    return value


def _visible_start(text: str) -> str:
    """The text from its first character that is neither a space nor invisible (tabs and returns count: they start
    formulas)."""
    for i, c in enumerate(text):
        if c in "\t\r" or not (c.isspace() or unicodedata.category(c) in ("Cf", "Zs")):
            return text[i:]
    return ""


def frame_csv(frame: pd.DataFrame, *, index: bool) -> bytes:
    """A table as CSV bytes with every text cell, column name and (with `index`) row label made inert."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    safe = frame.copy()
    for position in range(frame.shape[1]):
        values = safe.iloc[:, position]
        if not (is_numeric_dtype(values) or is_bool_dtype(values)):
            safe.isetitem(position, values.map(csv_cell))
    safe.columns = [csv_cell(column) for column in frame.columns]
    if index:
        safe.index = [csv_cell(label) for label in frame.index]
    return safe.to_csv(index=index).encode("utf-8")


def script_text(text: str) -> str:
    """JSON text made safe inside a <script> element (see the module's note)."""
    return text.translate(SCRIPT_SAFE)


def script_json(value: object) -> str:
    """`value` as JSON that is safe inside a <script> element."""
    return script_text(json.dumps(value))
