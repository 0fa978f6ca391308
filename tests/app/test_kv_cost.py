"""The KV-cache cost calculator page in Streamlit's AppTest: defaults, every control, the URL, bad input, the charts."""

from __future__ import annotations

import csv
import html
import io
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.plan import build_vs_buy as bvb
from core.plan import calibration as cal
from core.plan import kv_cache as kv
from core.plan import search
from core.plan import serving as sv
from core.plan.model_config import FIELD_NAMES, param_count, presets
from core.plan.prices import typical_price
from tests.app.helpers import chart_specs, metric_cards, shown, static_tables, table_downloads, table_footnote
from tests.app.helpers import numbers as values
from ui.kv_cost.numbers import COST_COLUMN as FULL_BATCH
from ui.kv_cost.own_model import FIELD_KEYS
from ui.kv_cost.settings import ENGINE_OPEN, OWN_MODEL_OPEN, SECTION, SECTIONS

ROOT = Path(__file__).resolve().parents[2]
QWEN2_CONFIG = ROOT / "tests" / "data" / "good_configs" / "qwen2_7b_text.json"  # Qwen2.5-7B's text fields
PAGE = str(ROOT / "pages" / "kv_cost.py")
P = presets()
H100 = typical_price("h100-sxm")  # the price follows the GPU: the H100 preset's typical public price
ENGINE = "Engine settings"  # where a field drawn only in the engine settings is (`reveal`)


PLAN_CARDS = ("Configuration", "Monthly cost", "$ per 1M output tokens", "$ per 1M input tokens")


def headline(at: AppTest) -> list[dict]:
    """The memory calculator's headline cards (the plan's four cards above them left out)."""
    return [card for card in metric_cards(at) if card["metric-label"] not in PLAN_CARDS]


def figures(at: AppTest) -> list[dict]:
    """The page's figures below the plan: the search's cost-against-latency chart (tests/app/test_kv_cost_plan.py)
    left out, so the memory calculator's chart is first."""
    return [f for f in chart_specs(at) if not f["layout"]["title"]["text"].startswith("Monthly cost vs first-token")]


def metrics(at: AppTest) -> dict[str, str]:
    """Every number the page shows as a metric: the headline's cards and the planner sections' st.metric."""
    return {card["metric-label"]: card["metric-value"] for card in metric_cards(at)} | {
        m.label: m.value for m in at.metric
    }


def captions(at: AppTest) -> str:
    """The page's small print: captions, the lines under the headline's numbers and the headline's footnote."""
    footnotes = [
        html.unescape(text)
        for element in at.get("html")
        for text in re.findall(r'<p class="metric-footnote">(.*?)</p>', element.proto.body)
    ]
    return "\n".join([c.value for c in at.caption] + [card["metric-note"] for card in metric_cards(at)] + footnotes)


def open_fields(at: AppTest, is_open: bool = True) -> AppTest:
    """Open (or close) the "Your own model" expander, as a reader's click does: its fields are drawn only while open."""
    at.session_state[OWN_MODEL_OPEN] = is_open
    return at.run()


def open_engine(at: AppTest) -> AppTest:
    """Open the "Engine settings" expander (GPUs per model copy, shared prompt, …), drawn only while open."""
    at.session_state[ENGINE_OPEN] = True
    return at.run()


def reveal(at: AppTest, place: str) -> AppTest:
    """Draw a field that is not on the first screen: open the engine settings or the planner section holding it."""
    return open_engine(at) if place == ENGINE else open_section(at, place)


def open_config(at: AppTest) -> AppTest:
    """Open the "Your own model" expander, which holds the config upload (drawn only while open)."""
    at.session_state[OWN_MODEL_OPEN] = True
    return at.run()


def open_section(at: AppTest, label: str) -> AppTest:
    """Open one of the tabs below the side-by-side table (only the open one is drawn)."""
    assert label in SECTIONS
    at.session_state[SECTION] = label
    return at.run()


def explained(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown if m.value.startswith(("**What you see", "**Why it matters")))


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.run()
    assert not app.exception
    return app


@pytest.fixture
def work(at: AppTest) -> AppTest:
    """The default page with the planner's Workload and bill section open."""
    return open_section(at, "Workload and bill")


def gb(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:,.2f} GB"


