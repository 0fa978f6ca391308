"""User-derived text (a link's value, a typed prompt, a config file's name) made safe inside the page's markdown.

Streamlit renders every message, caption and label as markdown (with GitHub autolinks, `:red[...]` colours and `$`
formulas), so a link value such as `[click](https://…)` would show a live link inside the page's own warning. `plain`
backslash-escapes every ASCII punctuation mark (CommonMark renders `\\x` as `x`, so the reader sees the text as typed),
breaks web addresses (which are linked even when escaped), folds line breaks into spaces and shortens the text to a
readable excerpt.
"""

from __future__ import annotations

import re
import string
import unicodedata

SHORT = 60  # characters of user text echoed in a message; enough to recognise a value, too few to flood the page
_SPECIAL = re.compile("([" + re.escape(string.punctuation) + "])")
_BREAKS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
_AUTOLINK = re.compile(r"://|www\.|@", re.IGNORECASE)  # where GitHub-style autolinks start, escaped or not
_JOIN = "\u200b"  # a zero-width space: invisible, and it breaks an address so it is not made a link


def invisible(text: str) -> list[str]:
    """The invisible format characters in `text` (right-to-left overrides, isolates, zero-width marks: Unicode's
    category Cf), each as 'U+202E RIGHT-TO-LEFT OVERRIDE', once each, in order."""
    found = {c: None for c in text if unicodedata.category(c) == "Cf"}
    return [f"U+{ord(c):04X} {unicodedata.name(c, 'FORMAT CHARACTER')}" for c in found]


def without_invisible(text: str) -> str:
    """`text` with its invisible format characters removed (they can make a name display in another order)."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def _shown(c: str) -> str:
    return f"<U+{ord(c):04X}>" if unicodedata.category(c) == "Cf" else c


def shorten(text: object, limit: int = SHORT) -> str:
    """The text on one line, cut to `limit` characters with '…' and the full length when it was longer; an invisible
    format character shows as its code (<U+202E>), so it can neither hide nor reorder what is around it."""
    flat = "".join(map(_shown, _BREAKS.sub(" ", str(text))))
    if len(flat) <= limit:
        return flat
    return f"{flat[:limit]}… ({len(flat):,} characters)"


def plain(text: object, limit: int = SHORT) -> str:
    """User text as markdown that renders as written: shortened, every punctuation mark escaped, and web or mail
    addresses broken by a zero-width space (the markdown renderer links them even when their characters are escaped)."""
    unlinked = _AUTOLINK.sub(lambda found: found.group(0)[0] + _JOIN + found.group(0)[1:], shorten(text, limit))
    return _SPECIAL.sub(r"\\\1", unlinked)


def quoted(text: object, limit: int = SHORT) -> str:
    """`plain` between typographic quotes, for naming a value inside a sentence: “[click](…)”."""
    return f"“{plain(text, limit)}”"
