"""The cost page's workload-first plan in AppTest: the issue's task (Llama-3.1-70B, 300 requests a minute, 1,500 /
400 tokens, a first token within 2 s) plans 4–8 H100s, not 38; the price follows the GPU; one $ answer; the API
default is the same model; the pins and prices live in the link; the briefing holds the plan."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.plan import build_vs_buy as bvb
from core.plan import kv_cache as kv
from core.plan import search
from core.plan import serving as sv
from core.plan.model_config import presets
from core.plan.prices import gpu_prices, typical_price
from tests.app.helpers import metric_cards, shown, static_tables, table_footnote
from ui.kv_cost.numbers import money
from ui.kv_cost.plan_view import CHART_OPEN, INPUT, OUTPUT, SEARCH_OPEN
from ui.kv_cost.settings import SECTION

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "kv_cost.py")
TASK = {"model": "Llama-3.1-70B", "rpm": "300", "prompt": "1500", "answer": "400", "ttft": "2"}
TASK_LOAD = sv.Workload(requests_per_minute=300, prompt_tokens=1500, output_tokens=400, ttft_s=2.0)
SEARCH_TABLE = "The plan and its runners-up"


def open_page(**query: str) -> AppTest:
    """The page opened by a link holding `query`."""
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def open_calculator(**query: str) -> AppTest:
    """The page opened by a link holding `query`, with the memory calculator open."""
    return open_page(calculator="open", **query)


def plan_cards(at: AppTest) -> dict[str, dict]:
    """The plan's four cards by label (the first group of cards on the page)."""
    return {c["metric-label"]: c for c in metric_cards(at)[:4]}


def test_the_task_plans_four_to_eight_h100s_not_thirty_eight():
    at = open_page(**TASK)
    plan = search.search(presets()["llama-3.1-70b"], TASK_LOAD).plan
    # Hand calculation: Llama-3.1-70B's 16-bit weights are 70.6B × 2 bytes = 141 GB, more than one 80 GB H100 holds
    # (0.9 of 85.5 GB for the engine), so a copy needs 2, 4 or 8. On 4 H100s (307 GB for the engine) the weights leave
    # 166 GB for the cache, 327,680 bytes per token (2 · 80 layers · 8 KV heads · 128 · 2 bytes): a 1,900-token
    # request holds 0.62 GB, about 265 at once; 300 requests a minute of 400 answer tokens need 5 requests/s, which
    # one copy carries at a few dozen users decoding at 20 tokens/s each. So 1 copy of 4 (or 8) GPUs: 4–8 H100s.
    # A month is GPUs × $/GPU-hour × 730 hours: between 4 at the cheapest public H100 offer and 8 at the dearest.
    h100 = gpu_prices()["h100-sxm"]
    low, high = 4 * h100.low * 730, 8 * h100.high * 730
    assert plan.gpus != 38 and ((4 <= plan.gpus <= 8 and plan.gpu.id == "h100-sxm") or plan.monthly_cost < high)
    assert low <= plan.monthly_cost <= high
    cards = plan_cards(at)
    assert cards["Configuration"]["metric-value"] == f"{plan.tp} × {plan.gpu.name}"
    assert f"= {plan.gpus} GPUs" in cards["Configuration"]["metric-note"]
    assert cards["Monthly cost"]["metric-value"] == f"${plan.monthly_cost:,.0f}"
    lo, hi = plan.cost_range
    assert cards["Monthly cost"]["metric-note"] == (
        f"if servers run at the calibration's 25th–75th percentile speed: ${lo:,.0f}–${hi:,.0f} a month"
    )
    assert cards[OUTPUT]["metric-value"] == money(plan.cost_per_m_output)
    assert cards[INPUT]["metric-value"] == money(plan.cost_per_m_input)
    assert "38" not in cards["Configuration"]["metric-value"]