def formula_html(at: AppTest) -> str:
    return next(e.proto.body for e in at.get("html") if "<h3>The primer's formula with your numbers" in e.proto.body)


def formula_lines(at: AppTest) -> list[str]:
    body = formula_html(at)
    return re.findall(r"<p>(.*?)</p>", body.split('<div class="formula">')[1].split("</div>")[0])


def test_default_is_the_primers_example(at):
    shown = metrics(at)
    assert shown["KV per user"] == "17.18 GB"
    assert "16.00 GiB" in captions(at)
    assert shown["KV per token"] == "524.29 kB"
    assert at.selectbox(key="model").value == "primer-7b"
    assert at.number_input(key="context").value == 32768
    assert at.selectbox(key="kv_dtype").value == "fp16"
    formula = formula_html(at)
    assert "<p>KV = 2 · <i>L</i> · <i>T</i> · <i>n</i><sub>kv</sub> · <i>d</i><sub>k</sub> · bytes</p>" in formula
    assert "<p>= 2 · 32 · 32,768 · 32 · 128 · 2</p>" in formula
    assert "17,179,869,184 bytes" in formula
    assert not [m.value for m in at.markdown if "$$" in m.value]  # no KaTeX to typeset on each change


@pytest.mark.parametrize(
    ("model", "symbols", "numbers"),
    [
        (
            "deepseek-v3",
            "KV = <i>L</i> · <i>T</i> · (<i>r</i><sub>kv</sub> + <i>d</i><sub>rope</sub>) · bytes",
            "= {c.n_layers} · 32,768 · ({c.kv_lora_rank} + {c.qk_rope_head_dim}) · 2",
        ),
        (
            "gemma-2-9b",
            "KV = 2 · (<i>L</i><sub>full</sub> · <i>T</i> + <i>L</i><sub>window</sub> · min(<i>T</i>, <i>W</i>)) · "
            "<i>n</i><sub>kv</sub> · <i>d</i><sub>k</sub> · bytes",
            "= 2 · ({c.full_layers} · 32,768 + {c.sliding_layers} · {c.sliding_window:,}) · {c.n_kv_heads} · "
            "{c.head_dim} · 2",
        ),
    ],
)
def test_formula_follows_the_models_attention(at, model, symbols, numbers):
    at.selectbox(key="model").set_value(model).run()
    assert formula_lines(at) == [symbols, numbers.format(c=P[model])]
    exact = kv.kv_bytes_per_sequence(P[model], 32768, "fp16")
    assert f"{exact:,.0f} bytes" in formula_html(at)


def test_headline_matches_the_engine(at):
    plan = kv.plan(P["primer-7b"], kv.Deployment(gpu=kv.gpus()["h100-sxm"], price_per_gpu_hour=H100))
    shown = metrics(at)
    assert shown["GPUs needed"] == f"{plan.gpus_needed:,}"
    assert shown["Users per model copy"] == f"{plan.max_users:,}"
    assert shown[FULL_BATCH] == f"${plan.cost_per_million:,.2f}"
    assert shown[f"KV for {16:,} users"] == gb(plan.kv_total)


def test_preset_change_changes_headline_and_fields(at):
    open_fields(at)
    at.selectbox(key="model").set_value("llama-3.1-8b").run()
    assert metrics(at)["KV per user"] == gb(kv.kv_bytes_per_sequence(P["llama-3.1-8b"], 32768, block=16)) == "4.29 GB"
    assert at.number_input(key="f_n_kv_heads").value == 8
    assert at.number_input(key="f_vocab_size").value == 128256


def test_editing_a_field_makes_a_custom_model(at):
    open_fields(at)
    at.number_input(key="f_n_kv_heads").set_value(8).run()
    assert at.selectbox(key="model").value == "custom"
    assert metrics(at)["KV per user"] == "4.29 GB"  # the primer's 7B with 8 KV heads: a quarter of 17.18


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [("context", 65536, "34.36 GB"), ("kv_dtype", "fp8", "8.59 GB"), ("kv_dtype", "fp32", "34.36 GB")],
)
def test_context_and_element_type_change_the_cache(at, key, value, expected):
    widget = at.number_input(key=key) if key == "context" else at.selectbox(key=key)
    widget.set_value(value).run()
    assert metrics(at)["KV per user"] == expected


