"""Numbers as a reader writes them, read exactly: '32768', '32,768', '2.5' and '1e3' are numbers; '3-2', '1_0',
'3,2', '0x10', 'inf' and '²' are refused with the reason, never reshaped into some other number. Every page's link,
the cost page's fields and the planner's commands read numbers through this one rule."""

from __future__ import annotations

import math
import re

# A number as written: digits (thousands in groups of three after commas), a decimal part, an exponent.
NUMBER_FORM = re.compile(r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
NOT_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
MAX_CHARS = 64  # more than any number the planner's bounds allow, written out in full


class Refused(ValueError):
    """A number that cannot be used; the message says why in plain words ('it is outside 1 … 100,000')."""


def number_text(x: float) -> str:
    """A number as a reader writes it: 10,000,000, 0.05 or 1e+308."""
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e18 else f"{x:g}"


def read_number(raw: str, low: float, high: float, whole: bool) -> float | int:
    """A number exactly as written in [low, high]; Refused with the reason otherwise."""
    text = raw.strip()
    odd = next((c for c in text if not c.isascii()), None)
    if odd is not None:
        raise Refused(f"it holds “{odd}”, which is not a plain digit or letter")
    if NOT_FINITE.fullmatch(text):
        raise Refused("it is not a finite number")
    if len(text) > MAX_CHARS:
        raise Refused(f"it has {len(text):,} characters; a number here has at most {MAX_CHARS}")
    if not NUMBER_FORM.fullmatch(text):
        raise Refused("it is not a number")
    value = float(text.replace(",", ""))
    if not math.isfinite(value):
        raise Refused("it is not a finite number")
    if not low <= value <= high:
        raise Refused(f"it is outside {number_text(low)} … {number_text(high)}")
    if whole and not value.is_integer():
        raise Refused("it is not a whole number")
    return int(value) if whole else value
