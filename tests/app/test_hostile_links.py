"""Shared links are untrusted input: random links built from each page's own parameters with hostile values.

For every page: the link opens with no exception, no rendered markdown (text, captions, messages) holds a live link
or image pointing at the payload's address, no message echoes a 10,000-character value whole, and every parameter
whose value could not be used is named in the page's one notice.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from tests.app.helpers import shown
from ui.elements.safe_text import plain

ROOT = Path(__file__).resolve().parents[2]
HOST = "example.invalid"
HOSTILE = (
    f"[click](https://{HOST}/x)",
    f"![p](https://{HOST}/p.png)",
    f"`x`[click](https://{HOST}/x)",
    f"https://{HOST}/bare",
    f"www.{HOST}",
    f"<https://{HOST}/angle>",
    f"mail@{HOST}",
    "<script>alert(1)</script>",
    "²",
    "٣",
    "inf",
    "-inf",
    "nan",
    "1e308",
    "12345678901234567890",
    "zzz",
    "L3H3",
    "x" * 10_000,
)
PAGES = {
    "pages/how_it_learned.py": ["learned_step", "learned_prompt", "learned_section"],
    "pages/qkv_walkthrough.py": [
        "qkv_sentence",
        "qkv_scale",
        "qkv_mask",
        "qkv_section",
        "qkv_step",
        "qkv_temp",
        "qkv_decoding",
        "qkv_top_k",
        "qkv_top_p",
        "qkv_seed",
        "qkv_draws",
        "qkv_prefill",
        "qkv_extra",
        "qkv_gen_step",
        "qkv_size_L",
        "qkv_size_T",
        "qkv_size_h",
        "qkv_size_d_k",
        "qkv_size_bytes_per_element",
        "qkv_X",
        "qkv_W_Q",
        "qkv_W_K",
        "qkv_W_V",
        "qkv_W_O",
    ],
    "pages/ablation_lab.py": [
        "heads",
        "off",
        "prompt",
        "prompt_text",
        "view",
        "beyond",
        "neuron_mode",
        "patch_target",
        "patch_source",
    ],
    "pages/cnn_vs_head.py": ["preset", "img", "custom", "k1", "k2", "k3", "slide", "win", "view"],
    "pages/two_layer_trace.py": ["trace_prompt", "trace_tau", "trace_layer", "trace_step", "trace_view"],
    "pages/kv_cost.py": [
        "model",
        "compare",
        "kv_dtype",
        "w_bits",
        "gpu",
        "tp",
        "view",
        "context",
        "users",
        "prefix",
        "price",
        "util",
        "block",
        "eff",
        "rpm",
        "prompt",
        "ttft",
        "hours",
        "kv_section",
    ],
}
# A link or image in markdown syntax, or an angle-bracket autolink, to the payload's host: escaped characters cannot
# start one, so they are removed first.
LINK_SYNTAX = re.compile(r"(\]\(|<)[^\s)]*" + re.escape(HOST), re.IGNORECASE)
# A bare address the renderer links by itself (GitHub autolinks), which it does even when its characters are escaped.
AUTOLINK = re.compile(r"(https?://\S*|(^|[\s*_~(])www\.|@)" + re.escape(HOST), re.IGNORECASE)


def rendered_markdown(at: AppTest) -> list[str]:
    """Every body the page renders as markdown: text, captions and the four kinds of message."""
    elements = [*at.markdown, *at.caption, *at.warning, *at.error, *at.info, *at.success]
    return [str(element.value) for element in elements]


def live_links(body: str) -> list[str]:
    """Live links to the payload's host in a markdown body."""
    syntax = [m.group(0) for m in LINK_SYNTAX.finditer(re.sub(r"\\.", "", body))]
    return syntax + [m.group(0) for m in AUTOLINK.finditer(shown(body))]


def open_link(page: str, link: dict[str, list[str]]) -> AppTest:
    at = AppTest.from_file(str(ROOT / page), default_timeout=60)
    for key, values in link.items():
        at.query_params[key] = values if len(values) > 1 else values[0]
    at.run()
    return at


def links(page: str) -> st.SearchStrategy[dict[str, list[str]]]:
    """Up to four of the page's parameters, each with one to three hostile values."""
    values = st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=3)
    return st.dictionaries(st.sampled_from(PAGES[page]), values, min_size=1, max_size=4)


def check_page(page: str, link: dict[str, list[str]]) -> None:
    at = open_link(page, link)
    assert not at.exception, [e.value for e in at.exception]
    bodies = rendered_markdown(at)
    for body in bodies:
        assert not live_links(body), body[:300]
        assert "x" * 1000 not in body  # long values are echoed as a short excerpt
    notice = shown("\n".join(w.value for w in at.warning if "could not use" in w.value))
    for key in link:
        assert f"**{key}**" in notice, (key, notice[:500])


SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(links("pages/qkv_walkthrough.py"))
def test_qkv_hostile_links(link):
    check_page("pages/qkv_walkthrough.py", link)


@SETTINGS
@given(links("pages/ablation_lab.py"))
def test_ablation_hostile_links(link):
    check_page("pages/ablation_lab.py", link)


@SETTINGS
@given(links("pages/cnn_vs_head.py"))
def test_cnn_hostile_links(link):
    check_page("pages/cnn_vs_head.py", link)


@SETTINGS
@given(links("pages/two_layer_trace.py"))
def test_trace_hostile_links(link):
    check_page("pages/two_layer_trace.py", link)


