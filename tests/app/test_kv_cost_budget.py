"""The cost page's "Budget by month" in AppTest: the plan's fleet on a day of traffic, growth over the horizon and
every way to pay, each figure the engine's (core.plan.budget) for the same inputs; the link carries the budget; a
curve, growth or figure the engine refuses is named and the last valid budget stays."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.plan import budget as bu
from core.plan import build_vs_buy as bvb
from core.plan import daily, payment, search
from core.plan import serving as sv
from core.plan.model_config import presets
from tests.app.helpers import chart_specs, metric_cards, static_tables
from tests.app.kv_cost_page import PAGE
from ui.elements.numbers import dollars
from ui.kv_cost.budget.view import REALISTIC, REALISTIC_INPUT
from ui.kv_cost.numbers import money

TASK = {"model": "Llama-3.1-70B", "rpm": "300", "prompt": "1500", "answer": "400", "kv_section": "Budget by month"}
LOAD = sv.Workload(requests_per_minute=300, prompt_tokens=1500, output_tokens=400)
CONFIG = presets()["llama-3.1-70b"]


def open_budget(**query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update(TASK | query)
    at.run()
    assert not at.exception, at.exception
    return at


def engine_budget(shape: str = "office-hours", growth: bu.Growth | None = None, **own: float) -> bu.Budget:
    """The engine's budget for the task (a fixed fleet), independently of the page."""
    growth = growth or bu.Growth()
    plan = search.search(CONFIG, LOAD).plan
    pay = payment.default_payment(plan.gpu.id, CONFIG, "llama-3.1-70b", LOAD)
    if own:
        pay = payment.Payment(
            pay.reserved_1y_discount, pay.reserved_3y_discount, payment.Owning(**(vars(pay.owning) | own)), pay.api
        )
    return bu.budget(CONFIG, "llama-3.1-70b", LOAD, plan, daily.shape(shape), daily.Fleet(), growth, pay)


def cards(at: AppTest) -> dict[str, dict]:
    return {c["metric-label"]: c for c in metric_cards(at)}


def totals(at: AppTest) -> dict[str, str]:
    table = static_tables(at)["Monthly cost of each way to pay"]
    return {row[0]: row[-1] for row in table[1:]}


def test_the_budget_is_the_engines_for_the_task_on_office_hours():
    at = open_budget(growth="5", months="36")
    b = engine_budget(growth=bu.Growth(5.0, 36))
    assert cards(at)[REALISTIC]["metric-value"] == money(b.realistic_per_m_output)
    assert cards(at)[REALISTIC_INPUT]["metric-value"] == money(b.realistic_per_m_input)
    assert b.realistic_per_m_output > b.best_per_m_output  # a fleet sized for the peak idles at night
    assert cards(at)["Cheapest over 36 months"]["metric-value"] == bu.WAYS[b.cheapest]
    assert totals(at) == {label: f"${b.total(way):,.0f}" for way, label in bu.WAYS.items()}
    titles = [f["layout"]["title"]["text"] for f in chart_specs(at)]
    assert "Monthly cost of each way to pay" in titles and any(t.startswith("A day in the first month") for t in titles)
    months = next(f for f in chart_specs(at) if f["layout"]["title"]["text"] == "Monthly cost of each way to pay")
    assert len(months["data"]) == len(bu.WAYS)


def test_the_api_is_the_build_vs_buy_sections_same_model():
    b = engine_budget()
    api = bvb.default_api(CONFIG, "llama-3.1-70b", LOAD).price
    expected = (b.input_tokens_by_month[0] * api.input_per_m + b.output_tokens_by_month[0] * api.output_per_m) / 1e6
    at = open_budget()
    api_row = next(row for row in static_tables(at)["Monthly cost of each way to pay"] if row[0] == bu.WAYS["api"])
    assert api_row[1] == dollars(expected)


def test_autoscaling_runs_fewer_copy_hours_than_a_fixed_fleet_and_the_link_keeps_it():
    fixed = cards(open_budget(rpm="3000"))["Copy-hours a day"]["metric-value"]
    at = open_budget(rpm="3000", fleet="Autoscaling", min_copies="0", scale_minutes="15")
    scaled = cards(at)["Copy-hours a day"]["metric-value"]
    assert float(scaled.replace(",", "")) < float(fixed.replace(",", ""))
    assert at.query_params["fleet"] == "Autoscaling" and at.query_params["min_copies"] == "0"


def test_a_curve_that_never_reaches_its_peak_is_named_and_the_last_budget_stays():
    at = open_budget(shape="24/7 global")
    before = cards(at)[REALISTIC]["metric-value"]
    at.selectbox(key="shape").set_value("own").run()
    at.text_input(key="curve").input(", ".join(["0.5"] * 23 + ["0.8"])).run()
    assert any("never reaches its peak" in e.value for e in at.error)
    assert cards(at)[REALISTIC]["metric-value"] == before  # the last valid budget is shown
    at.text_input(key="curve").input(", ".join(["0.5"] * 23 + ["1"])).run()
    assert not at.error
    assert at.query_params["curve"].startswith("0.5, 0.5")


def test_your_own_server_price_is_in_the_link_and_in_the_total():
    at = open_budget(pay_server_price="150000")
    b = engine_budget(server_price=150000.0)
    assert totals(at)[bu.WAYS["own"]] == f"${b.total('own'):,.0f}"
    assert at.query_params["pay_server_price"] == "150000"
    at.session_state["kv_pay_open"] = True
    at.run()
    assert any(c.value == "your figure" for c in at.caption)


@pytest.mark.parametrize("growth", ["-100", "nan"])
def test_growth_the_engine_cannot_use_is_named_by_the_link(growth):
    at = open_budget(growth=growth)
    assert any("growth" in w.value for w in at.warning)
    assert np.isfinite(float(cards(at)[REALISTIC]["metric-value"].strip("$").replace(",", "")))


def test_each_month_is_one_column_on_a_twelve_month_horizon():
    header = static_tables(open_budget())["Monthly cost of each way to pay"][0]
    assert header == ["way to pay", "month 1", "month 12", "total over 12 months"]
    header = static_tables(open_budget(months="24"))["Monthly cost of each way to pay"][0]
    assert header == ["way to pay", "month 1", "month 12", "month 24", "total over 24 months"]
