"""The primer's glossary (Appendix C) for tooltips and the glossary page, loaded from `assets/glossary.json`."""

from __future__ import annotations

import json
from functools import cache

from ui.navigation import GLOSSARY, ROOT

ASSET = ROOT / "assets" / "glossary.json"


@cache
def terms() -> dict[str, dict[str, str]]:
    """Glossary entries by key, in the primer's order: {'kv-cache': {'term': ..., 'definition': ...}, ...}."""
    with ASSET.open(encoding="utf-8") as handle:
        entries = json.load(handle)["terms"]
    return {entry["key"]: {"term": entry["term"], "definition": entry["definition"]} for entry in entries}


def tip(key: str) -> str:
    """Tooltip text (for a widget's `help=`) for a glossary key, with a pointer to the glossary page."""
    entry = terms()[key]
    return f"**{entry['term']}.** {entry['definition']}\n\nMore terms on the Glossary page."


def link(key: str) -> str:
    """A markdown link to the glossary page's entry for a key, for use in running text."""
    return f"[{terms()[key]['term']}](/{GLOSSARY.url_path}#{key})"
