"""A day's traffic on a fixed or autoscaled fleet, against hand-computed copy-hours, utilisation and $ per 1M tokens;
the shapes asset, and the refusals of a bad curve or fleet."""

from __future__ import annotations

import numpy as np
import pytest

from core.plan import daily as dl
from core.plan import search as se
from core.plan import serving as sv
from core.plan.model_config import presets

# One copy carries 1 request/s (60 a minute), 2 GPUs at $2: a copy-hour costs $4. Prefill is 20% of the bill.
CAP = dl.Capacity(
    requests_per_s_copy=1.0,
    gpus_per_copy=2,
    price_per_gpu_hour=2.0,
    prefill_share=0.2,
    prompt_tokens=1000,
    output_tokens=250,
)
HALF_THEN_FULL = np.array([0.5] * 12 + [1.0] * 12)  # 75 then 150 requests a minute at a peak of 150


def test_the_three_shapes_are_documented_and_reach_their_peak():
    assert list(dl.SHAPES) == ["office-hours", "24-7", "overnight"]
    for name in dl.SHAPES:
        curve = dl.shape(name)
        assert curve.shape == (24,) and curve.max() == 1.0 and dl.curve_problem(curve) is None
        info = dl.shape_info(name)
        assert info["description"] and info["reason"] and "illustrative" in info["kind"]
    with pytest.raises(ValueError, match="unknown traffic shape"):
        dl.shape("weekends")


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ([0.8] * 24, "never reaches its peak (highest hour 0.8)"),
        ([1.0] * 23, "24 hourly values, not 23"),
        ([1.0] * 23 + [float("nan")], "hour 23 of the curve is not a finite number"),
        ([1.0] * 23 + [1.5], "hour 23 of the curve is 1.5"),
        ([1.0] * 23 + [-0.1], "between 0 and 1"),
        ("abc", "24 numbers"),
    ],
)
def test_a_bad_curve_is_named(values, words):
    assert words in dl.curve_problem(values)


@pytest.mark.parametrize(
    ("fleet", "words"),
    [
        (dl.Fleet(True, -1), "minimum copies"),
        (dl.Fleet(True, 3, 2), "below the minimum"),
        (dl.Fleet(True, 1, 0), "maximum copies"),
        (dl.Fleet(True, 1, None, 90.0), "scale-up delay"),
        (dl.Fleet(True, 1, None, float("nan")), "scale-up delay"),
    ],
)
def test_a_bad_fleet_is_named(fleet, words):
    assert words in dl.fleet_problem(fleet)
    with pytest.raises(ValueError, match=words):
        dl.day(CAP, 150.0, HALF_THEN_FULL, fleet)


def test_a_fixed_fleet_by_hand():
    d = dl.day(CAP, 150.0, HALF_THEN_FULL, dl.Fleet())
    # 2.5 requests/s at the peak: 3 copies all day = 72 copy-hours = $288
    assert d.hourly_copies.tolist() == [3] * 24 and d.peak_copies == 3
    assert d.copy_hours == 72.0 and d.cost == 288.0 and d.unmet_hours == 0
    assert d.served_requests == (75 * 12 + 150 * 12) * 60 == 162_000
    assert d.utilisation == pytest.approx(162_000 / (72 * 3600))  # 0.625
    assert d.mean_rpm == 112.5
    # best case: 288 $ over the peak all day (216,000 requests)
    assert d.best_per_m_output == pytest.approx(1e6 * 288 * 0.8 / (216_000 * 250))  # 4.2667
    assert d.best_per_m_input == pytest.approx(1e6 * 288 * 0.2 / (216_000 * 1000))  # 0.2667
    assert d.realistic_per_m_output == pytest.approx(1e6 * 288 * 0.8 / (162_000 * 250))  # 5.6889
    assert d.realistic_per_m_input == pytest.approx(1e6 * 288 * 0.2 / (162_000 * 1000))  # 0.3556
    assert "fixed fleet of 3 copies" in d.sentence and "62%" in d.sentence and "1.3×" in d.sentence
    assert "$5.69" in d.sentence and "$4.27" in d.sentence