def test_the_search_table_lists_the_plan_first_and_says_why_it_won():
    at = open_page(**TASK)
    found = search.search(presets()["llama-3.1-70b"], TASK_LOAD)
    table = static_tables(at)[SEARCH_TABLE]
    assert table[0][:3] == ["configuration", "monthly cost", "GPUs"]
    assert table[1][1] == f"${found.plan.monthly_cost:,.0f}"
    assert table[1][0].endswith("(the plan)") and f"{found.plan.tp} × {found.plan.gpu.name}" in table[1][0]
    assert len(table) - 1 == min(6, len(found.candidates))
    assert table_footnote(at, SEARCH_TABLE).startswith(found.why)
    title = "Monthly cost vs first-token"
    assert not [c for c in _figures(at) if c["layout"]["title"]["text"].startswith(title)]  # drawn when opened
    at.session_state[CHART_OPEN] = True
    at.run()
    chart = next(c for c in _figures(at) if c["layout"]["title"]["text"].startswith(title))
    assert [t["name"] for t in chart["data"]] == ["other configurations", "the plan"]
    assert len(chart["data"][0]["x"]) == len(found.runners_up)


def _figures(at: AppTest) -> list[dict]:
    from tests.app.helpers import chart_specs

    return chart_specs(at)


def test_a_pin_is_the_readers_answer_and_lives_in_the_link():
    at = open_page(**TASK)
    assert not [w for w in at.selectbox if w.key == "pin_tp"]  # drawn only while their expander is open
    at.session_state[SEARCH_OPEN] = True
    at.run()
    at.selectbox(key="pin_tp").set_value(8).run()
    at.multiselect(key="gpus").set_value(["h100-sxm"]).run()
    pinned = search.search(presets()["llama-3.1-70b"], TASK_LOAD, gpus=["h100-sxm"], tp=8)
    cards = plan_cards(at)
    assert cards["Configuration"]["metric-value"] == "8 × H100 SXM"
    assert (
        "your pin (GPU and GPUs per copy): the answer is yours, not the search's"
        in cards["Configuration"]["metric-note"]
    )
    assert cards["Monthly cost"]["metric-value"] == f"${pinned.plan.monthly_cost:,.0f}"
    at.session_state[SEARCH_OPEN] = False
    at.run()
    assert at.query_params["pin_tp"] == "8" and at.query_params["gpus"] in (
        ["H100 SXM"],
        "H100 SXM",
    )  # kept while closed
    again = open_page(**TASK, pin_tp="8", gpus="h100-sxm")
    assert plan_cards(again)["Configuration"]["metric-value"] == "8 × H100 SXM"


def test_a_gpu_the_link_names_wrongly_is_named_in_the_one_notice():
    at = open_page(**TASK, gpus="H900", pin_tp="3")
    notes = " ".join(shown(w.value) for w in at.warning)
    assert "**gpus** = “H900”" in notes and "**pin_tp** = “3”" in notes


def test_the_price_follows_the_gpu_and_the_readers_own_price_stays_with_its_gpu():
    at = open_calculator()
    assert at.number_input(key="price").value == typical_price("h100-sxm")
    at.selectbox(key="gpu").set_value("l40s").run()
    assert at.number_input(key="price").value == typical_price("l40s") != typical_price("h100-sxm")
    at.number_input(key="price").set_value(0.5).run()
    assert at.query_params["price"] == "l40s:0.5"
    at.selectbox(key="gpu").set_value("h100-sxm").run()
    assert at.number_input(key="price").value == typical_price("h100-sxm")
    at.selectbox(key="gpu").set_value("l40s").run()
    assert at.number_input(key="price").value == 0.5
    rows = [r for r in static_tables(at)[SEARCH_TABLE][1:] if "L40S" in r[0]]  # the search bills L40S at $0.50
    assert all(r[3] == "$0.50" for r in rows)
    shared = open_calculator(gpu="L40S", price="l40s:0.5")
    assert shared.number_input(key="price").value == 0.5


@pytest.mark.parametrize("raw", ["-1", "0", "inf", "nan", "h100-sxm:abc", "nope:2"])
def test_a_price_not_positive_and_finite_is_named_and_the_typical_price_kept(raw):
    at = open_calculator(price=raw)
    assert any("**price**" in shown(w.value) and raw in shown(w.value) for w in at.warning)
    assert at.number_input(key="price").value == typical_price("h100-sxm")


