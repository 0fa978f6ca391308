"""The two-layer trace's prompt builder: a preset from the corpus, or a prompt built word by word."""

from __future__ import annotations

import streamlit as st

from core.explain.trace_views import (
    BOS,
    MAX_TOKENS,
    PromptError,
    parse_prompt,
)
from core.explain.transformer import Model
from ui.elements.glossary import tip
from ui.elements.safe_text import plain
from ui.two_layer_trace.results import DEFAULT_PROMPT, prompt_presets

# ---------------------------------------------------------------- prompt builder


def _append_token() -> None:
    token = st.session_state.get("trace_add")
    if token:
        st.session_state["trace_prompt"] = f"{st.session_state.get('trace_prompt', '')} {token}".strip()
    st.session_state["trace_add"] = None


def _remove_last() -> None:
    words = str(st.session_state.get("trace_prompt", "")).split()
    st.session_state["trace_prompt"] = " ".join(words[:-1]) if len(words) > 1 else BOS


def _use_preset() -> None:
    preset = st.session_state.get("trace_preset")
    if preset:
        st.session_state["trace_prompt"] = preset
    st.session_state["trace_preset"] = None


def prompt_builder(model: Model) -> tuple[str, ...]:
    """Prompt widgets; returns the tokens to trace (the last valid prompt when the current one is refused)."""
    left, middle, right = st.columns([5, 4, 2], vertical_alignment="bottom")
    with left:
        st.text_input(
            "Prompt: type words separated by spaces, or click tokens below",
            value=DEFAULT_PROMPT,
            key="trace_prompt",
            bind="query-params",
            persist_state="session",
            help=tip("token"),
        )
    with middle:
        presets = prompt_presets()
        st.selectbox(
            "Or start from a preset",
            list(presets),
            format_func=presets.__getitem__,
            index=None,
            placeholder="The primer's prompts and the world's sentences…",
            key="trace_preset",
            on_change=_use_preset,
        )
    with right:
        st.button("Remove last", on_click=_remove_last, key="trace_pop", icon=":material/backspace:", width="stretch")
    st.pills("Add a token", model.vocabulary, key="trace_add", on_change=_append_token, label_visibility="collapsed")
    text = st.session_state.get("trace_prompt", DEFAULT_PROMPT)
    last_valid = st.session_state.get("trace_last_valid", tuple(DEFAULT_PROMPT.split()))
    try:
        tokens = parse_prompt(text, model.vocabulary, MAX_TOKENS)
    except PromptError as error:
        st.error(f"{plain(error, 240)} The page keeps showing the last valid prompt: {' '.join(last_valid)}.")
        return last_valid
    if text.split()[0].upper() != BOS:
        st.caption(f"{BOS} was put in front: every sequence the model ever saw starts with it.")
    st.session_state["trace_last_valid"] = tokens
    return tokens
