"""Formulas as HTML text (italic symbols, upright subscripts, centred lines) for a formula a page redraws on every
change of its main control.

KaTeX typesets every display formula in the browser again on each rerun; for a product of a few numbers, text needs
none of that work, wraps on a phone instead of running past the screen's edge, and reads aloud as written.
"""

from __future__ import annotations

import html


def sym(name: str, sub: str = "") -> str:
    """A symbol in italics with an optional upright subscript: `sym("n", "kv")` is n with kv below."""
    below = f"<sub>{html.escape(sub)}</sub>" if sub else ""
    return f"<i>{html.escape(name)}</i>{below}"


def product(*factors: object) -> str:
    """Factors joined by a centred dot; each is a number or HTML built by `sym`."""
    return " · ".join(f"{factor:,}" if isinstance(factor, int) else str(factor) for factor in factors)


def display(*lines: str) -> str:
    """Display lines, one per row, in the page's formula style (CSS `.formula` in ui/elements/browser.py)."""
    return '<div class="formula">' + "".join(f"<p>{line}</p>" for line in lines) + "</div>"
