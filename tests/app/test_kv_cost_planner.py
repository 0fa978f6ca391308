"""The cost page's planner sections in Streamlit's AppTest: the workload's plan and bill, build vs buy, calibration,
the search's plan in the sections, typed numbers and the briefing."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

from core.plan import build_vs_buy as bvb
from core.plan import calibration as cal
from core.plan import kv_cache as kv
from core.plan import search
from core.plan import serving as sv
from tests.app.helpers import shown
from tests.app.kv_cost_page import (
    ENGINE,
    H100,
    PAGE,
    P,
    captions,
    comparison,
    explained,
    figures,
    gb,
    headline,
    metrics,
    open_fields,
    open_section,
    reveal,
    with_calculator,
)
from ui.kv_cost.numbers import COST_COLUMN as FULL_BATCH
from ui.kv_cost.settings import ENGINE_OPEN, SECTION


# ------------------------------------------------------------------------------------------------ the planner
def workload_dep(**changes) -> kv.Deployment:
    return replace(kv.Deployment(gpu=kv.gpus()["h100-sxm"], price_per_gpu_hour=H100), **changes)


def test_the_page_opens_on_the_answer_with_no_planner_section_drawn(at):
    assert at.session_state[SECTION] is None and "kv_section" not in at.query_params
    assert "GPUs for this workload" not in metrics(at) and not any(n.key == "speed" for n in at.number_input)
    hint = "Pick a section to open it below; the link then opens it too."
    assert at.segmented_control(key=SECTION).help.startswith(hint)
    open_section(at, "Workload and bill")
    assert "GPUs for this workload" in metrics(at)  # the browser writes it into the link (tests/e2e)


def test_a_link_opens_its_planner_section_and_an_unknown_one_is_named():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params["kv_section"] = "calibration"  # a plain form, as typed by hand
    app.run()
    assert not app.exception and app.session_state[SECTION] == "Calibration"
    assert any(t.value.startswith("Median error") or "Median error" in t.value for t in app.markdown)
    bad = AppTest.from_file(PAGE, default_timeout=60)
    bad.query_params["kv_section"] = "<b>bill</b>"
    bad.run()
    assert not bad.exception and bad.session_state[SECTION] is None
    note = next(shown(w.value) for w in bad.warning if "kv_section" in shown(w.value))
    assert "it is not one of the choices (Workload and bill, Build vs buy" in note and "no section is opened" in note


def test_workload_plan_matches_the_engine(work):
    at = work
    found = search.search(P["primer-7b"], sv.Workload())
    plan, sizing = found.plan, found.plan.sizing
    shown = metrics(at)
    assert shown["GPUs for this workload"] == f"{plan.gpus} GPU" + ("s" if plan.gpus != 1 else "")
    assert shown["Monthly cost"] == f"${plan.monthly_cost:,.0f}"
    assert shown["$ per 1M input tokens"] == f"${plan.cost_per_m_input:,.2f}"
    assert shown["$ per 1M output tokens"] == f"${plan.cost_per_m_output:,.2f}"
    text = explained(at)
    assert f"the plan runs {sizing.batch} users per copy" in text and "what the queue at the peak needs" in text
    assert f"the p95 gap between tokens {1000 * sizing.load_itl_p95_s:,.1f} ms" in text  # sized under load
    assert f"{sizing.prefill_share:.0%} reading prompts (prefill, input tokens)" in text
    assert f"the cheapest of {len(found.candidates)} configurations that meet the target" in text


def test_workload_fields_change_the_bill_and_live_in_the_link(work):
    at = work
    at.number_input(key="rpm").set_value(6000.0).run()
    at.number_input(key="answer").set_value(500).run()
    load = sv.Workload(requests_per_minute=6000.0, output_tokens=500)
    sizing = search.search(P["primer-7b"], load).plan
    assert metrics(at)["GPUs for this workload"] == f"{sizing.gpus:,} GPUs" and sizing.gpus > 1
    open_section(at, "Calibration")  # the workload's fields are no longer drawn ...
    assert at.query_params["rpm"] == "6000.0" and at.query_params["answer"] == "500"  # ... but stay in the link
    shared = AppTest.from_file(PAGE, default_timeout=60)
    shared.query_params.update({**at.query_params, "kv_section": "Workload and bill"})
    shared.run()
    assert metrics(shared)["GPUs for this workload"] == f"{sizing.gpus:,} GPUs"
    assert shared.number_input(key="rpm").value == 6000.0


@pytest.mark.parametrize(
    ("key", "raw"),
    [("rpm", "-5"), ("prompt", "1e308"), ("ttft", "inf"), ("speed", "0"), ("hours", "nan"), ("api_in", "-1")],
)
def test_out_of_range_workload_in_a_link_is_named_and_the_default_kept(key, raw):
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params.update({key: raw, "kv_section": "Workload and bill"})
    app.run()
    assert not app.exception
    assert any(f"**{key}** = “{raw}”" in shown(w.value) for w in app.warning)
    plan = search.search(P["primer-7b"], sv.Workload()).plan
    assert metrics(app)["Monthly cost"] == f"${plan.monthly_cost:,.0f}"


def test_workload_beyond_the_models_context_names_the_fields_and_keeps_the_last(work):
    at = work
    at.number_input(key="prompt").set_value(500).run()
    at.selectbox(key="model").set_value("gpt2").run()  # at most 1,024 tokens
    before = metrics(at)["Monthly cost"]
    at.number_input(key="prompt").set_value(2000).run()
    assert not at.exception
    assert any("Mean prompt (2,000) + mean answer (250)" in e.value for e in at.error)
    assert metrics(at)["Monthly cost"] == before


def test_a_latency_target_no_batch_meets_says_so(work):
    at = work
    at.number_input(key="speed").set_value(10_000.0).run()
    assert not at.exception
    assert any("No plan for this workload: no allowed configuration reaches" in w.value for w in at.warning)


def test_build_vs_buy_compares_with_the_api_and_finds_the_break_even(at):
    open_section(at, "Build vs buy")
    spec = next(f for f in figures(at) if f["layout"]["title"]["text"] == "Monthly cost vs monthly tokens")
    assert [trace["name"] for trace in spec["data"]] == ["self-hosted GPUs (best case)", "API list price"]
    ticks = spec["layout"]["yaxis"]["ticktext"]
    assert all(tick.startswith("$") for tick in ticks)
    plan = search.search(P["primer-7b"], sv.Workload()).plan
    dep = workload_dep(gpu=plan.gpu, tp=plan.tp, price_per_gpu_hour=plan.price)
    sizing, _ = sv.size_workload(P["primer-7b"], dep, sv.default_efficiency(), sv.Workload())
    first = bvb.default_api(P["primer-7b"], "primer-7b", sv.Workload())
    assert not first.same_model and at.selectbox(key="api").value == "same"
    verdict = bvb.verdict(plan.monthly_cost, sv.Workload(), first)
    assert any(shown(m.value) == f"**{verdict.sentence}**" for m in at.markdown)
    assert "is not the same model" in verdict.sentence
    even = sv.break_even(sizing, sv.Workload(), first.price.input_per_m, first.price.output_per_m)
    text = explained(at)
    if even.threshold is None:
        assert "is never cheaper than the API" in text
    else:
        assert "is cheaper than the API above" in text
    at.selectbox(key="api").set_value("gpt-4o").run()
    assert at.number_input(key="api_in").value == 2.5 and at.number_input(key="api_out").value == 10.0
    assert "is cheaper than the API above" in explained(at)
    assert at.query_params["api"] == "OpenAI GPT-4o, 2025-03"
    at.number_input(key="api_in").set_value(0.0).run()
    at.number_input(key="api_out").set_value(0.01).run()
    assert at.selectbox(key="api").value == "custom"
    assert "is never cheaper than the API" in explained(at)


def test_calibration_tab_shows_every_point_and_the_medians(at):
    open_section(at, "Calibration")
    errs = cal.errors(sv.default_efficiency())
    throughput, latency = cal.medians(errs)
    line = f"**Median error: throughput {throughput:.0%}, latency {latency:.0%}** over {len(cal.points())} published"
    assert any(line in m.value for m in at.markdown)
    faster, measured = cal.measured_faster(errs)
    assert 0 < faster < measured == sum(p.metric == "throughput" for p in cal.points())
    assert any(f"faster than the model on {faster} of {measured} throughput points" in m.value for m in at.markdown)
    table = at.dataframe[-3].value
    assert len(table) == len(cal.points()) and list(table["error"]) == [round(100 * e, 1) for e in errs]
    assert all(source.startswith("https://") for source in table["source"])
    online = cal.online_errors(sv.default_efficiency())
    runs = at.dataframe[-2].value
    assert list(runs["first token error"]) == [round(100 * e["ttft"], 1) for _, _, e in online]
    assert list(runs["gap error"]) == [round(100 * e["itl"], 1) for _, _, e in online]
    ttft, itl, loaded = cal.loaded_medians(online)
    line = f"median error under load, first token {ttft:.0%}, time between tokens {itl:.0%}** over {loaded} published"
    assert any(line in m.value for m in at.markdown) and ttft <= 0.25 and itl <= 0.25
    assert any("The simulator misses most on" in m.value and cal.WARM_UP in m.value for m in at.markdown)
    assert len(at.dataframe[-1].value) == len(cal.capacities())
    at.session_state[ENGINE_OPEN] = True
    at.run()
    at.slider(key="mfu").set_value(0.2).run()
    slower = cal.medians(cal.errors(replace(sv.default_efficiency(), mfu=0.2)))
    assert any(f"throughput {slower[0]:.0%}, latency {slower[1]:.0%}" in m.value for m in at.markdown)
    assert at.query_params["mfu"] == "0.2"


def test_money_columns_come_first_with_a_dollar_format(at):
    assert comparison(at)[0][:2] == ["model", FULL_BATCH]
    assert all(row[1].startswith("$") for row in comparison(at)[1:])
    open_section(at, "Memory levers")
    options = at.dataframe[0].value
    columns = list(options.columns)
    assert columns[1:3] == ["its price ($/h)", FULL_BATCH] and columns[3].startswith("cheaper per token than")
    assert "users per model copy" in columns


def test_log_axes_have_full_tick_labels():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params["view"] = "Cost vs batch"
    app.run()
    cost = next(f for f in figures(app) if f["layout"]["title"]["text"].startswith("Cost per 1M"))
    assert cost["layout"]["yaxis"]["ticktext"] and all(t.startswith("$") for t in cost["layout"]["yaxis"]["ticktext"])
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params["view"] = "KV vs context"
    app.run()
    kv_fig = next(f for f in figures(app) if f["layout"]["title"]["text"].startswith("KV cache of one user"))
    assert "1K" in kv_fig["layout"]["xaxis"]["ticktext"] or "10K" in kv_fig["layout"]["xaxis"]["ticktext"]


def test_the_workload_section_shows_the_searchs_plan_and_a_pin_is_the_readers():
    app = with_calculator(AppTest.from_file(PAGE, default_timeout=60))
    app.query_params.update({"model": "Llama-3.1-70B", "kv_section": "Workload and bill"})
    app.run()
    assert "× 2 GPUs (the fewest that hold it, set by the page)" in captions(app)  # the memory calculator's own
    found = search.search(P["llama-3.1-70b"], sv.Workload())
    assert metrics(app)["Monthly cost"] == f"${found.plan.monthly_cost:,.0f}"
    assert f"on {found.plan.tp} × {found.plan.gpu.name} (the cheapest of" in explained(app)
    app.session_state["kv_search_open"] = True
    app.run()
    app.selectbox(key="pin_tp").set_value(8).run()
    pinned = search.search(P["llama-3.1-70b"], sv.Workload(), tp=8)
    assert metrics(app)["Monthly cost"] == f"${pinned.plan.monthly_cost:,.0f}"
    assert "your pin (GPUs per copy): the answer is yours, not the search's" in explained(app)


def test_the_lead_counts_users_per_model_copy_not_fractions_of_a_gpu(at):
    lead = next(m.value for m in at.markdown if "per model copy of" in m.value)
    gpus = int(re.search(r"(\d+) H100 SXMs for 16 users", lead).group(1))
    per_copy = int(re.search(r"\((\d+) users per model copy of 1 GPU\)", lead).group(1))
    assert gpus == -(-16 // per_copy) and "users per GPU" not in lead
    assert "at best (full batches)" in lead and "at least" not in lead


TYPED_FIELDS = {  # every typed number field of the scenario and the workload, with the section that draws it
    "context": None,
    "users": None,
    "prefix": ENGINE,
    "rpm": "Workload and bill",
    "prompt": "Workload and bill",
    "answer": "Workload and bill",
    "ttft": "Workload and bill",
    "speed": "Workload and bill",
    "hours": "Workload and bill",
}


@pytest.mark.parametrize("key", TYPED_FIELDS)
@pytest.mark.parametrize(
    ("typed", "shown_as", "reason"),
    [
        (1e308, "1e+308", "outside"),
        (99_999_999_999.0, "99,999,999,999", "outside"),
        (-5.0, "-5", "outside"),
    ],  # "inf" and "abc" cannot be typed: the browser's number field refuses the keystrokes (tests/e2e)
)
def test_a_bad_typed_number_is_named_under_its_field_and_the_last_scenario_kept(key, typed, shown_as, reason):
    from ui.kv_cost.settings import NUMBERS

    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params["users"] = "8"  # a shared scenario: the link must come through the refusal unchanged
    app.run()
    if TYPED_FIELDS[key]:
        reveal(app, TYPED_FIELDS[key])
    before, link, kept = metrics(app), dict(app.query_params), app.number_input(key=key).value
    app.number_input(key=key).set_value(typed).run()
    assert not app.exception
    notes = [shown(w.value) for w in app.warning if NUMBERS[key].label in shown(w.value)]
    assert len(notes) == 1, [w.value for w in app.warning]
    assert f"“{shown_as}” cannot be used" in notes[0] and reason in notes[0]
    assert f"the field keeps {kept:,.0f}" in notes[0] or f"the field keeps {kept:g}" in notes[0]
    assert metrics(app) == before and dict(app.query_params) == link
    assert app.number_input(key=key).value == kept
    # a usable value afterwards is taken and the message goes
    app.number_input(key=key).set_value(NUMBERS[key].default + NUMBERS[key].step).run()
    assert not [w for w in app.warning if NUMBERS[key].label in shown(w.value)]
    assert app.number_input(key=key).value == NUMBERS[key].default + NUMBERS[key].step


@pytest.mark.parametrize("key", ["context", "users", "prefix", "prompt", "answer"])
def test_a_fraction_typed_into_a_whole_number_field_is_named(key):
    app = with_calculator(AppTest.from_file(PAGE, default_timeout=60))
    app.run()
    if TYPED_FIELDS[key]:
        reveal(app, TYPED_FIELDS[key])
    kept = app.number_input(key=key).value
    app.number_input(key=key).set_value(2.5).run()
    assert any("“2.5” cannot be used: it is not a whole number" in shown(w.value) for w in app.warning)
    assert app.number_input(key=key).value == kept


def test_a_typed_whole_number_stays_whole_in_the_link(at):
    at.number_input(key="context").set_value(65536.0).run()
    at.number_input(key="context").set_value(-5.0).run()
    assert at.query_params["context"] == "65536"
    assert metrics(at)["KV per user"] == gb(
        kv.plan(P["primer-7b"], kv.Deployment(gpu=kv.gpus()[kv.defaults()["gpu"]], context=65536)).kv_per_user
    )


def test_a_bad_typed_model_field_is_named_and_the_model_kept(at):
    open_fields(at)
    before = metrics(at)
    at.number_input(key="f_n_layers").set_value(1e308).run()
    assert not at.exception
    assert any("**Layers L**: “1e+308” cannot be used: it is outside" in shown(w.value) for w in at.warning)
    assert "the field keeps 32" in shown(next(w.value for w in at.warning if "Layers L" in shown(w.value)))
    assert metrics(at) == before and at.selectbox(key="model").value == "primer-7b"  # nothing switched to Custom
    at.number_input(key="f_n_layers").set_value(40.0).run()
    assert at.selectbox(key="model").value == "custom" and at.query_params["f_n_layers"] == "40"


def test_the_headline_is_one_element_whose_every_number_says_what_it_is(at):
    cards = headline(at)
    assert [card["metric-label"] for card in cards] == [
        "KV per token",
        "KV per user",
        "KV for 16 users",
        "GPUs needed",
        "Users per model copy",
        FULL_BATCH,
    ]
    assert all(card["metric-help-text"] and card["metric-help"] == "?" for card in cards)
    assert len([e for e in at.get("html") if 'class="metric-cards"' in e.proto.body]) == 2 and not at.metric
    assert "Real serving costs more." in cards[-1]["metric-help-text"]


def test_the_briefing_shows_the_headline_the_page_shows(at):
    from ui.kv_cost import briefing as kv_briefing

    plan = kv.plan(P["primer-7b"], kv.Deployment(gpu=kv.gpus()["h100-sxm"], price_per_gpu_hour=H100))
    listed = kv_briefing.headline(
        P["primer-7b"], kv.Deployment(gpu=kv.gpus()["h100-sxm"], price_per_gpu_hour=H100), plan
    )
    assert listed == [(card["metric-label"], card["metric-value"]) for card in headline(at)]
