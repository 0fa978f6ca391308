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
    tables: Sequence[tuple[str, Sequence[str], Sequence[Sequence[str]]]] = ()  # heading, columns, rows (as shown)


def table_html(heading: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A small table of shown values, every cell escaped, under its heading."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<h2>{html.escape(heading)}</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def inline(markdown: str, app_url: str) -> str:
    """The pages' inline markdown (links, **bold**, *italics*) as escaped HTML; relative links made absolute."""
    out, position = [], 0
    for match in MARKDOWN.finditer(markdown):
        out.append(html.escape(markdown[position : match.start()]))
        text, target, bold, italic = match.groups()
        if target is not None:
            href = urljoin(app_url, target)
            absolute = urlsplit(href).scheme in ("http", "https")
            out.append(f'<a href="{html.escape(href)}">{html.escape(text)}</a>' if absolute else html.escape(text))
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


PRINT_MARGIN = {"l": 72, "r": 24, "t": 24, "b": 96}  # room for tick labels, axis titles and a legend below


def fitted_layout(layout: dict) -> dict:
    """A chart's layout made to fit its labels at any width from a phone to A4 (794 px): margins with room for tick
    labels and axis titles, every axis and the title pushing the margins out as their labels need (automargin), the
    legend under the plot, clear of the x-axis title, and no fixed width."""
    fitted = {key: value for key, value in layout.items() if key != "width"}
    margin = dict(fitted.get("margin") or {})
    fitted["margin"] = {side: max(margin.get(side, 0), least) for side, least in PRINT_MARGIN.items()}
    fitted["autosize"] = True
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            fitted[key] = {**axis, "automargin": True}
            if isinstance(axis.get("title"), dict) and axis["title"].get("text"):
                fitted[key]["title"] = {**axis["title"], "text": two_lines(str(axis["title"]["text"]))}
    fitted.setdefault("xaxis", {"automargin": True})
    fitted.setdefault("yaxis", {"automargin": True})
    fitted.pop("title", None)  # written above the chart as text (`chart_title`), which wraps on a narrow screen
    if isinstance(fitted.get("legend"), dict) and fitted["legend"].get("orientation") == "h":
        fitted["legend"] = {**fitted["legend"], "yref": "container", "y": 0.0, "yanchor": "bottom"}
    return fitted


def two_lines(title: str, longest: int = 28) -> str:
    """A long axis title broken at the space nearest its middle, so it fits beside a short plot on a phone."""
    if len(title) <= longest or " " not in title:
        return title
    middle = len(title) / 2
    cut = min((i for i, c in enumerate(title) if c == " "), key=lambda i: abs(i - middle))
    return f"{title[:cut]}<br>{title[cut + 1 :]}"


def chart_title(layout: dict) -> str:
    """A chart's title as plain text ("" when it has none)."""
    title = layout.get("title")
    return str(title.get("text", "")) if isinstance(title, dict) else str(title or "")


def fitted_data(data: list[dict]) -> list[dict]:
    """Traces whose text labels are drawn outside the plot area where they need to be (bars' labels never cut)."""
    return [{**trace, "cliponaxis": False} if trace.get("type") in ("bar", "scatter") else trace for trace in data]


def document(briefing: Briefing) -> str:
    """The whole HTML file. The reopen link is written only when the page's real address is known."""
    url = briefing.app_url
    reopen = (
        f'Reopen this scenario in the dashboard: <a href="{html.escape(briefing.link)}">{html.escape(briefing.link)}'
        "</a><br>"
        if briefing.link
        else ""
    )
    parts = [
        f"<h1>{html.escape(briefing.title)}</h1>",
        f'<p class="lead">{inline(briefing.lead, url)}</p>',
        f'<p class="meta">{reopen}Made {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. The charts are '
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
    parts += [table_html(*table) for table in briefing.tables]
    scripts = []
    for index, chart in enumerate(briefing.charts):
        spec = json.loads(chart.figure.to_json())
        heading = chart_title(spec.get("layout", {}))
        parts.append(
            f'<figure><p class="chart-title">{html.escape(heading)}</p>'
            f'<div class="chart" id="chart-{index}" role="img" aria-label="{html.escape(chart.alt)}"></div>'
            f"<figcaption>{inline(chart.caption, url)}</figcaption></figure>"
        )
        data, fitted = fitted_data(spec["data"]), fitted_layout(spec.get("layout", {}))
        scripts.append(
            f"Plotly.newPlot('chart-{index}', {script_json(data)}, {script_json(fitted)}, "
            '{"responsive": true, "displaylogo": false});'
        )
    body = "\n".join(parts)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(briefing.title)}</title><style>{STYLE}</style>"
        f"<script>{_plotly_js()}</script></head><body>{body}<script>{''.join(scripts)}</script></body></html>"
    )


LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "::1", "")  # addresses no reader of the file can open


def app_url() -> str:
    """The app's root address as the reader's browser sees it (for absolute links in the file), or "" when it is not
    known or is this machine's own (localhost): the file then carries no link back rather than a dead one."""
    parts = urlsplit(st.context.url or "")
    if parts.scheme not in ("http", "https") or (parts.hostname or "") in LOCAL_HOSTS:
        return ""
    return f"{parts.scheme}://{parts.netloc}/"


def scenario_link(page: str) -> str:
    """The address that reopens this page with the current inputs (the URL holds them, every value of a repeated
    parameter included: kept scenarios, compared models, allowed GPUs); "" when the app's address is not known
    (`app_url`)."""
    root = app_url()
    if not root:
        return ""
    query = link_query(st.query_params)
    return urljoin(root, page) + (f"?{query}" if query else "")


def link_query(params: object) -> str:
    """A page's query string from its parameters (anything with keys and get_all), every value of a repeated key in
    order: st.query_params.to_dict() would keep only the last."""
    return urlencode([(key, value) for key in params for value in params.get_all(key)])  # type: ignore[attr-defined]


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
