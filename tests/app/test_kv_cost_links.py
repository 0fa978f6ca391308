"""The cost page under hostile and unusual links, round two: links that used to crash the page, values that used to be
read as other values, an empty comparison, and a custom model's name."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.app.helpers import metric_cards, shown

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "kv_cost.py")
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
    """The page opened by a link; it must not raise."""
    at = AppTest.from_file(PAGE, default_timeout=60)
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
