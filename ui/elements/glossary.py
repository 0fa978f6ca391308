"""The glossary for links, tooltips and the glossary page, loaded from `assets/glossary.json`.

Two kinds of entry: the primer's Appendix C (origin "primer", kept as printed) and the dashboard's own terms (origin
"dashboard") for words its pages use that the primer does not define. A definition names a figure of a model, a GPU
preset or an engine as a placeholder ({vllm_block_tokens}); `figures()` fills it from the engine when the glossary
loads, so the asset holds no typed figure that could drift from the engine. A link opens the glossary page on its term
in the same tab and the same session (ui/elements/shell.py routes in-app links without reloading).
"""

from __future__ import annotations

import html
import json
import re
from functools import cache

import streamlit as st

from ui.elements.navigation import GLOSSARY, ROOT

ASSET = ROOT / "assets" / "glossary.json"
PRIMER, DASHBOARD = "primer", "dashboard"
TERM_PARAM = "term"


PLACEHOLDER = re.compile(r"\{([a-z_0-9]+)\}")
HBM_EXAMPLE = "h100-sxm"  # the GPU the hbm entry quotes, as the driver reports it


@cache
def figures() -> dict[str, str]:
    """The figures a definition may name as {name}, from the engine and its assets: the vLLM block size (the engine
    profiles), the H100's memory as its driver reports it and the GPUs that carry GDDR (the GPU presets), how much
    larger a GiB is than a GB, and the bigram slots' ceilings (the toy world)."""
    from core.explain.analysis import bigram_ceilings  # the glossary loads the engine only when it is read
    from core.plan.engines import profile
    from core.plan.kv_memory import GB, GIB, MIB, gpus

    h100, ceilings = gpus()[HBM_EXAMPLE], bigram_ceilings()
    gddr = [gpu.name for gpu in gpus().values() if "GDDR" in gpu.memory_source]
    return {
        "vllm_block_tokens": str(profile("vllm").block_tokens),
        "h100_name": h100.name,
        "h100_mib": f"{h100.memory_mib:,.0f}",
        "h100_gb": f"{h100.memory_gb:g}",
        "h100_bytes": f"{h100.memory_mib * MIB / 1e9:.1f}",
        "gib_over_gb": f"{GIB / GB - 1:.0%}",
        "gddr_names": " and ".join(gddr),
        "token_only": f"{ceilings.token_only:.3f}",
        "position_aware": f"{ceilings.position_aware:.3f}",
    }


def filled(text: str) -> str:
    """A definition with its {name} placeholders replaced by the engine's figures."""
    return PLACEHOLDER.sub(lambda m: figures()[m.group(1)], text) if PLACEHOLDER.search(text) else text


@cache
def terms() -> dict[str, dict[str, str]]:
    """Glossary entries by key, the primer's first in its order, then the dashboard's own, definitions filled with the
    engine's figures: {'kv-cache': {'term': ..., 'definition': ..., 'short': 'KV cache', 'origin': 'primer'}, ...}."""
    with ASSET.open(encoding="utf-8") as handle:
        entries = json.load(handle)["terms"]
    fields = ("term", "definition", "short", "origin")
    return {
        entry["key"]: {field: filled(entry[field]) if field == "definition" else entry[field] for field in fields}
        for entry in entries
    }


def qkv_questions() -> dict[str, str]:
    """The primer's plain question for each of the query, the key and the value, read from the glossary's attention
    head entry (its Appendix C): {'query': 'what am I looking for?', 'key': ..., 'value': ...}."""
    found = dict(re.findall(r'the (query|key|value) \("([^"]+)"\)', terms()["attention-head"]["definition"]))
    if set(found) != {"query", "key", "value"}:
        raise ValueError("the glossary's attention-head entry no longer quotes the three questions")
    return found


def tip(key: str) -> str:
    """Tooltip text (for a widget's `help=`) for a glossary key, with a pointer to the glossary page."""
    entry = terms()[key]
    return f"**{entry['term']}.** {entry['definition']}\n\nMore terms on the Glossary page."


def href(key: str) -> str:
    """The glossary page opened on one term, relative to the current page (so it works under any base path)."""
    if key not in terms():
        raise KeyError(f"no glossary entry {key!r}")
    return f"{GLOSSARY.url_path}?{TERM_PARAM}={key}"


def link(key: str, text: str | None = None) -> str:
    """A markdown link to a glossary entry for running text; its text is the sentence's own word (`text`), by
    default the entry's short name ('KV cache', not the heading 'KV cache, …')."""
    return f"[{text or terms()[key]['short']}]({href(key)})"


def matches(entry: dict[str, str], wanted: str | None) -> bool:
    """Whether a glossary entry's term or definition contains the reader's words (case-insensitive; empty = all)."""
    text = (wanted or "").strip().casefold()
    return not text or text in entry["term"].casefold() or text in entry["definition"].casefold()


def entry_markdown(key: str, entry: dict[str, str]) -> str:
    """One entry as markdown: its term as a heading whose id is the entry's key (so `glossary#kv-cache` lands on it),
    then its definition. Both come from the glossary asset, not from a reader; a '<' or '&' in them is escaped, so
    the text shows as written."""
    term = html.escape(entry["term"])
    definition = entry["definition"].replace("&", "&amp;").replace("<", "&lt;")
    return f'<h3 id="{html.escape(key, quote=True)}">{term}</h3>\n\n{definition}'


def entries_markdown(entries: dict[str, dict[str, str]], origin: str) -> None:
    """The entries of one origin as one markdown element (one element for the browser to draw, not two per term)."""
    picked = [entry_markdown(key, entry) for key, entry in entries.items() if entry["origin"] == origin]
    if picked:  # HTML allowed for the headings' ids only: the text is the asset's, escaped; no reader's words get in
        st.markdown("\n\n".join(picked), unsafe_allow_html=True)
