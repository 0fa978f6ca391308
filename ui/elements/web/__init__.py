"""The browser layer as real files: the page CSS, the link router, the number-field notes, the table downloads and the
chart script (and the briefings' and overview's CSS), read once at import and installed by ui/elements/browser.py.

They rely on Streamlit internals that a Streamlit upgrade could change; docs/browser-layer.md lists each one with the
test that would fail if it did.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent


LEADING_NOTE = re.compile(r"\A(?:(?://[^\n]*\n)+|/\*.*?\*/\n)", re.S)


@lru_cache(maxsize=16)  # 16 × ~10 kB: the browser layer's files
def web_file(name: str) -> str:
    """One of this folder's .js or .css files, read once per process, without the note at its top: the note is for
    the reader of the file, and every page would otherwise send it to the browser on every run."""
    return LEADING_NOTE.sub("", (HERE / name).read_text(encoding="utf-8"), count=1)