def test_gpu_and_tensor_parallelism_change_users(at):
    before = metrics(at)["Users per model copy"]
    at.selectbox(key="gpu").set_value("h200-sxm").run()
    h200 = kv.plan(P["primer-7b"], kv.Deployment(gpu=kv.gpus()["h200-sxm"]))
    assert metrics(at)["Users per model copy"] == f"{h200.max_users:,}" != before
    open_engine(at).selectbox(key="tp").set_value(2).run()
    tp2 = kv.plan(P["primer-7b"], kv.Deployment(gpu=kv.gpus()["h200-sxm"], tp=2))
    assert metrics(at)["GPUs needed"] == f"{tp2.gpus_needed:,}"


def test_price_and_weight_bits_change_cost(at):
    at.number_input(key="price").set_value(5.0).run()
    doubled = metrics(at)[FULL_BATCH]
    plan = kv.plan(P["primer-7b"], kv.Deployment(gpu=kv.gpus()["h100-sxm"], price_per_gpu_hour=5.0))
    assert doubled == f"${plan.cost_per_million:,.2f}"
    at.selectbox(key="w_bits").set_value(4).run()
    assert metrics(at)[FULL_BATCH] != doubled


def test_gpus_per_copy_follow_the_model_unless_the_reader_sets_them(at):
    assert open_engine(at).selectbox(key="tp").value == "auto"
    at.selectbox(key="model").set_value("llama-3.1-405b").run()
    auto = kv.plan(P["llama-3.1-405b"], kv.Deployment(gpu=kv.gpus()["h100-sxm"], price_per_gpu_hour=H100, tp=16))
    assert metrics(at)["GPUs needed"] == f"{auto.gpus_needed:,}"
    assert "× 16 GPUs (the fewest that hold it, set by the page)" in captions(at)
    at.selectbox(key="tp").set_value(1).run()
    assert metrics(at)["GPUs needed"] == "does not fit"
    assert "needs ≥ 16 GPUs per copy" in captions(at)
    at.selectbox(key="tp").set_value(32).run()
    assert "(your choice)" in captions(at)


def test_impossible_tensor_parallelism_keeps_the_last_valid_scenario(at):
    open_engine(at).selectbox(key="tp").set_value(64).run()
    assert not at.exception
    assert any("does not divide the 32 attention heads" in e.value for e in at.error)
    assert metrics(at)["KV per user"] == "17.18 GB" and metrics(at)["GPUs needed"] == "6"


def test_inconsistent_fields_name_the_field_and_keep_the_scenario(at):
    open_fields(at)
    at.number_input(key="f_n_kv_heads").set_value(5).run()
    assert not at.exception
    assert any("num_key_value_heads (5)" in e.value for e in at.error)
    assert metrics(at)["KV per user"] == "17.18 GB"


def test_pasted_bad_config_is_refused_and_scenario_kept(at):
    open_config(at)
    at.text_area(key="kv_paste").input('{"num_hidden_layers": 32, "hidden_size": 1e308, "num_attention_heads": 32}')
    next(b for b in at.button if b.label == "Use pasted config").click().run()
    assert not at.exception
    assert any("hidden_size" in shown(e.value) and "unchanged" in e.value for e in at.error)
    assert at.selectbox(key="model").value == "primer-7b" and metrics(at)["KV per user"] == "17.18 GB"


def test_pasted_config_becomes_the_custom_model(at):
    open_config(at)
    at.text_area(key="kv_paste").input(QWEN2_CONFIG.read_text())
    next(b for b in at.button if b.label == "Use pasted config").click().run()
    assert at.selectbox(key="model").value == "custom"
    assert metrics(at)["KV per user"] == gb(2 * 28 * 4 * 128 * 2 * 32768)
    report = shown("\n".join(m.value for m in at.markdown))
    assert "num_key_value_heads" in report and "Missing or not stated" in report
    open_section(at, "Model anatomy")
    assert metrics(at)["Parameters computed from the config"] == f"{param_count(P['qwen2.5-7b']):,}"


def test_primer_button_restores_the_example(at):
    at.selectbox(key="model").set_value("deepseek-v3").run()
    at.number_input(key="context").set_value(1000).run()
    next(b for b in at.button if "primer's example" in b.label).click().run()
    open_fields(at)
    assert metrics(at)["KV per user"] == "17.18 GB"
    assert at.number_input(key="f_kv_lora_rank").value == 0


