"""Metric cards (ui/elements/metric_cards.py): every text escaped, each "?" described by its own help text."""

from __future__ import annotations

import re

from ui.elements.metric_cards import Card, cards_html


def test_every_text_is_escaped_and_each_help_has_its_own_id():
    cards = [
        Card("<b>KV</b> per user", "17.18 GB", "= 16.00 GiB & more", 'One "conversation" <script>'),
        Card("GPUs", "6", "6 copies", "GPUs per copy × copies"),
    ]
    text = cards_html(cards, label='Head"line', key="My Key!", footnote="<i>GB</i>")
    assert "<b>" not in text and "<script>" not in text and "<i>" not in text
    assert "&lt;b&gt;KV&lt;/b&gt; per user" in text and "= 16.00 GiB &amp; more" in text
    assert 'aria-label="Head&quot;line"' in text and 'role="group"' in text
    described = re.findall(r'aria-describedby="([^"]+)"', text)
    ids = re.findall(r'role="tooltip" id="([^"]+)"', text)
    assert described == ids == ["my-key--help-0", "my-key--help-1"]
    assert 'aria-label="What is &lt;b&gt;KV&lt;/b&gt; per user?"' in text


def test_no_footnote_no_paragraph():
    assert "metric-footnote" not in cards_html([Card("a", "1", "b", "c")], label="x", key="k")