@SETTINGS
@given(links("pages/how_it_learned.py"))
def test_learned_hostile_links(link):
    check_page("pages/how_it_learned.py", link)


@SETTINGS
@given(links("pages/kv_cost.py"))
def test_cost_hostile_links(link):
    check_page("pages/kv_cost.py", link)


def test_the_checker_sees_a_live_link():
    assert live_links(f"see [click](https://{HOST}/x)") and live_links(f"![p](https://{HOST}/p.png)")
    assert live_links(f"go to www.{HOST} now") and not live_links(r"\[click\]\(example\.invalid\/x\)")
    assert live_links(r"\[click\]\(https\:\/\/example\.invalid\/x\)")  # escaped, but still an autolink
    for payload in HOSTILE:
        assert not live_links(plain(payload)), payload


def test_reported_crashes_are_messages():
    """The links that used to replace a page with the error box: each opens with a message naming the value."""
    cases = {
        "pages/kv_cost.py": {"prefix": ["20000"], "view": ["Users vs context"]},  # halving the context: prefix ≥ half
        "pages/qkv_walkthrough.py": {"qkv_draws": ["²"], "qkv_decoding": ["Sample"], "qkv_section": ["Read-out"]},
    }
    for page, link in cases.items():
        at = open_link(page, link)
        assert not at.exception, [e.value for e in at.exception]
    for key in ("qkv_size_h", "qkv_top_k", "qkv_seed"):
        section = "KV cache" if key == "qkv_size_h" else "Read-out"
        at = open_link("pages/qkv_walkthrough.py", {key: ["inf"], "qkv_section": [section], "qkv_decoding": ["Sample"]})
        assert not at.exception and f"**{key}**" in shown(at.warning[0].value)
    at = open_link("pages/kv_cost.py", {"prefix": ["32768"]})
    assert any("fills the whole context" in e.value for e in at.error)


def test_silent_drops_are_named():
    """Too many compared models, unknown heads, absurd numbers and a ragged matrix are each named in the notice."""
    at = open_link(
        "pages/kv_cost.py", {"compare": ["llama-3.1-8b", "llama-3.1-70b", "mistral-7b", "deepseek-v3", "primer-7b"]}
    )
    assert "compare** names 5 models; at most 4" in shown(at.warning[0].value)
    assert len(at.multiselect(key="compare").value) == 4
    at = open_link("pages/ablation_lab.py", {"heads": ["L3H3", "zzz", "L2H1"]})
    notice = shown(at.warning[0].value)
    assert "“L3H3”" in notice and "“zzz”" in notice and at.session_state["heads"] == ["L2H1"]
    at = open_link(
        "pages/qkv_walkthrough.py",
        {"qkv_temp": ["1e308"], "qkv_draws": ["12345678901234567890"], "qkv_X": ["1,2,3;4,5"]},
    )
    notice = shown(at.warning[0].value)
    assert "qkv_temp** = “1e308”" in notice and "qkv_draws**" in notice
    assert "not a 3 × 5 matrix" in notice and "not a number" not in notice.split("qkv_X")[1]
    at = open_link("pages/cnn_vs_head.py", {"win": ["10"]})
    assert "win** = “10”: it is outside 1 … 9" in shown(at.warning[0].value)
    at = open_link("pages/two_layer_trace.py", {"trace_tau": ["inf"]})
    assert "trace_tau** = “inf”: it is not a finite number" in shown(at.warning[0].value)


def test_refused_numbers_and_choices_name_the_value_used_instead():
    """A refused number or choice is followed by the value the page shows in its place, not 'the default'."""
    cases = [
        ("pages/kv_cost.py", {"context": ["1e308"]}, "context** = “1e308”", "used 32,768 instead"),
        ("pages/kv_cost.py", {"gpu": ["zzz"]}, "gpu** = “zzz”", "used H100 SXM instead"),
        ("pages/kv_cost.py", {"kv_dtype": ["fp99"]}, "kv_dtype** = “fp99”", "used FP16 instead"),
        ("pages/kv_cost.py", {"f_norm": ["zzz"], "model": ["custom"]}, "f_norm** = “zzz”", "used rmsnorm instead"),
        ("pages/kv_cost.py", {"f_tied_embeddings": ["maybe"]}, "“maybe”", "used false instead"),
        ("pages/qkv_walkthrough.py", {"qkv_temp": ["1e308"]}, "qkv_temp** = “1e308”", "used 1 instead"),
        ("pages/qkv_walkthrough.py", {"qkv_size_T": ["-1"]}, "qkv_size_T** = “-1”", "used 32,768 instead"),
        ("pages/qkv_walkthrough.py", {"qkv_mask": ["maybe"]}, "qkv_mask** = “maybe”", "used on instead"),
        ("pages/two_layer_trace.py", {"trace_tau": ["inf"]}, "trace_tau** = “inf”", "used 1 instead"),
        ("pages/two_layer_trace.py", {"trace_layer": ["Layer 9"]}, "“Layer 9”", "used Layer 1 instead"),
        ("pages/cnn_vs_head.py", {"win": ["10"]}, "win** = “10”", "used 1 instead"),
        ("pages/ablation_lab.py", {"neuron_mode": ["half"]}, "neuron_mode** = “half”", "used zero instead"),
    ]
    for page, link, named, instead in cases:
        notice = shown(open_link(page, link).warning[0].value)
        assert named in notice and instead in notice.split(named)[1].split("\n")[0], (page, notice)