def test_url_restores_the_scenario():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params.update(
        {"model": "Mistral-7B-v0.1", "context": "131072", "kv_dtype": "FP8", "gpu": "L40S", "view": "Users vs context"}
    )
    app.run()
    assert app.selectbox(key="model").value == "mistral-7b" and app.selectbox(key="gpu").value == "l40s"
    open_fields(app)
    assert app.number_input(key="f_sliding_window").value == 4096  # seeded from the preset named in the link
    expected = kv.plan(P["mistral-7b"], kv.Deployment(gpu=kv.gpus()["l40s"], context=131072, kv_dtype="fp8"))
    assert metrics(app)["KV per user"] == gb(expected.kv_per_user)
    assert figures(app)[0]["layout"]["title"]["text"] == "Maximum concurrent users vs context length"


@pytest.mark.parametrize(
    ("view", "title"),
    [
        ("KV vs context", "KV cache of one user vs context length"),
        ("Memory per GPU", "Memory of one GPU: weights / KV cache / reserve / free"),
        ("Users vs context", "Maximum concurrent users vs context length"),
        ("Cost vs batch", "Cost per 1M output tokens vs batch size (best case)"),
    ],
)
def test_each_view_draws_its_chart_and_explains_it(view, title):
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params["view"] = view
    app.session_state[SECTION] = "Sources"  # a section tab without a chart: the view's chart is the only one
    app.run()
    charts = figures(app)
    assert len(charts) == 1 and charts[0]["layout"]["title"]["text"] == title
    text = explained(app)
    assert "**What you see.**" in text and "**Why it matters.**" in text


@pytest.mark.parametrize("gpu", list(kv.gpus()))
def test_gpu_memory_labels_sit_clear_of_the_model_lines_and_of_each_other(at, gpu):
    spec = figures(at.selectbox(key="gpu").set_value(gpu).run())[0]
    models = [trace for trace in spec["data"] if trace.get("showlegend") is not False]
    sizes = sorted((values(t["y"])[0], t) for t in spec["data"] if t.get("mode") == "lines+text")
    assert kv.gpus()[gpu].memory_gb in [size for size, _ in sizes]
    assert all(t["text"][1] == "" for _, t in sizes)  # written at the short-context end ...
    assert max(values(m["y"])[0] for m in models) < sizes[0][0]  # ... where every model's line is below them all
    edges = [0.0, *(np.log10(size) for size, _ in sizes), np.inf]  # the gaps between dotted lines, in decades
    taken: dict[int, int] = {}  # gap -> labels in it: above its line (the gap over it) or below it (the gap under)
    for index, (size, trace) in enumerate(sizes):
        above = trace["textposition"] == "top right"
        if not above:
            assert np.log10(sizes[index + 1][0] / size) < 0.35  # below only when the next size is close above
        gap = index + 1 if above else index
        taken[gap] = taken.get(gap, 0) + 1
    for gap, count in taken.items():  # two labels share a gap only at its two ends, and only if both fit
        assert count == 1 or edges[gap + 1] - edges[gap] >= 0.5, [(s, t["textposition"]) for s, t in sizes]


def test_kv_chart_has_one_line_per_model_and_the_engine_values(at):
    spec = figures(at)[0]
    lines = [trace for trace in spec["data"] if trace.get("showlegend") is not False]
    names = [trace["name"] for trace in lines]
    assert names[0] == P["primer-7b"].name and len(names) == 5
    xs, ys = values(lines[0]["x"]), values(lines[0]["y"])
    assert len(xs) > 100 and xs.min() <= 1024 and xs.max() >= 1_048_576
    np.testing.assert_allclose(ys, np.ceil(xs / 16) * 16 * 524_288 / 1e9)  # 16-token blocks of 524,288 B, in GB
    assert spec["layout"]["xaxis"]["type"] == "log"


