"""The budget over months and ways to pay, against hand-computed figures: owning (depreciation, power, colocation,
operations), reserved terms, growth, autoscaling and the API; the presets' sources and the refusals."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from core.plan import budget as bg
from core.plan import daily as dl
from core.plan import search as se
from core.plan import serving as sv
from core.plan.model_config import presets

CAP = dl.Capacity(
    requests_per_s_copy=1.0,
    gpus_per_copy=2,
    price_per_gpu_hour=2.0,
    prefill_share=0.2,
    prompt_tokens=1000,
    output_tokens=250,
)
CURVE = np.array([0.5] * 12 + [1.0] * 12)  # mean 0.75
OWN = bg.Owning(
    server_price=240_000,
    gpus_per_server=8,
    depreciation_years=4,
    gpu_watts=500,
    server_watts=1000,
    pue=1.5,
    dollars_per_kwh=0.1,
    colo_per_kw_month=200,
    ops_share=0.1,
)
API = sv.ApiPrice("test", "Test", "test model", "2026-01", 1.0, 2.0, "https://example.org")
PAY = bg.Payment(reserved_1y_discount=0.35, reserved_3y_discount=0.5, owning=OWN, api=API)
MODEL = "llama-3.1-8b"
LOAD = sv.Workload(requests_per_minute=150, prompt_tokens=1000, output_tokens=250)


@pytest.fixture(scope="module")
def plan():
    return se.search(presets()[MODEL], LOAD, gpus=["h100-sxm"]).plan


NO_GROWTH, FIXED = bg.Growth(), dl.Fleet()


def run(plan, growth=NO_GROWTH, fleet=FIXED, payment=PAY, load=LOAD, capacity=CAP):
    return bg.budget(presets()[MODEL], MODEL, load, plan, CURVE, fleet, growth, payment, capacity=capacity)


def test_one_month_of_each_way_by_hand(plan):
    b = run(plan)
    assert b.months == 12 and b.copies_by_month.tolist() == [3] * 12 and b.gpus_by_month.tolist() == [6] * 12
    assert b.servers_by_month.tolist() == [1] * 12
    # 3 copies × 24 h × 730/24 days = 2,190 copy-hours × 2 GPUs × $2
    assert b.copy_hours_by_month[0] == pytest.approx(2190.0) and b.monthly["on-demand"][0] == pytest.approx(8760.0)
    assert b.monthly["reserved-1y"][0] == pytest.approx(6 * 730 * 2 * 0.65)  # 5,694
    assert b.monthly["reserved-3y"][0] == pytest.approx(6 * 730 * 2 * 0.5)  # 4,380
    # owning: 240,000 / 48 = 5,000; IT 4 kW (6 × 500 W + 1,000 W); power 4 × 1.5 × 0.1 × 730 = 438; colo 800; +10%
    assert b.monthly["own"][0] == pytest.approx((5000 + 438 + 800) * 1.1)  # 6,861.8
    # API: the mean rate 112.5 a minute every hour: 4,927,500 requests, $1 / $2 per 1M
    assert b.input_tokens_by_month[0] == pytest.approx(4_927_500 * 1000)
    assert b.monthly["api"][0] == pytest.approx(4927.5 + 2463.75)
    assert b.cumulative["own"][-1] == pytest.approx(12 * 6861.8) and b.total("api") == pytest.approx(12 * 7391.25)
    assert b.cheapest == "reserved-3y" and b.cheapest_by_year == ["reserved-3y"] and b.copy_added_months == []
    # break-even: the API costs $1.2 per 1M tokens at this mix; the cheapest self-hosted way costs $4,380 a month
    assert b.break_even_way == "reserved-3y"
    assert b.break_even_tokens_per_month == pytest.approx(4380 / 1.2e-6)
    assert b.realistic_per_m_output == pytest.approx(1e6 * 72 * 4 * 0.8 / (162_000 * 250))
    assert "cloud reserved, 3 years costs $52,560 in all" in b.sentence
    assert "its 3-year term commits 24 months more than this horizon shows" in b.sentence
    assert b.gpu_type_change_month is None


def test_autoscaling_pays_on_demand_only_for_the_copies_it_runs(plan):
    b = run(plan, fleet=dl.Fleet(autoscale=True, min_copies=1, scale_up_minutes=30))
    assert b.copy_hours_by_month[0] == pytest.approx(60.5 * 730 / 24)
    assert b.monthly["on-demand"][0] == pytest.approx(60.5 * 730 / 24 * 4)
    assert b.monthly["reserved-1y"][0] == pytest.approx(6 * 730 * 2 * 0.65)  # the busiest hour's GPUs, all month


def test_growth_compounds_and_adds_copies_and_servers(plan):
    b = run(plan, growth=bg.Growth(10.0, 24))
    k = np.arange(24)
    assert b.rpm_by_month == pytest.approx(150 * 1.1**k)
    expected = np.ceil(2.5 * 1.1**k - 1e-9).astype(int)
    assert b.copies_by_month.tolist() == expected.tolist()
    assert b.copy_added_months == [m + 1 for m in range(1, 24) if expected[m] > expected[m - 1]]
    assert b.copy_added_months[0] == 3  # 2.5 × 1.1² = 3.025 requests/s needs a fourth copy
    assert b.servers_by_month.tolist() == np.ceil(expected * 2 / 8).astype(int).tolist()
    assert b.monthly["api"][5] == pytest.approx(b.monthly["api"][0] * 1.1**5)
    assert len(b.cheapest_by_year) == 2
    for way in bg.WAYS:
        assert b.cumulative[way] == pytest.approx(np.cumsum(b.monthly[way]))


def test_servers_are_never_sold_when_traffic_falls(plan):
    b = run(plan, growth=bg.Growth(-20.0, 12), load=replace(LOAD, requests_per_minute=600), capacity=CAP)
    assert b.gpus_by_month[0] == 20 and b.gpus_by_month[-1] < 8
    assert b.servers_by_month.tolist() == [3] * 12


def test_a_grown_rate_that_the_search_would_serve_on_another_gpu_is_named():
    config, load = presets()["llama-3.1-70b"], sv.Workload(300, 1500, 400, 2, 20)
    plan = se.search(config, load).plan
    growth = bg.Growth(5.0, 12)
    pay = bg.default_payment(plan.gpu.id, config, "llama-3.1-70b", load)
    b = bg.budget(config, "llama-3.1-70b", load, plan, dl.shape("24-7"), dl.Fleet(), growth, pay)
    expected = None
    for m in b.copy_added_months:
        pick = se.search(config, replace(load, requests_per_minute=float(b.rpm_by_month[m - 1]))).plan
        if pick.gpu.id != plan.gpu.id:
            expected = (m, pick.gpu.id)
            break
    assert (b.gpu_type_change_month, b.gpu_type_change_to) == (expected or (None, None))
    if expected:
        assert f"from month {expected[0]} the planner would choose" in b.sentence


@pytest.mark.parametrize(
    ("growth", "words"),
    [
        (bg.Growth(-100.0), "fall of 100% or more"),
        (bg.Growth(float("inf")), "finite percentage"),
        (bg.Growth(5.0, 18), "horizon must be 12, 24, 36"),
    ],
)
def test_a_bad_growth_is_named(plan, growth, words):
    assert words in bg.growth_problem(growth)
    with pytest.raises(ValueError, match=words):
        run(plan, growth=growth)


def test_every_refused_payment_field_is_named(plan):
    bad = bg.Payment(
        reserved_1y_discount=1.0,
        reserved_3y_discount=-0.1,
        owning=replace(OWN, server_price=0, pue=0.9, dollars_per_kwh=math.nan, ops_share=-1, gpus_per_server=0),
        api=replace(API, output_per_m=0.0),
    )
    problems = bg.payment_problem(bad)
    for words in (
        "reserved 1-year discount",
        "reserved 3-year discount",
        "price per server",
        "PUE",
        "electricity $ per kWh",
        "operations share",
        "GPUs per server",
        "API $ per 1M output tokens",
    ):
        assert any(words in p for p in problems), words
    assert len(problems) == 8 and bg.payment_problem(PAY) == []
    with pytest.raises(ValueError, match="price per server"):
        run(plan, payment=bad)


def test_every_preset_has_a_source_or_says_it_is_your_figure():
    config, load = presets()["llama-3.1-70b"], sv.Workload(300, 1500, 400, 2, 20)
    for gpu in ("a100-40", "a100-80", "h100-sxm", "h200-sxm", "l40s", "l4", "mi300x"):
        found = bg.sources(gpu)
        assert set(found) >= {"reserved_1y_discount", "server_price", "gpu_watts", "pue", "ops_share"}
        for key, s in found.items():
            assert s.value > 0 and s.text, key
            if s.status == "published":
                assert "http" in s.text, key
            else:
                assert "your figure" in s.text, key
        pay = bg.default_payment(gpu, config, "llama-3.1-70b", load)
        assert bg.payment_problem(pay) == [] and pay.owning.server_price == found["server_price"].value
    assert bg.sources("h100-sxm")["server_price"].status == "published"
    h200 = bg.sources("h200-sxm")["server_price"]
    assert h200.status == "assumption" and "scaled" in h200.text
    assert bg.source_text("pue", "l4").startswith("Uptime Institute")


def test_the_months_copies_are_added_read_as_months_and_a_count_never_as_a_month_number():
    from core.plan.budget import _months_text

    assert _months_text([3]) == "month 3"
    assert _months_text([3, 4, 6]) == "months 3, 4 and 6"
    assert _months_text(list(range(3, 40, 3))) == "months 3, 6, 9, 12, 15, 18 and 7 later months"