def test_a_typed_price_of_zero_is_refused_and_the_last_valid_kept():
    at = open_calculator()
    at.number_input(key="price").set_value(3.0).run()
    at.number_input(key="price").set_value(0.0).run()
    assert at.number_input(key="price").value == 3.0
    assert any(shown(w.value).startswith("**Price per GPU-hour ($)**: “0” cannot be used") for w in at.warning)


def test_the_api_default_is_the_same_model_and_billed_on_the_average():
    at = open_page(**TASK, kv_section="Build vs buy")
    assert at.selectbox(key="api").value == "same"
    choice = bvb.default_api(presets()["llama-3.1-70b"], "llama-3.1-70b", TASK_LOAD)
    assert choice.same_model and "Llama-3.1-70B" in choice.price.model
    plan = search.search(presets()["llama-3.1-70b"], TASK_LOAD).plan
    verdict = bvb.verdict(plan.monthly_cost, TASK_LOAD, choice)
    sentence = next(shown(m.value) for m in at.markdown if shown(m.value).startswith("**Self-hosting costs"))
    assert sentence == f"**{verdict.sentence}**" and "not the same model" not in sentence
    assert f"peak ÷ {bvb.default_peak_to_average():g}" in sentence
    other = open_page(kv_section="Build vs buy")  # the primer's 7B: no API serves it, and the verdict says so
    assert any("is not the same model" in shown(m.value) for m in other.markdown)


def test_every_dollar_per_million_figure_is_the_plans_answer_or_named_otherwise():
    at = open_page(**TASK)
    plan = search.search(presets()["llama-3.1-70b"], TASK_LOAD).plan
    answer = {OUTPUT: money(plan.cost_per_m_output), INPUT: money(plan.cost_per_m_input)}
    figures: list[tuple[str, str | None]] = []
    for section in (None, "Workload and bill", "Build vs buy", "Memory levers"):
        at.session_state[SECTION] = section
        at.run()
        figures += [(c["metric-label"], c["metric-value"]) for c in metric_cards(at)]
        figures += [(m.label, m.value) for m in at.metric]
        figures += [(name, None) for table in static_tables(at).values() for name in table[0]]
        figures += [(n.label, str(n.value)) for n in at.number_input]
        figures += [(name, None) for df in at.dataframe for name in getattr(df.value, "column_names", ())]
    per_million = [(label, value) for label, value in figures if re.search(r"per 1M (input|output)", label)]
    assert any(label == OUTPUT for label, _ in per_million) and any(label == INPUT for label, _ in per_million)
    for label, value in per_million:
        if label in answer:
            assert value == answer[label], (label, value)
        else:  # another quantity: named so, never the plan's name
            assert "for comparison" in label or label.startswith("API "), label


def test_context_follows_prompt_and_answer_until_set():
    at = open_calculator()
    assert at.number_input(key="context").value == 32768  # the primer's teaching default
    at.number_input(key="prompt").set_value(1500).run()
    assert at.number_input(key="context").value == 1750
    at.number_input(key="context").set_value(4096).run()
    at.number_input(key="answer").set_value(400).run()
    assert at.number_input(key="context").value == 4096
    at.button[0].click().run()  # the primer's example
    assert at.number_input(key="context").value == 32768