def test_memory_chart_stacks_weights_kv_reserve_free():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params["view"] = "Memory per GPU"
    app.run()
    spec = figures(app)[0]
    parts = {trace["name"]: float(values(trace["y"])[0]) for trace in spec["data"]}
    plan = kv.plan(P["primer-7b"], kv.Deployment(gpu=kv.gpus()["h100-sxm"], price_per_gpu_hour=H100))
    assert parts["Weights"] == pytest.approx(plan.weights_gpu / 1e9)
    assert parts["KV cache in use"] == pytest.approx(plan.kv_used_gpu / 1e9)
    assert sum(parts.values()) == pytest.approx(85.52, abs=0.01)  # the 81,559 MiB nvidia-smi reports for an H100
    assert "51.54 GB of KV cache for 3 users" in explained(app)


def comparison(at: AppTest) -> list[list[str]]:
    """The side-by-side table's rows as shown, header first."""
    return static_tables(at)["Side by side"]


def test_comparison_table_follows_the_selection(at):
    header, *rows = comparison(at)
    assert [row[0] for row in rows] == [
        P[key].name for key in ("primer-7b", "llama-3.1-8b", "llama-3.1-70b", "mistral-7b", "deepseek-v3")
    ]
    primer = kv.plan(P["primer-7b"], kv.Deployment(gpu=kv.gpus()["h100-sxm"], price_per_gpu_hour=H100))
    first = dict(zip(header, rows[0], strict=True))
    assert first[FULL_BATCH] == f"${primer.cost_per_million:,.2f}"
    assert first["KV per user at 32,768 (GB)"] == "17.18" and first["users per copy"] == f"{primer.max_users:,}"
    file, data = table_downloads(at)["Download comparison (CSV)"]  # the table's own button, not a widget
    csv_header, *csv_rows = csv.reader(io.StringIO(data))
    assert file == "kv-comparison.csv" and csv_header == header
    assert [row[0] for row in csv_rows] == [row[0] for row in rows]
    assert not at.dataframe  # a first screen without an Arrow table: no pandas, no data grid
    at.multiselect(key="compare").set_value(["gemma-2-9b"]).run()
    assert [row[0] for row in comparison(at)[1:]] == [P["primer-7b"].name, P["gemma-2-9b"].name]


def test_comparison_cells_are_escaped_and_the_csv_keeps_raw_values():
    from ui.elements.static_table import csv_bytes, table_html

    body = table_html(["model", "n"], [["<img src=x onerror=alert(1)>", 1234.5], ["B", None]], label="t")
    assert "<img" not in body and "&lt;img src=x onerror=alert(1)&gt;" in body
    assert "<td class=num>1,234.5</td>" in body and "<td>—</td>" in body
    assert csv_bytes(["model", "n"], [["a, b", 1234.5], ["B", None]]) == b'model,n\n"a, b",1234.5\nB,\n'


def test_finance_lines_follow_the_numbers(at):
    open_section(at, "Budget")
    text = "\n".join(m.value for m in at.markdown)
    assert "**Doubling the context** from 32,768 to 65,536 tokens" in text
    assert "users per copy from 3 to 1" in text
    assert "**An FP8 KV cache**" in text and "from 3 to 7" in text
    options = at.dataframe[0].value
    assert "H200 SXM" in list(options["GPU"])


def test_anatomy_shows_exact_counts_and_reference_points(at):
    open_section(at, "Model anatomy")
    at.selectbox(key="model").set_value("gpt2").run()
    assert metrics(at)["Parameters computed from the config"] == "124,439,808"
    references = next(frame.value for frame in at.dataframe if "exact parameters" in frame.value.columns)
    counts = dict(zip(references["model"], references["exact parameters"], strict=True))
    assert counts["Primer's tiny model (§6)"] == 736 and counts["GPT-2 small"] == 124_439_808


def test_anatomy_lists_all_15_activations_of_primer_section_4(at):
    open_section(at, "Model anatomy")
    at.selectbox(key="model").set_value("gpt2").run()
    table = next(frame.value for frame in at.dataframe if "activation" in frame.value.columns)
    assert len(table) == 15
    shapes = dict(zip(table["activation"], table["shape"], strict=True))
    context = next(int(n.value) for n in at.number_input if n.key == "context")
    for name in ("Attention weights (after softmax)", "Output of W_O added to the residual", "MLP output"):
        assert name in shapes
    assert shapes["Attention weights (after softmax)"] == f"{context:,} × {context:,} per head".replace(",", "")
    assert shapes["Attention output, one head"] == f"{context} × 64"
    assert shapes["Output of W_O added to the residual"] == f"{context} × 768"
    assert shapes["Final hidden state (after the last norm)"] == f"{context} × 768"
    assert shapes["Logits of the last token"] == "50257"
    assert shapes["Next-token probabilities"] == "50257, sums to 1"


