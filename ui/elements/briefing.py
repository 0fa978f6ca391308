"""A briefing to take away: one self-contained HTML file (plotly.js embedded from the installed plotly package, so it
opens offline and its charts stay interactive) with a page's headline numbers, sentences, charts and the link that
reopens the scenario in the app. Built only when the reader clicks "Download briefing".
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from urllib.parse import urlencode, urljoin, urlsplit

import plotly.graph_objects as go
import streamlit as st
from plotly.offline import get_plotlyjs

from ui.elements.inert import script_json
from ui.elements.web import web_file

MARKDOWN = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)|\*\*(.+?)\*\*|\*(.+?)\*")


@dataclass(frozen=True)
class Chart:
    """One chart of the briefing with its text alternative and the sentence that says what it shows."""

    figure: go.Figure
    alt: str
    caption: str = ""


@dataclass(frozen=True)
class Briefing:
    """What a briefing holds. Sentences are the pages' own markdown (bold, italics, links); links relative to the app
    are made absolute with `app_url` so they open the app from the file."""

    title: str
    lead: str
    link: str
    app_url: str
    headline: Sequence[tuple[str, str]] = ()
    sentences: Sequence[str] = ()
    charts: Sequence[Chart] = ()
    picture: str = ""  # ready-made HTML (the overview's data-flow picture), links already absolute
    sections: Sequence[tuple[str, Sequence[str]]] = field(default_factory=tuple)


def inline(markdown: str, app_url: str) -> str:
    """The pages' inline markdown (links, **bold**, *italics*) as escaped HTML; relative links made absolute."""
    out, position = [], 0
    for match in MARKDOWN.finditer(markdown):
        out.append(html.escape(markdown[position : match.start()]))
        text, target, bold, italic = match.groups()
        if target is not None:
            href = urljoin(app_url, target)
            out.append(f'<a href="{html.escape(href)}">{html.escape(text)}</a>')
        elif bold is not None:
            out.append(f"<b>{inline(bold, app_url)}</b>")
        else:
            out.append(f"<i>{inline(italic, app_url)}</i>")
        position = match.end()
    out.append(html.escape(markdown[position:]))
    return "".join(out)


@cache
def _plotly_js() -> str:
    return get_plotlyjs()


STYLE = web_file("briefing.css")


def document(briefing: Briefing) -> str:
    """The whole HTML file."""
    url = briefing.app_url
    parts = [
        f"<h1>{html.escape(briefing.title)}</h1>",
        f'<p class="lead">{inline(briefing.lead, url)}</p>',
        f'<p class="meta">Reopen this scenario in the dashboard: <a href="{html.escape(briefing.link)}">'
        f"{html.escape(briefing.link)}</a><br>Made {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. The charts are "
        "interactive (hover, zoom) and need no network.</p>",
    ]
    if briefing.headline:
        items = "".join(
            f"<li>{html.escape(label)}<b>{html.escape(value)}</b></li>" for label, value in briefing.headline
        )
        parts.append(f'<h2>Headline numbers</h2><ul class="numbers">{items}</ul>')
    if briefing.picture:
        parts.append(briefing.picture)
    if briefing.sentences:
        parts.append("<ul>" + "".join(f"<li>{inline(s, url)}</li>" for s in briefing.sentences) + "</ul>")
    for heading, sentences in briefing.sections:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts.append("<ul>" + "".join(f"<li>{inline(s, url)}</li>" for s in sentences) + "</ul>")
    scripts = []
    for index, chart in enumerate(briefing.charts):
        parts.append(
            f'<figure><div class="chart" id="chart-{index}" role="img" aria-label="{html.escape(chart.alt)}"></div>'
            f"<figcaption>{inline(chart.caption, url)}</figcaption></figure>"
        )
        spec = json.loads(chart.figure.to_json())
        scripts.append(
            f"Plotly.newPlot('chart-{index}', {script_json(spec['data'])}, {script_json(spec.get('layout', {}))}, "
            '{"responsive": true, "displaylogo": false});'
        )
    body = "\n".join(parts)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(briefing.title)}</title><style>{STYLE}</style>"
        f"<script>{_plotly_js()}</script></head><body>{body}<script>{''.join(scripts)}</script></body></html>"
    )


def app_url() -> str:
    """The app's root address as the reader's browser sees it (for absolute links in the file)."""
    url = st.context.url or "http://localhost:8501/"
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/"


def scenario_link(page: str) -> str:
    """The address that reopens this page with the current inputs (the URL holds them)."""
    query = urlencode(st.query_params.to_dict())
    return urljoin(app_url(), page) + (f"?{query}" if query else "")


def download(build: Callable[[], Briefing], *, file_name: str) -> None:
    """The "Download briefing" button; the file is built only when the reader clicks. Without a widget key, as it
    keeps no state (see `ui.elements.widgets.download_csv`)."""
    st.download_button(
        "Download briefing",
        lambda: document(build()).encode("utf-8"),
        file_name=file_name,
        mime="text/html",
        on_click="ignore",
        icon=":material/download:",
        help="One HTML file: headline numbers, charts (interactive, offline) and the link back to this scenario.",
    )
