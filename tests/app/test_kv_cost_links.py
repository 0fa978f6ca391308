"""The cost page under hostile and unusual links, round two: links that used to crash the page, values that used to be
read as other values, an empty comparison, and a custom model's name."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.plan.model_config import MAX_CONFIG_BYTES, parse_config_text
from tests.app.helpers import metric_cards, shown
from ui.kv_cost.settings import CALCULATOR_OPEN_KEY

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "kv_cost.py")
QWEN2 = ROOT / "tests" / "data" / "good_configs" / "qwen2_7b_text.json"
TINY = {
    "model": "custom",
    "f_n_layers": "2",
    "f_d_model": "16",
    "f_n_heads": "4",
    "f_n_kv_heads": "4",
    "f_head_dim": "4",
}
HUGE = {
    "model": "custom",
    "f_n_layers": "10000",
    "f_d_model": "1000000",
    "f_n_heads": "100000",
    "f_head_dim": "100000",
    "f_n_kv_heads": "100000",
}


def open_link(link: dict[str, str | list[str]]) -> AppTest:
    """The page opened by a link, its memory calculator open; it must not raise."""
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state[CALCULATOR_OPEN_KEY] = True
    at.query_params.update(link)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def notice(at: AppTest) -> str:
    """The page's one link notice, as the reader sees it ('' when there is none)."""
    return shown("\n".join(w.value for w in at.warning if "could not use" in w.value))


def test_case1_a_model_under_a_kilobyte_per_token_shows_its_headline():
    at = open_link(TINY)  # 2 × 2 layers × 4 KV heads × 4 numbers × 2 bytes = 128 bytes per token
    card = next(c for c in metric_cards(at) if c["metric-label"] == "KV per token")
    assert card["metric-value"] == "128 bytes" and card["metric-note"].startswith("= 0.12 KiB (128 bytes)")


def test_case2_sources_open_for_a_custom_model():
    at = open_link({"model": "custom", "kv_section": "Sources"})
    text = "\n".join(m.value for m in at.markdown)
    assert "Sources of every preset figure and default" in text and "H100 SXM" in text


def test_case3_anatomy_opens_for_a_model_beyond_64_bit_counts():
    at = open_link(HUGE | {"kv_section": "Model anatomy"})
    assert any(m.label == "Parameters computed from the config" for m in at.metric)
    assert len(at.dataframe) >= 2


def test_case6_values_not_exactly_an_allowed_form_are_refused_and_named():
    for link in ({"tp": "1.6"}, {"tp": "3-2"}, {"tp": "-1"}, {"w_bits": "1.6"}, {"context": "3,2"}, {"users": "1_6"}):
        at = open_link(link)
        (key, raw), text = next(iter(link.items())), notice(at)
        assert f"**{key}** = “{raw}”" in text, (link, text)
        assert "tp" not in at.query_params and "w_bits" not in at.query_params  # the defaults are used
        assert at.number_input(key="context").value == 32768 and at.number_input(key="users").value == 16


def test_case6_model_fields_beside_a_preset_make_a_custom_model_based_on_it():
    at = open_link({"model": "llama-3.1-8b", "f_n_layers": "64"})
    assert at.selectbox(key="model").value == "custom"
    assert at.query_params["f_n_layers"] == "64" and at.query_params["f_n_kv_heads"] == "8"  # the preset's own
    assert at.query_params["model_name"] == "Llama-3.1-8B (edited)"
    assert any("### Llama-3.1-8B (edited) on H100 SXM" in m.value for m in at.markdown)
    card = next(c for c in metric_cards(at) if c["metric-label"] == "KV per user")
    assert card["metric-value"] == f"{2 * 64 * 8 * 128 * 2 * 32768 / 1e9:,.2f} GB"


def test_case7_an_empty_comparison_round_trips_as_none():
    at = open_link({"compare": ""})
    assert at.multiselect(key="compare").value == [] and not notice(at)
    assert at.query_params["compare"] == ""
    rows = [row for row in at.get("html") if "Side by side" in row.proto.body]
    assert rows and rows[0].proto.body.count("<tr>") == 2  # the header and the current model alone