def test_hostile_link_never_crashes_and_falls_back_to_the_primer():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params.update(
        {
            "context": "1e300",
            "users": "NaN",
            "model": "GPT-5",
            "tp": "3",
            "f_n_layers": "-4",
            "price": "abc",
            "compare": "Nope",
            "util": "7",
            "view": "Nothing",
            "kv_dtype": "fp7",
        }
    )
    app.run()
    assert not app.exception
    assert metrics(app)["KV per user"] == "17.18 GB"
    assert app.number_input(key="context").value == 32768 and open_engine(app).selectbox(key="tp").value == "auto"


def test_link_to_a_custom_model_restores_its_fields():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params.update({"model": "Custom (fields below)", "f_n_layers": "40", "f_n_kv_heads": "8"})
    app.run()
    assert app.selectbox(key="model").value == "custom"
    assert metrics(app)["KV per user"] == gb(2 * 40 * 32768 * 8 * 128 * 2)


@pytest.mark.parametrize(
    ("model", "tp", "copies"), [("Llama-3.1-8B", "16", "2 copies"), ("DeepSeek-V3", "8", "8 copies")]
)
def test_replication_is_shown_when_gpus_outnumber_kv_heads(model, tp, copies):
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params.update({"model": model, "tp": tp, "view": "Memory per GPU", "gpu": "H200 SXM"})
    app.run()
    assert f"the cluster stores {copies} of the cache" in explained(app)


def test_hand_typed_plain_link_values_restore_the_scenario():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params.update(
        {"model": "llama-3.1-8b", "w_bits": "8", "kv_dtype": "fp8", "gpu": "h200-sxm", "block": "32", "compare": "gpt2"}
    )
    app.run()
    assert not app.exception and not app.warning
    assert app.selectbox(key="model").value == "llama-3.1-8b" and app.selectbox(key="w_bits").value == 8
    assert app.selectbox(key="gpu").value == "h200-sxm" and app.selectbox(key="kv_dtype").value == "fp8"
    assert app.multiselect(key="compare").value == ["gpt2"]
    open_fields(app)
    assert app.number_input(key="f_n_kv_heads").value == 8  # the preset named by its id fills the fields too
    dep = kv.Deployment(gpu=kv.gpus()["h200-sxm"], kv_dtype="fp8", weight_bits=8, block=32)
    open_section(app, "Model anatomy")
    assert metrics(app)["Weights at 8-bit"] == gb(kv.plan(P["llama-3.1-8b"], dep).weights_bytes)
    assert metrics(app)["KV per user"] == gb(kv.plan(P["llama-3.1-8b"], dep).kv_per_user)


def test_labels_the_page_wrote_into_links_still_work():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params.update({"w_bits": "4-bit", "gpu": "H200 SXM", "kv_dtype": "INT8", "model": "Llama-3.1-70B"})
    app.run()
    assert not app.warning
    assert app.selectbox(key="w_bits").value == 4 and app.selectbox(key="kv_dtype").value == "int8"
    assert app.selectbox(key="gpu").value == "h200-sxm" and app.selectbox(key="model").value == "llama-3.1-70b"


def test_unreadable_link_values_are_named_not_dropped_silently():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params.update(
        {"w_bits": "12", "context": "1e300", "gpu": "TPU", "f_gated_mlp": "maybe", "norm": "x", "utm_source": "mail"}
    )
    app.run()
    assert not app.exception
    text = re.sub(r"\\(.)", r"\1", " ".join(w.value for w in app.warning))  # as the reader sees the escaped text
    for named in (
        "w_bits** = “12”",
        "(16-bit, 8-bit, 4-bit)",
        "context** = “1e300”",
        "gpu** = “TPU”",
        "mlp** = “maybe”",
    ):
        assert named in text
    assert "norm" not in text and "utm_source" not in text  # parameters that are not the page's are left alone
    assert app.selectbox(key="w_bits").value == 16 and metrics(app)["KV per user"] == "17.18 GB"
    next(b for b in app.button if b.label == "Hide this message").click().run()
    assert not app.warning


