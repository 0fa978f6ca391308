"""The KV-cache calculator in a real browser: a planner's link restores the scenario; an upload becomes the model."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from core.plan import calibration as cal
from core.plan import kv_cache as kv
from core.plan import search
from core.plan import serving as sv
from core.plan.model_config import presets
from tests.e2e.conftest import PageWatch
from ui.elements.navigation import PAGES
from ui.kv_cost.settings import OWN_MODEL_LABEL

SPEC = next(spec for spec in PAGES if spec.script == "pages/kv_cost.py")


def metric(watch: PageWatch, label: str) -> str:
    """The value shown by the number with this label: a headline card (ui/elements/metric_cards.py) or a section's
    metric."""
    box = watch.page.locator('.metric-card, [data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('.metric-value, [data-testid="stMetricValue"]').inner_text().strip()


def gb(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:,.2f} GB"


@pytest.mark.e2e
def test_shared_url_restores_the_scenario(server, browser, watch):
    # A planner starts from a link naming a model, a GPU and a tensor-parallel size ...
    watch.open(server.url(f"{SPEC.url_path}?model=Llama-3.1-70B&gpu=H200+SXM&tp=2"), SPEC.landmark)
    assert watch.exceptions_on_screen() == 0
    # ... then edits the context and the KV type on the page.
    context = watch.page.get_by_label("Context per user T (tokens)", exact=True)
    context.fill("65536")
    context.press("Enter")
    watch.settle()
    kv_type = watch.page.get_by_label("KV cache number type", exact=True)
    kv_type.scroll_into_view_if_needed()  # the answer sits above the inputs; a list opened mid-scroll closes again
    watch.page.wait_for_timeout(300)
    kv_type.click()
    watch.page.get_by_role("option", name="FP8", exact=True).click()
    watch.settle()
    watch.page.wait_for_function("() => window.location.search.includes('kv_dtype=FP8')", timeout=30_000)

    expected = kv.plan(
        presets()["llama-3.1-70b"],
        kv.Deployment(gpu=kv.gpus()["h200-sxm"], tp=2, context=65536, kv_dtype="fp8"),
    )
    shown = {label: metric(watch, label) for label in ("KV per user", "GPUs needed", "Users per model copy")}
    assert shown == {
        "KV per user": gb(expected.kv_per_user),
        "GPUs needed": f"{expected.gpus_needed:,}",
        "Users per model copy": f"{expected.max_users:,}",
    }
    shared = watch.page.url
    query = parse_qs(urlparse(shared).query)
    assert query["context"] == ["65536"] and query["kv_dtype"] == ["FP8"] and query["model"] == ["Llama-3.1-70B"]
    watch.screenshot("kv_cost-planner")

    # The recipient opens the link in a fresh browser context and sees the same numbers.
    recipient = PageWatch(browser)
    try:
        recipient.open(shared, SPEC.landmark)
        assert {label: metric(recipient, label) for label in shown} == shown
        recipient.page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)  # plotly.js draws after the run
        assert recipient.page.locator(".js-plotly-plot").count() >= 1
        recipient.screenshot("kv_cost-recipient")
        assert recipient.errors == [], recipient.errors
    finally:
        recipient.close()
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_uploaded_config_becomes_the_model_and_a_bad_one_changes_nothing(server, watch, tmp_path):
    watch.open(server.url(f"{SPEC.url_path}?calculator=open"), SPEC.landmark)
    assert metric(watch, "KV per user") == "17.18 GB"
    watch.page.get_by_text(OWN_MODEL_LABEL, exact=True).click()
    watch.settle()  # the upload is drawn once the expander is open

    bad = tmp_path / "config.json"
    bad.write_text(
        '{"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 64}'
    )
    watch.page.locator('input[type="file"]').set_input_files(str(bad))
    watch.settle()
    error = watch.page.locator('[data-testid="stAlertContentError"]').filter(has_text="num_key_value_heads (64)")
    error.first.wait_for(timeout=30_000)
    assert metric(watch, "KV per user") == "17.18 GB"

    good = Path(__file__).resolve().parents[1] / "data" / "good_configs" / "qwen2_7b_text.json"
    watch.page.locator('input[type="file"]').set_input_files(str(good))
    watch.settle()
    watch.page.get_by_text("into the model fields (model = Custom)").wait_for(timeout=30_000)
    assert metric(watch, "KV per user") == gb(2 * 28 * 4 * 128 * 2 * 32768)
    assert watch.exceptions_on_screen() == 0
    watch.screenshot("kv_cost-upload")
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_hand_typed_link_restores_and_a_long_context_is_flagged(server, watch):
    # A planner types the link by hand with plain ids: the page reads them and corrects the address to its labels.
    watch.open(server.url(f"{SPEC.url_path}?model=llama-2-7b&w_bits=8&gpu=h200-sxm&context=65536"), SPEC.landmark)
    expected = kv.plan(presets()["llama-2-7b"], kv.Deployment(gpu=kv.gpus()["h200-sxm"], context=65536, weight_bits=8))
    assert metric(watch, "KV per user") == gb(expected.kv_per_user)
    section(watch, "Model anatomy")  # drawn once picked
    assert metric(watch, "Weights at 8-bit") == gb(expected.weights_bytes)
    warning = watch.page.locator('[data-testid="stAlertContentWarning"]').filter(has_text="maximum context of 4,096")
    warning.first.wait_for(timeout=30_000)
    watch.page.wait_for_function("() => window.location.search.includes('w_bits=8-bit')", timeout=30_000)
    assert parse_qs(urlparse(watch.page.url).query) == {  # the address now holds the page's own labels
        "model": ["Llama-2-7B"],
        "w_bits": ["8-bit"],
        "gpu": ["H200 SXM"],
        "context": ["65536"],
        "kv_section": ["Model anatomy"],  # the section picked, so the link reopens it
        "calculator": ["open"],  # a link holding the calculator's values opens it, and says so
    }
    assert watch.exceptions_on_screen() == 0
    watch.screenshot("kv_cost-long-context")
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_custom_fields_stay_in_the_link_while_their_expander_is_closed(server, browser, watch):
    # A planner edits the context, then one model field, and closes the fields again ...
    watch.open(server.url(f"{SPEC.url_path}?calculator=open"), SPEC.landmark)
    context = watch.page.get_by_label("Context per user T (tokens)", exact=True)
    context.fill("65536")
    context.press("Enter")
    watch.settle()
    fields = watch.page.get_by_text(OWN_MODEL_LABEL, exact=True).first
    fields.click()
    watch.settle()
    layers = watch.page.get_by_label("Layers L", exact=True)
    layers.fill("40")
    layers.press("Enter")
    watch.settle()
    fields.click()
    watch.settle()
    assert watch.page.get_by_label("Layers L", exact=True).count() == 0  # closed: the fields are not drawn
    watch.page.wait_for_function("() => window.location.search.includes('f_n_layers=40')", timeout=30_000)
    expected = gb(2 * 40 * 65536 * 32 * 128 * 2)
    assert metric(watch, "KV per user") == expected
    query = parse_qs(urlparse(watch.page.url).query)
    assert query["context"] == ["65536"] and query["f_n_layers"] == ["40"]
    assert query["model"] == ["Custom (fields below)"]

    # ... the value is still there when the fields are opened again, and after a visit to another page.
    fields.click()
    watch.settle()
    assert watch.page.get_by_label("Layers L", exact=True).input_value() == "40"
    fields.click()
    watch.settle()
    watch.navigate(PAGES[0])
    watch.navigate(SPEC)
    assert metric(watch, "KV per user") == expected
    watch.page.wait_for_function("() => window.location.search.includes('f_n_layers=40')", timeout=30_000)
    shared = watch.page.url

    # A recipient opens the link with the fields closed and sees the same scenario.
    recipient = PageWatch(browser)
    try:
        recipient.open(shared, SPEC.landmark)
        assert recipient.page.get_by_label("Layers L", exact=True).count() == 0
        assert metric(recipient, "KV per user") == expected
        assert recipient.errors == [], recipient.errors
    finally:
        recipient.close()
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


def section(watch: PageWatch, name: str) -> None:
    """Open one of the planner's sections below the side-by-side table (drawn once picked)."""
    watch.page.locator(".st-key-kv_section").get_by_role("radio", name=name, exact=True).click()
    watch.settle()


