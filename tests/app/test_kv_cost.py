"""The KV-cache cost calculator page in Streamlit's AppTest: defaults, every control, the URL, bad input, the charts."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.plan import kv_cache as kv
from core.plan.model_config import FIELD_NAMES, param_count
from tests.app.helpers import numbers as values
from tests.app.helpers import shown, table_downloads, table_footnote
from tests.app.kv_cost_page import (
    H100,
    PAGE,
    QWEN2_CONFIG,
    ROOT,
    P,
    captions,
    comparison,
    explained,
    figures,
    formula_html,
    formula_lines,
    gb,
    metrics,
    open_config,
    open_engine,
    open_fields,
    open_section,
    with_calculator,
)
from ui.kv_cost.numbers import COST_COLUMN as FULL_BATCH
from ui.kv_cost.own_model import FIELD_KEYS
from ui.kv_cost.settings import CALCULATOR_OPEN_KEY, ENGINE_OPEN, OWN_MODEL_OPEN, SECTION


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
    dotted = sorted(values(t["y"])[0] for t in spec["data"] if t.get("line", {}).get("dash") == "dot")
    labels = sorted((10 ** a["y"], a) for a in spec["layout"]["annotations"] if "bgcolor" in a)
    assert kv.gpus()[gpu].memory_gb in dotted
    assert [size for size, _ in labels] == pytest.approx(dotted)  # one label on each GPU's dotted line
    x_min = np.log10(min(values(models[0]["x"])))
    assert all(a["x"] == pytest.approx(x_min) and a["xanchor"] == "left" for _, a in labels)  # at the short end ...
    assert max(values(m["y"])[0] for m in models) < labels[0][0]  # ... where every model's line is below them all
    assert all(a["bgcolor"].startswith("rgba(255,255,255") for _, a in labels)  # legible where the marker crosses
    edges = [0.0, *(np.log10(size) for size, _ in labels), np.inf]  # the gaps between dotted lines, in decades
    taken: dict[int, int] = {}  # gap -> labels in it: above its line (the gap over it) or below it (the gap under)
    for index, (size, label) in enumerate(labels):
        above = label["yanchor"] == "bottom"
        if not above:
            assert np.log10(labels[index + 1][0] / size) < 0.35  # below only when the next size is close above
        gap = index + 1 if above else index
        taken[gap] = taken.get(gap, 0) + 1
    for gap, count in taken.items():  # two labels share a gap only at its two ends, and only if both fit
        assert count == 1 or edges[gap + 1] - edges[gap] >= 0.5, [(s, a["yanchor"]) for s, a in labels]


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
    open_section(at, "Memory levers")
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
    app = with_calculator(AppTest.from_file(PAGE, default_timeout=60))
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


def test_the_memory_calculator_opens_closed_and_keeps_its_values_while_closed():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.run()
    assert not app.exception
    assert [w.key for w in app.number_input if w.key in ("context", "users", "price")] == []  # drawn only when open
    assert any(c.value.startswith("Words on this page:") for c in app.caption)
    app.session_state[CALCULATOR_OPEN_KEY] = True
    app.run()
    app.selectbox(key="kv_dtype").set_value("fp8").run()
    app.number_input(key="users").set_value(40).run()
    app.multiselect(key="compare").set_value(["llama-3.1-8b"]).run()
    app.session_state[CALCULATOR_OPEN_KEY] = False
    app.run()
    assert [w.key for w in app.number_input if w.key == "users"] == []
    assert {k: app.query_params.get(k) for k in ("kv_dtype", "users", "compare")} == {
        "kv_dtype": "FP8",
        "users": "40",
        "compare": "Llama-3.1-8B",
    }
    assert "calculator" not in app.query_params
    app.session_state[CALCULATOR_OPEN_KEY] = True
    app.run()
    assert app.selectbox(key="kv_dtype").value == "fp8" and app.number_input(key="users").value == 40
    assert app.multiselect(key="compare").value == ["llama-3.1-8b"]
    assert app.query_params["calculator"] == "open"


@pytest.mark.parametrize(
    ("link", "opened"),
    [
        ({"context": "8192"}, True),
        ({"calculator": "open"}, True),
        ({"rpm": "300"}, False),
        ({"calculator": "x"}, False),
    ],
)
def test_a_link_opens_the_calculator_when_it_holds_the_calculators_values(link, opened):
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params.update(link)
    app.run()
    assert any(w.key == "context" for w in app.number_input) is opened
    if link == {"calculator": "x"}:
        assert any("**calculator** = “x”" in w.value for w in app.warning)


def test_the_calculator_is_open_again_after_a_visit_to_another_page():
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    app.run()
    app.switch_page("pages/kv_cost.py").run()
    app.session_state[CALCULATOR_OPEN_KEY] = True
    app.run()
    app.switch_page("pages/overview.py").run()
    app.switch_page("pages/kv_cost.py").run()
    assert any(w.key == "context" for w in app.number_input)  # open as the reader left it
