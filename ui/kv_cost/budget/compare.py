"""The scenarios' part of the budget section: keep the page's scenario under a name (up to four, in the link), remove
one, and compare them with the page as it is now in one table and one chart; a kept scenario that cannot be read is
named with the reason."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.plan import budget as bu
from ui.elements.figures import layout
from ui.elements.numbers import dollars
from ui.elements.safe_text import plain, quoted
from ui.elements.static_table import static_table
from ui.elements.widgets import chart
from ui.kv_cost.budget import scenarios as sc
from ui.kv_cost.budget.figures import frame
from ui.kv_cost.numbers import money
from ui.kv_cost.scenario_names import typed_name
from ui.kv_cost.settings import NOW, SCENARIO_NAME_CHARS

FOOTNOTE = (
    f"Each scenario's monthly cost is its way to pay (or the cheapest over its own horizon), budgeted over "
    f"{sc.COMPARE_MONTHS} months at its growth; realistic $ per 1M output tokens is its first month's day; first "
    "token is the plan's time model at its batch; GPUs in the first month."
)
NAME = "kv_scenario_name"
NOTE = "kv_scenario_note"
COLUMNS = (
    "scenario",
    "model",
    "configuration",
    "way to pay",
    "month 1",
    "month 12",
    f"month {sc.COMPARE_MONTHS}",
    "realistic $ per 1M output tokens",
    "first token (s)",
    "GPUs",
)


def _link_now() -> dict[str, list[str]]:
    return {key: st.query_params.get_all(key) for key in st.query_params}


def link_values_of(params: object) -> list[str]:
    """The page now and its kept scenarios as link values, from any query-parameter reader (get_all per key)."""
    link = {key: params.get_all(key) for key in params}  # type: ignore[attr-defined]
    return [sc.encode(NOW, link), *link.get(sc.SCENARIO, [])[: sc.MAX_SCENARIOS]]


def _keep() -> None:
    """Keep the page's scenario under the typed name (at most four; names unique; invisible characters removed and
    named)."""
    name, said = typed_name(str(st.session_state.get(NAME, "")))
    kept = sc.kept_values()
    names = [NOW, *(sc.parse_qs_name(value) for value in kept)]
    if not name:
        st.session_state[NOTE] = "Name the scenario first."
    elif len(kept) >= sc.MAX_SCENARIOS:
        st.session_state[NOTE] = f"{sc.MAX_SCENARIOS} scenarios are kept already; remove one to keep another."
    elif name in names:
        st.session_state[NOTE] = f"A scenario named {quoted(name)} is kept already; choose another name."
    else:
        st.query_params[sc.SCENARIO] = [*kept, sc.encode(name, _link_now())]
        st.session_state[NOTE] = f"Kept as {quoted(name)}: {said}." if said else None
        st.session_state[NAME] = ""


def _remove(index: int) -> None:
    kept = sc.kept_values()
    rest = kept[:index] + kept[index + 1 :]
    if rest:
        st.query_params[sc.SCENARIO] = rest
    else:
        del st.query_params[sc.SCENARIO]


def link_values() -> list[str]:
    """The page now and the kept scenarios as link values (read while the page runs; resolved later)."""
    return link_values_of(st.query_params)


def resolved(values: list[str] | None = None) -> tuple[list[sc.Resolved], list[str]]:
    """The page now and the kept scenarios (or `values`), planned and budgeted, and each one that cannot be, named."""
    out, problems = [], []
    for value in values if values is not None else link_values():
        found = sc.resolve(value)
        if isinstance(found, sc.Resolved):
            out.append(found)
        else:
            name, why = found
            problems.append(f"{quoted(name)} cannot be compared: {plain(why, limit=300)}.")
    return out, problems


LEGEND_CHARS = 24  # a legend entry fits a phone's width; the table below holds the whole name


def _legend_name(name: str) -> str:
    return name if len(name) <= LEGEND_CHARS else name[: LEGEND_CHARS - 1].rstrip() + "…"


def figure(rows: list[sc.Resolved]) -> go.Figure:
    """Each scenario's monthly cost over the comparison's months, by its way to pay."""
    months = np.arange(1, sc.COMPARE_MONTHS + 1)
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": html.escape(f"{_legend_name(r.name)}: {bu.WAYS[sc.way_of(r)]}", quote=False),  # tags are text
            "x": months,
            "y": r.computed.budget.monthly[sc.way_of(r)],
            "line": {"width": 4 if i == 0 else 2},
            "hovertemplate": "month %{x}: $%{y:,.0f}<extra></extra>",
        }
        for i, r in enumerate(rows)
    ]
    return go.Figure(
        data=data,
        layout=layout(
            "Monthly cost of each scenario",
            380,
            xaxis={"title": {"text": "month"}, "dtick": 3, "automargin": True},
            yaxis={"title": {"text": "$ a month"}, "tickprefix": "$", "rangemode": "tozero", "automargin": True},
            **frame(),
        ),
    )


def section() -> list[sc.Resolved]:
    """Keep, remove and compare; returns the scenarios compared (the page now first)."""
    st.markdown("#### Scenarios side by side")
    st.caption(
        f"Keep up to {sc.MAX_SCENARIOS} scenarios (model, workload, GPUs, engine, traffic, growth and way to pay) "
        "under a name; they live in the page's link, so a shared link carries them. Each is planned and budgeted "
        f"again over {sc.COMPARE_MONTHS} months, so they compare like for like."
    )
    cols = st.columns([3, 1])
    cols[0].text_input("Name for this scenario", key=NAME, max_chars=SCENARIO_NAME_CHARS)
    cols[1].button("Keep this scenario", key="kv-keep-scenario", on_click=_keep)
    if note := st.session_state.get(NOTE):
        st.warning(note)
    for index, value in enumerate(sc.kept_values()):
        left, right = st.columns([3, 1])
        left.markdown(f"Kept: {quoted(sc.parse_qs_name(value))}")
        right.button("Remove", key=f"kv-remove-scenario-{index}", on_click=_remove, args=(index,))
    rows, problems = resolved()
    for problem in problems:
        st.warning(problem)
    if len(rows) < 2:
        return rows
    static_table(
        COLUMNS,
        [sc.row(r) for r in rows],
        label="Scenarios side by side",
        formats={
            **{c: dollars for c in COLUMNS[4:7]},
            "realistic $ per 1M output tokens": lambda v: "n/a" if v is None else money(v),
        },
        footnote=FOOTNOTE,
        download=("the scenarios", "kv-scenarios"),
    )
    chart(
        figure(rows),
        key="kv-scenarios",
        alt=f"Lines of monthly cost over {sc.COMPARE_MONTHS} months, one per scenario, the page now drawn thickest.",
    )
    st.markdown(said(rows))
    return rows


def said(rows: list[sc.Resolved]) -> str:
    """What the chart shows, from its numbers: the cheapest and the dearest scenario in the last month, and why the
    gap matters (names escaped: they are the reader's)."""
    last = {r.name: float(r.computed.budget.monthly[sc.way_of(r)][-1]) for r in rows}
    low, high = min(last, key=last.get), max(last, key=last.get)
    gap = last[high] / last[low] if last[low] > 0 else float("inf")
    return (
        f"In month {sc.COMPARE_MONTHS}, {quoted(low)} costs {dollars(last[low])} a month and {quoted(high)} "
        f"{dollars(last[high])}, {gap:,.1f}× as much: over a budget's life the choice of model, GPUs, traffic and way "
        "to pay moves the bill more than any one price."
    ).replace("$", "\\$")