def test_context_beyond_the_models_maximum_warns_and_still_computes(at):
    assert not at.warning  # the primer's 7B: 32K of its 128K
    at.selectbox(key="model").set_value("llama-2-7b").run()
    warning = " ".join(w.value for w in at.warning)
    assert "longer than Llama-2-7B's maximum context of 4,096 tokens" in warning
    assert metrics(at)["KV per user"] == gb(kv.kv_bytes_per_sequence(P["llama-2-7b"], 32768, block=16))
    at.number_input(key="context").set_value(4096).run()
    assert not at.warning


def test_a_custom_maximum_context_is_checked_and_compared_models_are_named(at):
    open_fields(at)
    at.number_input(key="f_max_context").set_value(16384).run()
    assert at.selectbox(key="model").value == "custom"
    assert "maximum context of 16,384 tokens" in " ".join(w.value for w in at.warning)
    at.multiselect(key="compare").set_value(["gemma-2-9b", "llama-3.1-8b"]).run()
    footnote = table_footnote(at, "Side by side")  # named under the table whose rows it concerns
    assert "Maximum context shorter than 32,768 tokens: Gemma-2-9B (8,192); its row still assumes" in footnote
    at.multiselect(key="compare").set_value(["gemma-2-9b", "mistral-7b"]).run()
    assert "Gemma-2-9B (8,192), Mistral-7B-v0.1 (32,768)" not in table_footnote(at, "Side by side")  # 32K fits
    at.number_input(key="context").set_value(65536).run()
    assert "⚠" not in captions(at) and "Gemma-2-9B (8,192), Mistral-7B-v0.1 (32,768); their rows" in table_footnote(
        at, "Side by side"
    )


def _in_page_order(node: object) -> Iterator[object]:
    """Every element under `node`, in the order the page shows them (a phone stacks columns in this order)."""
    for child in getattr(node, "children", {}).values():
        yield child
        yield from _in_page_order(child)


def test_model_fields_read_row_by_row_in_their_own_order(at):
    open_fields(at)
    shown_keys = [key for node in _in_page_order(at.main) if (key := getattr(node, "key", None) or "").startswith("f_")]
    assert shown_keys == [FIELD_KEYS[name] for name in FIELD_NAMES]  # Layers, width, heads, KV heads, head size, …


def field_widgets(at: AppTest) -> list[str]:
    return [w.key for w in [*at.number_input, *at.checkbox, *at.selectbox] if (w.key or "").startswith("f_")]


def test_a_shared_custom_link_works_while_the_fields_are_closed():
    app = AppTest.from_file(PAGE, default_timeout=60)
    link = {"model": "Custom (fields below)", "f_n_layers": "40", "f_max_context": "16384", "f_norm": "layernorm"}
    app.query_params.update(link)
    app.run()
    assert not app.exception and field_widgets(app) == []  # the expander is closed: its 26 fields are not drawn
    assert metrics(app)["KV per user"] == gb(2 * 40 * 32768 * 32 * 128 * 2)
    assert "maximum context of 16,384 tokens" in " ".join(w.value for w in app.warning)
    app.number_input(key="users").set_value(8).run()
    assert {key: app.query_params.get(key) for key in link} == link  # the address keeps reproducing the scenario
    open_fields(app)
    assert app.number_input(key="f_n_layers").value == 40 and app.selectbox(key="f_norm").value == "layernorm"


def test_an_edited_field_survives_closing_and_reopening_and_stays_in_the_link(at):
    open_fields(at)
    at.number_input(key="f_n_kv_heads").set_value(8).run()
    open_fields(at, False)
    assert field_widgets(at) == [] and at.selectbox(key="model").value == "custom"
    assert metrics(at)["KV per user"] == "4.29 GB"
    at.number_input(key="context").set_value(65536).run()
    assert metrics(at)["KV per user"] == "8.59 GB"
    assert at.query_params["f_n_kv_heads"] == "8" and at.query_params["model"] == "Custom (fields below)"
    open_fields(at)
    assert at.number_input(key="f_n_kv_heads").value == 8

    shared = AppTest.from_file(PAGE, default_timeout=60)  # the link as the page wrote it, opened elsewhere
    shared.query_params.update({**at.query_params, "context": "65536"})
    shared.run()
    assert field_widgets(shared) == [] and metrics(shared)["KV per user"] == "8.59 GB"

    at.selectbox(key="model").set_value("llama-3.1-8b").run()  # a preset's name implies its fields
    assert not any(key.startswith("f_") for key in at.query_params)


