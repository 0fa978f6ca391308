"""The cost page's own model, apart from its widgets: the custom model's name (from its config file, the link or the
preset it was edited from), the model fields a link gives beside a preset, and the paste box's limit."""

from __future__ import annotations

import streamlit as st

from core.plan.model_config import FIELD_NAMES, MAX_CONFIG_BYTES, MAX_NAME, ParseReport, model_name, presets
from ui.elements import link_reader as lr

PRIMER = "primer-7b"
CUSTOM = "custom"
FIELD_KEYS = {name: f"f_{name}" for name in FIELD_NAMES}
NAME_KEY = "model_name"  # the link's name of a custom model
CUSTOM_NAME = "kv_custom_name"  # the custom model's name in the session
YOUR_MODEL = "your model"  # a custom model's name when neither its file nor the link gives one


def name_value(raw: str, notes: list[str]) -> list[str]:
    """A custom model's name from the link, kept only when it is already a plain, short model name (letters, digits,
    spaces and . / + - ( ), at most MAX_NAME characters), as the page writes it; otherwise refused and named."""
    if model_name(raw, "") != raw:
        reason = (
            f"a model's name here holds only letters, digits, spaces and . / + - ( ), at most {MAX_NAME} characters"
        )
        notes.append(lr.refusal(NAME_KEY, raw, reason, f"used “{YOUR_MODEL}” instead"))
        return []
    return [raw]


def edited_preset(model: object, link: dict[str, list[str]]) -> str | None:
    """The name of a custom model made of the preset the link names and the model fields it gives beside it
    ('Llama-3.1-8B (edited)'), or None when the link's fields change nothing of the preset."""
    if model not in presets() or model == CUSTOM:
        return None
    preset = presets()[model]
    changed = [n for n, k in FIELD_KEYS.items() if k in link and field_value(n, link[k][-1]) != getattr(preset, n)]
    return model_name(f"{preset.name} (edited)", YOUR_MODEL) if changed else None


def field_value(name: str, text: str) -> int | bool | str:
    """A model field's value from its link form ('40', 'true', 'rmsnorm'), as `_canonical` wrote it."""
    default = getattr(presets()[PRIMER], name)
    if isinstance(default, bool):
        return text.lower() == "true"
    return int(text) if isinstance(default, int) else text


def check_paste() -> bool:
    """Keep a pasted text only up to the upload limit: a longer one (which the box cuts one character past the limit)
    is named in the report and nothing of it is kept, as the session would hold it and the browser re-send it on every
    run. True when the text was kept."""
    if len(st.session_state.get("kv_paste") or "") <= MAX_CONFIG_BYTES:
        return True
    st.session_state["kv_paste"] = ""
    message = f"The pasted text is longer than {MAX_CONFIG_BYTES:,} characters, the most this box reads (a config.json"
    st.session_state["kv_report"] = ("pasted text", ParseReport(None, errors=(f"{message} is a few kB).",)))
    return False


def custom_name() -> str:
    """The custom model's name: from its config file, the link or the preset it was edited from; else 'your model'."""
    return st.session_state.get(CUSTOM_NAME, YOUR_MODEL)