def paste(at: AppTest, text: str) -> AppTest:
    """Paste a config.json into "Your own model" and use it."""
    at.session_state["kv_own_model_open"] = True
    at.run()
    at.text_area(key="kv_paste").input(text)
    next(b for b in at.button if b.label == "Use pasted config").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_case9_a_pasted_models_name_titles_the_page_and_travels_in_the_link():
    config = json.loads(QWEN2.read_text())
    at = paste(open_link({}), json.dumps(config | {"_name_or_path": "Qwen/Qwen2.5-7B"}))
    assert any("### Qwen/Qwen2.5-7B on H100 SXM" in m.value for m in at.markdown)
    assert at.query_params["model_name"] == "Qwen/Qwen2.5-7B"  # the briefing's reopen link is this address
    reopened = open_link(dict(at.query_params))
    assert any("### Qwen/Qwen2.5-7B on H100 SXM" in m.value for m in reopened.markdown) and not notice(reopened)
    nameless = paste(open_link({}), QWEN2.read_text())
    assert any("### qwen2 on H100 SXM" in m.value for m in nameless.markdown)  # its model_type, not "Pastedconfig"
    hostile = paste(
        open_link({}), json.dumps(config | {"_name_or_path": "=cmd|' /C calc'!A0 [x](www.example.invalid)"})
    )
    title = next(m.value for m in hostile.markdown if "### " in m.value)
    assert "[x]" not in title and "www." not in title and "|" not in title


def test_case9_an_uploaded_config_is_named_by_its_contents_not_its_file():
    assert parse_config_text(QWEN2.read_bytes(), name="config.json").config.name == "qwen2"
    assert parse_config_text(b'{"num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": 2}').config.name == (
        "your model"
    )


def test_case9_a_named_custom_link_keeps_its_name_in_the_title_and_the_address():
    at = open_link(TINY | {"model_name": "Tiny test (edited)"})
    assert any("### Tiny test (edited) on H100 SXM" in m.value for m in at.markdown) and not notice(at)
    assert at.query_params["model_name"] == "Tiny test (edited)"
    refused = open_link(TINY | {"model_name": "[click](https://example.invalid)"})
    assert "**model_name** = “[click]" in notice(refused) and "model_name" not in refused.query_params
    assert any("### your model on H100 SXM" in m.value for m in refused.markdown)


def test_case4_a_paste_over_the_upload_limit_is_refused_and_nothing_kept():
    at = open_link({})
    at.session_state["kv_own_model_open"] = True
    at.run()
    assert at.text_area(key="kv_paste").max_chars == MAX_CONFIG_BYTES + 1  # the browser cuts a paste there
    big = json.dumps(json.loads(QWEN2.read_text()) | {"notes": "x" * MAX_CONFIG_BYTES})
    at.text_area(key="kv_paste").set_value(big).run()  # as a browser sends it, or a client that ignores the limit
    assert at.text_area(key="kv_paste").value == "" and at.session_state["kv_paste"] == ""
    errors = shown(" ".join(e.value for e in at.error))
    assert f"longer than {MAX_CONFIG_BYTES:,} characters, the most this box reads" in errors
    assert at.selectbox(key="model").value == "primer-7b"
    fits = json.dumps(json.loads(QWEN2.read_text()) | {"notes": "x" * (MAX_CONFIG_BYTES - 1000)})
    at.text_area(key="kv_paste").input(fits).run()
    next(b for b in at.button if b.label == "Use pasted config").click().run()
    assert at.selectbox(key="model").value == "custom" and not at.error


def test_case4_the_server_takes_no_message_larger_than_the_app_needs():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert 3 <= config["server"]["maxMessageSize"] <= 16  # 1,000,000 pasted characters fit; 200 MB does not


def test_case5_a_link_with_a_query_is_read_each_time_it_opens_the_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/kv_cost.py").run()  # the reader has been on the cost page, its calculator open ...
    at.session_state[CALCULATOR_OPEN_KEY] = True
    at.run()
    at.number_input(key="users").set_value(64).run()
    at.switch_page("pages/overview.py")
    at.query_params.clear()
    at.run()
    at.switch_page("pages/kv_cost.py")  # ... then follows the overview's link to it
    at.query_params.update({"model": "llama-3.1-70b", "gpu": "h100-sxm", "context": "32768", "tp": "4"})
    at.run()
    assert not at.exception and at.selectbox(key="model").value == "llama-3.1-70b"
    assert at.session_state["tp"] == 4 and at.number_input(key="users").value == 16  # the link's scenario, whole
    assert dict(at.query_params) == {"model": "Llama-3.1-70B", "tp": "4", "calculator": "open"}
    at.switch_page("pages/overview.py")
    at.query_params.clear()
    at.run()
    at.switch_page("pages/kv_cost.py")  # opened with no query: the session's scenario stays
    at.query_params.clear()
    at.run()
    assert at.selectbox(key="model").value == "llama-3.1-70b" and at.session_state["tp"] == 4