def test_sections_below_the_table_are_drawn_when_opened(at):
    assert "Parameters computed from the config" not in metrics(at)  # only a picked section is drawn
    open_section(at, "Sources")
    text = "\n".join(m.value for m in at.markdown)
    assert "**Sources of every preset figure and default**" in text and "**Doubling the context**" not in text
    assert "GPUs for this workload" not in metrics(at)
    assert f"**{kv.gpus()['h100-sxm'].name}**" in text
    open_config(at)
    at.text_area(key="kv_paste").input('{"num_hidden_layers": 40}').run()
    at.session_state[OWN_MODEL_OPEN] = False
    at.run()
    assert not at.text_area
    assert open_config(at).text_area(key="kv_paste").value == '{"num_hidden_layers": 40}'  # kept while closed


def test_gpus_per_copy_and_shared_prompt_come_from_the_link_and_stay_in_it_while_closed():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params.update({"tp": "2", "prefix": "4096", "users": "8"})
    app.run()
    assert not [w for w in app.selectbox if w.key == "tp"] and not [w for w in app.number_input if w.key == "prefix"]
    dep = kv.Deployment(gpu=kv.gpus()["h100-sxm"], price_per_gpu_hour=H100, tp=2, prefix=4096, users=8)
    assert metrics(app)["GPUs needed"] == f"{kv.plan(P['primer-7b'], dep).gpus_needed:,}"
    assert metrics(app)["Users per model copy"] == f"{kv.plan(P['primer-7b'], dep).max_users:,}"
    open_engine(app)
    assert app.selectbox(key="tp").value == 2 and app.number_input(key="prefix").value == 4096
    app.selectbox(key="tp").set_value(4).run()
    app.session_state[ENGINE_OPEN] = False
    app.run()
    app.number_input(key="context").set_value(65536).run()
    assert {key: app.query_params.get(key) for key in ("tp", "prefix")} == {"tp": "4", "prefix": "4096"}
    app.session_state[ENGINE_OPEN] = True
    app.run()
    app.selectbox(key="tp").set_value("auto").run()
    assert "tp" not in app.query_params  # the default leaves the link


def test_engine_settings_stay_in_the_link_while_their_expander_is_closed():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params.update({"util": "0.8", "eff": "0.5"})
    app.run()
    assert not app.slider  # the engine settings are drawn only while their expander is open
    dep = kv.Deployment(gpu=kv.gpus()["h100-sxm"], price_per_gpu_hour=H100, utilisation=0.8, efficiency=0.5)
    plan = kv.plan(P["primer-7b"], dep)
    assert metrics(app)["Users per model copy"] == f"{plan.max_users:,}"
    assert metrics(app)[FULL_BATCH] == f"${plan.cost_per_million:,.2f}"
    app.session_state[ENGINE_OPEN] = True
    app.run()
    assert app.slider(key="util").value == 0.8 and app.slider(key="eff").value == 0.5
    app.selectbox(key="block").set_value(32).run()
    app.session_state[ENGINE_OPEN] = False
    app.run()
    app.number_input(key="users").set_value(8).run()
    assert {key: app.query_params.get(key) for key in ("util", "eff", "block")} == {
        "util": "0.8",
        "eff": "0.5",
        "block": "32",
    }
    assert (
        metrics(app)["Users per model copy"]
        == f"{kv.plan(P['primer-7b'], replace(dep, block=32, users=8)).max_users:,}"
    )


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
    assert f"the plan runs {sizing.batch} users per copy" in text and "best case for this load" in text
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
    table = at.dataframe[-2].value
    assert len(table) == len(cal.points()) and list(table["error"]) == [round(100 * e, 1) for e in errs]
    assert all(source.startswith("https://") for source in table["source"])
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
    open_section(at, "Budget")
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
    app = AppTest.from_file(PAGE, default_timeout=60)
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
    app = AppTest.from_file(PAGE, default_timeout=60)
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