def test_the_briefing_holds_the_plan_and_no_localhost_link():
    from ui.elements.briefing import document
    from ui.kv_cost import briefing as kv_briefing
    from ui.kv_cost.numbers import compared_rows

    config = presets()["llama-3.1-70b"]
    found = search.search(config, TASK_LOAD)
    dep = kv.Deployment(gpu=kv.gpus()["h100-sxm"], tp=2)
    choice = bvb.default_api(config, "llama-3.1-70b", TASK_LOAD)
    made = kv_briefing.briefing(
        config,
        dep,
        kv.plan(config, dep),
        compared_rows(config, dep, ()),
        url="",
        link="",
        planned=(config, found, TASK_LOAD, choice, 3.0),
    )
    text = document(made)
    plan = found.plan
    lo, hi = plan.cost_range
    for part in (
        plan.label,
        f"${plan.monthly_cost:,.0f}",
        f"${lo:,.0f}–${hi:,.0f} a month",
        SEARCH_TABLE,
        "Build vs buy",
        "Assumptions and sources",
        "300 requests a minute",
        bvb.verdict(plan.monthly_cost, TASK_LOAD, choice).sentence.split(":")[0],
    ):
        assert part.replace("'", "&#x27;") in text, part
    assert "localhost" not in text and "Reopen this scenario" not in text


def test_a_link_with_a_workload_sets_the_charts_context_to_its_request_unless_it_names_one():
    at = open_calculator(**TASK)
    assert at.number_input(key="context").value == 1900  # 1,500 + 400: the memory charts show the plan's request
    named = open_calculator(**TASK, context="8192")
    assert named.number_input(key="context").value == 8192


def test_the_budget_table_bills_each_gpu_at_its_own_price():
    at = open_calculator(kv_section="Memory levers")
    at.selectbox(key="gpu").set_value("l40s").run()
    at.number_input(key="price").set_value(0.5).run()
    at.selectbox(key="gpu").set_value("h100-sxm").run()
    table = at.dataframe[0].value.set_index("GPU")
    assert table.loc["L40S", "its price ($/h)"] == 0.5
    assert table.loc["H100 SXM", "its price ($/h)"] == round(typical_price("h100-sxm"), 2)
    assert table.loc["A100 80GB SXM", "its price ($/h)"] == round(typical_price("a100-80"), 2)


def test_the_peak_given_as_users_waiting_at_once_becomes_little_s_law_rate_in_the_plan_and_the_link():
    from core.plan import concurrency

    at = open_page(**(TASK | {"rpm": "999"}))
    at.selectbox(key="load_as").set_value("in_flight").run()
    at.number_input(key="in_flight").set_value(2000).run()
    assert not at.exception, at.exception
    assert [w.key for w in at.number_input if w.key in ("rpm", "in_flight")] == ["in_flight"]  # one or the other
    rate = concurrency.requests_per_minute(2000, TASK_LOAD)  # 2,000 × 60 ÷ (2 s + 400 ÷ 20 tokens/s) = 5,455
    heading = next(m.value for m in at.markdown if "requests a minute at peak" in m.value)
    assert f"{rate:,.4g} requests a minute at peak" in heading
    assert f"send {rate:,.0f} requests a minute (Little's law" in " ".join(c.value for c in at.caption)
    plan = search.search(
        presets()["llama-3.1-70b"], TASK_LOAD.__class__(**(vars(TASK_LOAD) | {"requests_per_minute": rate}))
    ).plan
    assert plan_cards(at)["Monthly cost"]["metric-value"].replace(",", "") == f"${plan.monthly_cost:,.0f}".replace(
        ",", ""
    )
    link = at.query_params
    assert link["load_as"] == "Users waiting at once" and link["in_flight"] == "2000" and "rpm" not in link
    again = open_page(**dict(link))  # the link reopens the same plan
    assert plan_cards(again)["Monthly cost"] == plan_cards(at)["Monthly cost"]
    at.selectbox(key="load_as").set_value("rpm").run()  # back to requests a minute: the typed rate again
    assert "999 requests a minute at peak" in next(
        m.value for m in at.markdown if "requests a minute at peak" in m.value
    )


def test_a_range_whose_two_ends_are_the_same_bill_says_so_once():
    from types import SimpleNamespace

    from ui.kv_cost.plan_view import cost_range

    said = cost_range(SimpleNamespace(cost_range=(1080.0, 1080.2)))
    assert said.endswith("still $1,080 a month (the same number of copies either way)")
    assert "–" not in said.split(":")[-1]
    assert cost_range(SimpleNamespace(cost_range=(1080.0, 2160.0))).endswith("$1,080–$2,160 a month")