def test_autoscaling_by_hand_with_a_warm_up():
    d = dl.day(CAP, 150.0, HALF_THEN_FULL, dl.Fleet(autoscale=True, min_copies=1, scale_up_minutes=30.0))
    # 1.25 requests/s -> 2 copies, 2.5 -> 3; one copy added at hour 12 pays half an hour of warm-up
    assert d.hourly_copies.tolist() == [2] * 12 + [3] * 12
    assert d.warmup_copy_hours == 0.5 and d.copy_hours == 60.5 and d.cost == 242.0
    assert d.utilisation == pytest.approx(162_000 / (60.5 * 3600))
    assert d.realistic_per_m_output == pytest.approx(1e6 * 242 * 0.8 / (162_000 * 250))  # 4.7802
    assert d.best_per_m_output == pytest.approx(1e6 * 288 * 0.8 / (216_000 * 250))
    assert "Autoscaling (1 to no maximum) runs 2–3 copies" in d.sentence and "60.5 copy-hours" in d.sentence


def test_the_warm_up_wraps_round_midnight_and_the_minimum_holds():
    curve = np.array([1.0] + [0.0] * 23)  # one busy hour after 23 empty ones
    d = dl.day(CAP, 150.0, curve, dl.Fleet(autoscale=True, min_copies=0, scale_up_minutes=12.0))
    assert d.hourly_copies.tolist() == [3] + [0] * 23
    assert d.warmup_copy_hours == pytest.approx(3 * 0.2) and d.copy_hours == pytest.approx(3.6)
    kept = dl.day(CAP, 150.0, curve, dl.Fleet(autoscale=True, min_copies=1, scale_up_minutes=12.0))
    assert kept.hourly_copies.tolist() == [3] + [1] * 23 and kept.copy_hours == pytest.approx(26 + 0.4)


def test_a_maximum_that_cannot_carry_the_peak_leaves_hours_unmet():
    d = dl.day(CAP, 150.0, HALF_THEN_FULL, dl.Fleet(autoscale=True, min_copies=1, max_copies=2))
    assert d.hourly_copies.tolist() == [2] * 24 and d.unmet_hours == 12 and d.copy_hours == 48
    assert d.served_requests == (75 * 12 + 120 * 12) * 60  # 140,400 of 162,000
    assert d.realistic_per_m_output == pytest.approx(1e6 * 192 * 0.8 / (140_400 * 250))
    assert "in 12 hours the maximum cannot carry the rate and 13% of the day's requests go unserved" in d.sentence


def test_a_flat_curve_on_a_fixed_fleet_is_the_planners_best_case():
    config = presets()["llama-3.1-8b"]
    load = sv.Workload(requests_per_minute=300, prompt_tokens=1000, output_tokens=250)
    plan = se.search(config, load, gpus=["h100-sxm"]).plan
    cap = dl.Capacity.of(plan, load)
    assert cap.gpus_per_copy == plan.tp and cap.price_per_gpu_hour == plan.price
    d = dl.day(cap, load.requests_per_minute, np.ones(24), dl.Fleet())
    assert d.peak_copies == plan.copies
    assert d.best_per_m_output == pytest.approx(plan.cost_per_m_output, rel=1e-12)
    assert d.best_per_m_input == pytest.approx(plan.cost_per_m_input, rel=1e-12)
    assert d.realistic_per_m_output == pytest.approx(plan.cost_per_m_output, rel=1e-12)
    assert "the same as the planner's best case" in d.sentence
    office = dl.day(cap, load.requests_per_minute, dl.shape("office-hours"), dl.Fleet())
    assert office.realistic_per_m_output > 2 * office.best_per_m_output
    under_load = dl.Capacity.of(plan, load, copies_under_load=plan.copies + 2)
    assert under_load.requests_per_s_copy == pytest.approx(300 / 60 / (plan.copies + 2))


def test_a_bad_peak_is_refused():
    with pytest.raises(ValueError, match="peak requests per minute"):
        dl.day(CAP, 0.0, HALF_THEN_FULL, dl.Fleet())