@pytest.mark.e2e
def test_workload_build_vs_buy_and_calibration_and_the_link_round_trip(server, browser, watch):
    # A planner opens the page for Llama-3.1-70B: GPUs per copy follow the model (2 H100s hold it).
    watch.open(server.url(f"{SPEC.url_path}?model=Llama-3.1-70B&calculator=open"), SPEC.landmark)
    assert watch.exceptions_on_screen() == 0
    watch.page.get_by_text("the fewest that hold it, set by the page").first.wait_for(timeout=30_000)

    # The page asks for the workload first and answers with the searched plan; the planner also opens the workload
    # section. Out-of-range values are refused by name under the field; the bill stays.
    asked = watch.page.get_by_label("Peak requests per minute", exact=True)
    asked.first.wait_for(timeout=30_000)
    assert asked.count() == 1
    section(watch, "Workload and bill")
    watch.page.wait_for_function("() => window.location.search.includes('kv_section=Workload')", timeout=30_000)
    rpm = watch.page.get_by_label("Peak requests per minute", exact=True)
    bill = metric(watch, "Monthly cost")
    for bad, shown in (("-5", "-5"), ("1e308", "1e+308")):
        rpm.fill(bad)
        rpm.press("Enter")
        watch.settle()
        note = watch.page.locator('[data-testid="stAlert"]').filter(has_text="Peak requests per minute")
        assert f"“{shown}” cannot be used" in note.first.inner_text() and rpm.input_value() == "60.00"
        assert metric(watch, "Monthly cost") == bill
        assert "rpm=" not in watch.page.url
    # They type their traffic and answer length.
    rpm.fill("1200")
    rpm.press("Enter")
    watch.settle()
    answer = watch.page.get_by_label("Mean answer (output tokens)", exact=True)
    answer.fill("400")
    answer.press("Enter")
    watch.settle()
    config = presets()["llama-3.1-70b"]
    load = sv.Workload(requests_per_minute=1200.0, output_tokens=400)
    sizing = search.search(config, load).plan  # the searched plan: every section reads it
    watch.page.wait_for_function("() => window.location.search.includes('rpm=1200')", timeout=30_000)
    assert metric(watch, "GPUs for this workload") == f"{sizing.gpus:,} GPUs"
    assert metric(watch, "Monthly cost") == f"${sizing.monthly_cost:,.0f}"
    watch.page.locator(".js-plotly-plot").nth(1).wait_for(timeout=30_000)
    watch.screenshot("kv_cost-workload")

    # Build vs buy: the break-even chart and its sentence.
    section(watch, "Build vs buy")
    watch.page.get_by_text("Monthly cost vs monthly tokens").first.wait_for(timeout=30_000)
    sentence = watch.page.get_by_text("than the API", exact=False).first
    sentence.wait_for(timeout=30_000)
    watch.screenshot("kv_cost-build-vs-buy")

    # Calibration: predicted vs measured with the medians in one line.
    section(watch, "Calibration")
    throughput, latency = cal.medians(cal.errors(sv.default_efficiency()))
    line = f"Median error: throughput {throughput:.0%}, latency {latency:.0%}"
    watch.page.get_by_text(line, exact=False).first.wait_for(timeout=30_000)
    # the points, the runs under traffic (simulated once the section opens) and the capacities
    watch.page.locator('[data-testid="stDataFrame"]').nth(2).wait_for(timeout=60_000)
    assert watch.page.locator('[data-testid="stDataFrame"]').count() == 3
    ttft, itl, loaded = cal.loaded_medians(cal.online_errors(sv.default_efficiency()))
    under = f"first token {ttft:.0%}, time between tokens {itl:.0%} over {loaded} published runs"
    watch.page.get_by_text(under, exact=False).first.wait_for(timeout=30_000)
    watch.screenshot("kv_cost-calibration")

    # The link holds the open section and the workload although its section is closed; a recipient opens the same
    # section and sees the same bill.
    shared = watch.page.url
    query = parse_qs(urlparse(shared).query)
    assert query["rpm"] == ["1200.0"] and query["answer"] == ["400"] and query["model"] == ["Llama-3.1-70B"]
    assert query["kv_section"] == ["Calibration"]
    recipient = PageWatch(browser)
    try:
        recipient.open(shared, SPEC.landmark)
        recipient.page.get_by_text(line, exact=False).first.wait_for(timeout=30_000)
        section(recipient, "Workload and bill")
        assert metric(recipient, "Monthly cost") == f"${sizing.monthly_cost:,.0f}"
        assert recipient.page.get_by_label("Peak requests per minute", exact=True).input_value() == "1200.00"
        assert recipient.errors == [], recipient.errors
    finally:
        recipient.close()
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_a_bad_typed_context_is_named_and_the_headline_kept(server, watch):
    watch.open(server.url(f"{SPEC.url_path}?context=65536"), SPEC.landmark)
    before = metric(watch, "KV per user")
    assert before == gb(
        kv.plan(presets()["primer-7b"], kv.Deployment(gpu=kv.gpus()[kv.defaults()["gpu"]], context=65536)).kv_per_user
    )
    context = watch.page.get_by_label("Context per user T (tokens)", exact=True)
    for typed, shown in (("1e308", "1e+308"), ("-5", "-5")):
        context.fill(typed)
        context.press("Enter")
        watch.settle()
        note = watch.page.locator('[data-testid="stAlert"]').filter(has_text="Context per user T (tokens)")
        note.first.wait_for(timeout=30_000)
        assert f"“{shown}” cannot be used" in note.first.inner_text()
        assert "the field keeps 65,536" in note.first.inner_text()
        assert metric(watch, "KV per user") == before
        assert context.input_value() == "65536"
        assert parse_qs(urlparse(watch.page.url).query)["context"] == ["65536"]
    watch.screenshot("kv_cost-typed-refusal")
    context.fill("32768")  # a usable value is taken and the message goes
    context.press("Enter")
    watch.settle()
    assert metric(watch, "KV per user") == "17.18 GB"
    assert watch.page.locator('[data-testid="stAlert"]').filter(has_text="Context per user T (tokens)").count() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_a_headline_numbers_help_shows_on_hover_on_focus_and_on_tap(server, browser, watch):
    watch.open(server.url(f"{SPEC.url_path}?calculator=open"), SPEC.landmark)
    card = watch.page.locator(".metric-card").filter(has_text="KV per user").first
    button, tip = card.get_by_role("button", name="What is KV per user?"), card.locator(".metric-help-text")
    assert tip.is_hidden() and "One conversation" in (button.get_attribute("aria-describedby") and tip.inner_text())
    button.hover()
    assert tip.is_visible() and tip.inner_text().startswith("One conversation at the full context")
    watch.page.mouse.move(0, 0)
    assert tip.is_hidden()
    button.focus()  # a keyboard's Tab, and a tap on a phone, focus the button
    assert tip.is_visible()
    box, shown = card.bounding_box(), tip.bounding_box()
    assert shown["y"] >= box["y"] and shown["width"] > 100
    main = watch.page.get_by_test_id("stMain").bounding_box()
    for index in range(6):  # each card's help opens inside the page, the last column's leftwards
        other = watch.page.locator(".metric-card").nth(index)
        other.get_by_role("button").hover()
        opened = other.locator(".metric-help-text").bounding_box()
        assert main["x"] <= opened["x"] and opened["x"] + opened["width"] <= main["x"] + main["width"], (index, opened)


