"""Headline numbers drawn as one escaped HTML element: a label, a large value and a line under it per card.

Streamlit draws each `st.metric` with its caption as two elements inside a column, so six numbers cost the page
about twenty elements, every one re-sent and re-drawn on each rerun. Here the six are one element. Each card's
"?" shows what the number is on hover, on keyboard focus and on a tap, and screen readers read it as the button's
description. Every text is escaped, so a model name from an uploaded config shows as written. The CSS lives in
ui/elements/browser.py.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ui.elements import html_element


@dataclass(frozen=True)
class Card:
    """One headline number: what it is, its value as shown, the line under it and the help its "?" shows."""

    label: str
    value: str
    note: str
    help: str


def cards_html(cards: Sequence[Card], *, label: str, key: str, footnote: str = "") -> str:
    """The cards as a group named `label`; `key` makes the help texts' ids unique on the page."""
    stem = re.sub(r"[^a-z0-9-]", "-", key.lower())
    items = []
    for index, card in enumerate(cards):
        name, tip = html.escape(card.label), f"{stem}-help-{index}"
        items.append(
            '<div class="metric-card">'
            f'<p class="metric-label">{name}<button type="button" class="metric-help" '
            f'aria-label="{html.escape(f"What is {card.label}?", quote=True)}" aria-describedby="{tip}">?</button>'
            f'<span class="metric-help-text" role="tooltip" id="{tip}">{html.escape(card.help)}</span></p>'
            f'<p class="metric-value">{html.escape(card.value)}</p>'
            f'<p class="metric-note">{html.escape(card.note)}</p></div>'
        )
    below = f'<p class="metric-footnote">{html.escape(footnote)}</p>' if footnote else ""
    group = html.escape(label, quote=True)
    return f'<div class="metric-cards" role="group" aria-label="{group}">{"".join(items)}</div>{below}'


def metric_cards(cards: Sequence[Card], *, label: str, key: str, footnote: str = "") -> None:
    """Draw the cards (see `cards_html`)."""
    html_element.draw_html(cards_html(cards, label=label, key=key, footnote=footnote))
