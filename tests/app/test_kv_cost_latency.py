"""The cost page's "Latency under load" section (issue 26): it renders its two curves with the target and the
workload's rate per copy marked, its sentence states the break rate the engine computes from the plotted curve, it
says what is not simulated, and the engine choice (in the link, strictly read) changes the users per model copy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from core.plan import load_sizing as ls
from core.plan import serving as sv
from tests.app.helpers import charts, metric_cards, numbers

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "kv_cost.py")
SECTION = {"kv_section": "Latency under load"}


def open_link(link: dict[str, str]) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params.update(link)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _curve(at: AppTest) -> tuple[ls.Curve, dict]:
    """The plotted curve, rebuilt from the two charts' p50 and p95 lines."""
    figures = {c["key"]: c["figure"] for c in charts(at)}
    ttft, itl = figures["kv-latency-ttft"], figures["kv-latency-itl"]
    rates = numbers(ttft["data"][0]["x"])
    series = {name: numbers(fig["data"][i]["y"]) for name, fig in (("ttft", ttft), ("itl", itl)) for i in (0, 1)}
    t50, t95 = numbers(ttft["data"][0]["y"]), numbers(ttft["data"][1]["y"])
    i50, i95 = numbers(itl["data"][0]["y"]) / 1000, numbers(itl["data"][1]["y"]) / 1000
    points = tuple(
        ls.Point(float(r), float(a), float(b), float(c), float(d), bool(np.isfinite(b)))
        for r, a, b, c, d in zip(rates, t50, t95, i50, i95, strict=True)
    )
    assert series
    return ls.Curve(points, 0.0), figures


def sentence(at: AppTest) -> str:
    return next(m.value for m in at.markdown if "requests/s per copy" in m.value and "What you see" in m.value)


def test_the_section_draws_both_curves_with_the_target_and_the_rate_per_copy_marked():
    at = open_link(SECTION)
    curve, figures = _curve(at)
    assert len(curve.points) == ls.SWEEP_POINTS
    for key, target in (("kv-latency-ttft", 2.0), ("kv-latency-itl", 50.0)):
        fig = figures[key]
        assert [d["name"] for d in fig["data"][:2]] == ["p50", "p95"]
        assert numbers(fig["data"][2]["y"]).tolist() == [target, target]  # the latency target
        assert fig["layout"]["shapes"][0]["x0"] == 1.0  # 60 requests a minute on one copy: 1 request/s per copy
    caption = "\n".join(c.value for c in at.caption)
    assert "prefix caching, speculative decoding, disaggregated prefill" in caption


def test_the_sentence_states_the_break_rate_the_engine_computes_from_the_curve():
    at = open_link(SECTION | {"model": "llama-3.1-70b", "tp": "4"})
    curve, _ = _curve(at)
    rate, limit = ls.break_rate(curve, sv.Workload())
    assert rate is not None and rate > 0
    text = sentence(at)
    assert f"The target breaks at about {rate:,.2f} requests/s per copy" in text
    assert ("first token" if limit == "first token" else "gap between tokens") in text


def test_the_engine_in_the_link_changes_the_users_per_copy_and_stays_in_the_link():
    base = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "tp": "2", "context": "8192"}
    users = {}
    for engine in ("vllm", "trtllm"):
        at = open_link(base | {"engine": engine})
        users[engine] = next(c["metric-value"] for c in metric_cards(at) if c["metric-label"] == "Users per model copy")
    assert users["vllm"] != users["trtllm"]
    at = open_link(base | {"engine": "trtllm"} | SECTION)
    assert at.query_params["engine"] == "TensorRT-LLM" and at.query_params["kv_section"] == "Latency under load"
    assert "under TensorRT-LLM's rules" in "\n".join(m.value for m in at.markdown)


def test_an_engine_the_page_does_not_know_is_refused_and_named():
    at = open_link({"engine": "tgi"})
    notice = "\n".join(w.value for w in at.warning if "could not use" in w.value)
    assert "engine" in notice and "tgi" in notice and "vLLM" in notice


def test_a_target_no_number_of_copies_can_meet_says_so_on_the_page():
    at = open_link(SECTION | {"ttft": "0.01"})
    warning = "\n".join(w.value for w in at.warning)
    assert "No number of copies" in warning and "no number of copies can meet the target" in warning
