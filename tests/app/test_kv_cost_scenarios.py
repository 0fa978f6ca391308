"""Scenarios side by side in AppTest: kept under a name in the link (at most four, names unique), reopened from the
link, compared with the page now by the engine's own budget, inert whatever their names hold; the briefing carries
the budget and the scenarios; the workbook downloads."""

from __future__ import annotations

import csv
import html
import io
import re
from urllib.parse import parse_qs

from streamlit.testing.v1 import AppTest

from core.plan import budget as bu
from core.plan import daily, payment, search
from core.plan import serving as sv
from core.plan.model_config import presets
from tests.app.helpers import chart_specs, static_tables
from tests.app.kv_cost_page import PAGE
from ui.elements.briefing import document
from ui.elements.numbers import dollars
from ui.kv_cost.budget import briefing as budget_briefing
from ui.kv_cost.budget import compare
from ui.kv_cost.budget import scenarios as sc

TASK = {"model": "Llama-3.1-70B", "rpm": "300", "prompt": "1500", "answer": "400", "kv_section": "Budget by month"}
TABLE = "Scenarios side by side"


class Link:
    """AppTest's query parameters read like st.query_params (every value of a key as a list)."""

    def __init__(self, at: AppTest) -> None:
        self.values = {k: v if isinstance(v, list) else [v] for k, v in at.query_params.items()}

    def __iter__(self):
        return iter(self.values)

    def get_all(self, key: str) -> list[str]:
        return list(self.values.get(key, []))


def open_budget(**query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update(TASK | query)
    at.run()
    assert not at.exception, at.exception
    return at


def keep(at: AppTest, name: str) -> AppTest:
    at.text_input(key=compare.NAME).input(name).run()
    at.button(key="kv-keep-scenario").click().run()
    assert not at.exception, at.exception
    return at


def month_one_on_demand(rpm: float) -> float:
    """The engine's first-month on-demand bill for the task at `rpm` (office hours, fixed fleet, 36 months)."""
    config, load = presets()["llama-3.1-70b"], sv.Workload(rpm, 1500, 400)
    plan = search.search(config, load).plan
    pay = payment.default_payment(plan.gpu.id, config, "llama-3.1-70b", load)
    curve = daily.shape("office-hours")
    b = bu.budget(config, "llama-3.1-70b", load, plan, curve, daily.Fleet(), bu.Growth(0, 36), pay)
    return float(b.monthly["on-demand"][0])


def test_two_kept_scenarios_compare_with_the_page_now_and_reopen_from_the_link():
    at = keep(open_budget(way="Cloud on-demand"), "Pilot")
    at.number_input(key="rpm").set_value(900).run()
    keep(at, "Rollout")
    table = static_tables(at)[TABLE]
    assert [row[0] for row in table[1:]] == [compare.NOW, "Pilot", "Rollout"]
    month_one = {row[0]: row[4] for row in table[1:]}
    assert month_one["Pilot"] == dollars(month_one_on_demand(300))
    assert month_one["Rollout"] == dollars(month_one_on_demand(900)) == month_one[compare.NOW]
    kept = Link(at).get_all(sc.SCENARIO)
    assert len(kept) == 2 and float(parse_qs(kept[0])["rpm"][0]) == 300
    again = AppTest.from_file(PAGE, default_timeout=60)
    again.query_params.update(Link(at).values)
    again.run()
    assert static_tables(again)[TABLE] == table


def test_at_most_four_scenarios_and_names_are_unique():
    at = open_budget()
    for name in ("a", "b", "c", "d"):
        keep(at, name)
    keep(at, "e")
    assert any("4 scenarios are kept already" in w.value for w in at.warning)
    keep(at, "a")
    assert len(Link(at).get_all(sc.SCENARIO)) == 4
    at.button(key="kv-remove-scenario-0").click().run()
    assert [row[0] for row in static_tables(at)[TABLE][1:]] == [compare.NOW, "b", "c", "d"]


def test_a_hostile_name_is_plain_text_in_the_table_the_csv_and_the_briefing():
    names = ['=HYPERLINK("http://x.invalid","y")', "<b>bold</b>", "[a](https://x.invalid)", "+1", "@sum"]
    at = open_budget()
    for name in names[:4]:
        keep(at, name)
    rows = static_tables(at)[TABLE]
    assert [row[0] for row in rows[2:]] == names[:4]
    page_html = "".join(e.proto.body for e in at.get("html") if TABLE in e.proto.body)
    assert "<b>bold</b>" not in page_html and "&lt;b&gt;bold&lt;/b&gt;" in page_html
    found = re.search(r'data-file="kv-scenarios\.csv" data-csv="([^"]*)"', page_html)
    cells = [row[0] for row in csv.reader(io.StringIO(html.unescape(found.group(1))))][2:]
    assert cells == ["'" + names[0], names[1], names[2], "'" + names[3]]  # a leading = + - @ is made text
    _, tables, charts = budget_briefing.parts(compare.link_values_of(Link(at)))
    shown = [row[0] for row in tables[-1][2]]
    assert shown[1:] == names[:4] and len(charts) == 2


def test_a_scenario_the_page_cannot_read_is_named_and_the_others_stay():
    bad = "name=Broken&rpm=-5&model=Llama-3.1-70B"
    at = open_budget()
    keep(at, "Good")
    at.query_params[sc.SCENARIO] = [*Link(at).get_all(sc.SCENARIO), bad]
    at.run()
    assert any("“Broken” cannot be compared" in w.value for w in at.warning)
    assert [row[0] for row in static_tables(at)[TABLE][1:]] == [compare.NOW, "Good"]


def test_the_briefing_carries_the_budget_chart_and_the_scenario_table():
    at = keep(open_budget(), "Pilot")
    sections, tables, charts = budget_briefing.parts(compare.link_values_of(Link(at)))
    assert [t[0] for t in tables] == ["Each way to pay, by month and in all", TABLE]
    assert sections[0][0] == "Budget by month" and "1M output tokens cost" in sections[0][1][0]
    assert [c.figure.layout.title.text for c in charts] == [
        "Monthly cost of each way to pay",
        "Monthly cost of each scenario",
    ]
    from ui.elements.briefing import Briefing

    made = document(Briefing("t", "l", "", "", sections=sections, tables=tables, charts=charts))
    assert "Scenarios side by side" in made and "Pilot" in made


def test_a_scenario_name_with_tags_is_text_in_the_chart_legend():
    at = keep(open_budget(), '<a href="https://example.invalid">x</a><b>y</b>')
    figure = next(f for f in chart_specs(at) if f["layout"]["title"]["text"] == "Monthly cost of each scenario")
    legend = [trace["name"] for trace in figure["data"]]
    assert legend[1] == '&lt;a href="https://exampl…: API'  # shortened to fit a phone; the table holds it whole
    assert all("<" not in name for name in legend)  # plotly would draw <a href> as a live link and <b> as bold


def test_the_scenario_chart_says_which_costs_least_and_most_in_the_last_month():
    at = keep(open_budget(rpm="3000"), "Big")
    at.number_input(key="rpm").set_value(300).run()
    keep(at, "Small")
    at.number_input(key="rpm").set_value(1000).run()  # the page now in between
    rows = {row[0]: row[6] for row in static_tables(at)[TABLE][1:]}
    text = next(m.value for m in at.markdown if m.value.startswith("In month 36"))
    assert f"“Small” costs {rows['Small']} a month and “Big” {rows['Big']}".replace("$", "\\$") in text