@pytest.mark.e2e
def test_a_typed_number_the_field_cannot_hold_keeps_the_last_value_and_is_named(server, watch):
    # Streamlit's number input sends an empty field, or one beyond the float range, as "no value" and the widget's
    # default (32,768) would silently replace the reader's 65,536; the page keeps 65,536 and says so under the field.
    watch.open(server.url(f"{SPEC.url_path}?context=65536"), SPEC.landmark)
    box = watch.page.get_by_role("spinbutton", name="Context per user T (tokens)")
    note = watch.page.locator(".st-key-context .number-note")
    for typed, why in (("", "an empty field cannot be used"), ("9" * 400, "it is not a number this field can hold")):
        sent = watch.messages_for(lambda typed=typed: (box.fill(typed), box.press("Enter")))
        assert sent == 0 and box.input_value() == "65536", (typed[:5], sent, box.input_value())
        assert why in note.inner_text() and "the field keeps 65,536." in note.inner_text()
        assert metric(watch, "KV per user") == gb(2 * 32 * 65536 * 32 * 128 * 2) and "context=65536" in watch.page.url
    box.fill("")
    box.press("Tab")  # leaving the field commits it too
    watch.page.wait_for_timeout(300)
    assert box.input_value() == "65536" and "an empty field" in note.inner_text()
    box.fill("40960")
    box.press("Enter")
    watch.settle()
    assert note.count() == 0 and "context=40960" in watch.page.url  # a value the field takes clears the line
    assert metric(watch, "KV per user") == gb(2 * 32 * 40960 * 32 * 128 * 2)
    assert watch.exceptions_on_screen() == 0
    watch.screenshot("kv_cost-number-note")
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_the_tables_csv_download_saves_its_rows_by_click_and_by_keyboard(warm, watch, tmp_path):
    """The side-by-side table's CSV button lives inside the table's element (no widget): a click, or Enter on the
    focused button, saves kv-comparison.csv with the table's models in order."""
    watch.open(warm.url(f"{SPEC.url_path}?calculator=open"), SPEC.landmark)
    button = watch.page.get_by_role("button", name="Download comparison (CSV)")
    table = watch.page.get_by_role("region", name="Side by side")  # the comparison, not the search's table
    shown = table.locator("tbody th").all_inner_texts()
    for press in (button.click, lambda: (button.focus(), watch.page.keyboard.press("Enter"))):
        with watch.page.expect_download(timeout=30_000) as waiting:
            press()
        assert waiting.value.suggested_filename == "kv-comparison.csv"
        saved = tmp_path / "comparison.csv"
        waiting.value.save_as(saved)
        lines = saved.read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("model,") and [line.split(",")[0] for line in lines[1:]] == shown
    assert watch.errors == [], watch.errors
