"""The planner's sections under extreme and hostile links, one named test per case: a growth the budget cannot carry,
a kept scenario that breaks the comparison, the longest answer in Latency under load, scenarios whose names repeat,
reorder text or start a formula, more scenarios than are kept, a model name without your own model, the reopen link
with repeated parameters, one 'no plan' warning, and a page that works without XlsxWriter."""

from __future__ import annotations

import csv
import io
import re
import sys

import pytest
from streamlit.testing.v1 import AppTest

from core.plan import workbook
from tests.app.helpers import shown, static_tables, table_downloads
from tests.app.kv_cost_page import PAGE
from ui.elements.briefing import link_query
from ui.kv_cost.settings import NOW

BUDGET = {"kv_section": "Budget by month"}
TABLE = "Scenarios side by side"


def opened(**query: str | list[str]) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def said(at: AppTest) -> str:
    """Every message on the page as the reader reads it (escapes removed)."""
    return "\n".join(shown(m.value) for m in [*at.error, *at.warning, *at.info])


def test_budget_by_month_names_a_growth_it_cannot_carry_instead_of_crashing():
    at = opened(**BUDGET, growth="300")
    text = said(at)
    assert "at 300% a month, 60 requests a minute grow to" in text and "beyond the 1,000,000" in text
    assert "it can grow at most 142.0% a month" in text  # (1e6 / 60) ** (1 / 11) - 1


def test_a_kept_scenario_that_cannot_be_compared_is_named_and_the_rest_still_compare():
    bad = "name=G&model=Llama-3.1-70B&growth=1000"
    at = opened(**BUDGET, scenario=[bad, "name=Fine&model=Llama-3.1-8B"])
    text = said(at)
    assert "“G” cannot be compared" in text and "1000% a month" in text
    assert [row[0] for row in static_tables(at)[TABLE][1:]] == [NOW, "Fine"]


def test_latency_under_load_draws_at_the_longest_answer():
    at = opened(kv_section="Latency under load", answer="100000")
    assert not at.error
    assert "kv-latency-ttft" in "".join(e.proto.body for e in at.get("html"))


def test_repeated_scenario_names_are_made_unique_and_said_so():
    at = opened(**BUDGET, scenario=[f"name={NOW}&model=Llama-3.1-70B", "name=A", "name=A"])
    text = said(at)
    assert f"it is kept as “{NOW} (2)”" in text and "it is kept as “A (2)”" in text
    assert [row[0] for row in static_tables(at)[TABLE][1:]] == [NOW, f"{NOW} (2)", "A", "A (2)"]


def test_scenarios_beyond_the_fourth_are_named_as_left_out():
    at = opened(**BUDGET, scenario=[f"name={n}" for n in "abcdef"])
    assert "so “e” and “f” are left out" in said(at)
    assert [row[0] for row in static_tables(at)[TABLE][1:]] == [NOW, "a", "b", "c", "d"]


def test_a_model_name_without_your_own_model_is_named_not_dropped_silently():
    at = opened(model_name="Mine")
    assert "**model_name** = “Mine”: a name is used only with your own model" in said(at)


def test_invisible_characters_in_a_name_are_removed_and_named():
    at = opened(**BUDGET, scenario=["name=ab\u202ecd\u2066"])
    text = said(at)
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in text and "U+2066 LEFT-TO-RIGHT ISOLATE" in text
    assert [row[0] for row in static_tables(at)[TABLE][1:]] == [NOW, "abcd"]
    page = "".join(e.proto.body for e in at.get("html")) + "".join(m.value for m in at.markdown)
    assert "\u202e" not in page and "\u2066" not in page


def test_the_csv_guard_holds_after_the_name_is_normalised():
    at = opened(**BUDGET, scenario=["name=%09%3D1%2B1"])  # a tab, then =1+1
    _, data = next(v for k, v in table_downloads(at).items() if "scenarios" in k)
    names = [row[0] for row in csv.reader(io.StringIO(data))][1:]
    assert names == [NOW, "'=1+1"]


class _Params:
    def __init__(self, values: dict[str, list[str]]) -> None:
        self.values = values

    def __iter__(self):
        return iter(self.values)

    def get_all(self, key: str) -> list[str]:
        return self.values[key]


def test_the_reopen_link_keeps_every_value_of_a_repeated_parameter():
    query = link_query(_Params({"scenario": ["name=a", "name=b"], "compare": ["GPT-2", "Mistral-7B"], "gpus": ["L4"]}))
    assert query == "scenario=name%3Da&scenario=name%3Db&compare=GPT-2&compare=Mistral-7B&gpus=L4"


def test_no_plan_is_said_once_with_a_section_open():
    at = opened(gpus="L4", pin_tp="8", model="Llama-3.1-405B", kv_section="Workload and bill")
    assert sum("No plan for this workload" in shown(w.value) for w in at.warning) == 1
    assert "Workload and bill starts from the plan, and there is none" in said(at)


def test_the_page_works_and_says_why_without_xlsxwriter(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "xlsxwriter", None)  # an installation without the package
    assert not workbook.available()
    at = opened(**BUDGET)
    assert not at.error
    captions = " ".join(c.value for c in at.caption)
    assert "this installation lacks XlsxWriter" in captions
    assert not re.search("Download the workbook", " ".join(b.label for b in at.get("download_button")))
