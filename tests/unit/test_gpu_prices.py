"""The GPU price presets: every GPU preset priced, every offer sourced and dated, the range computed from the offers,
and the reader's own prices checked."""

from __future__ import annotations

import math
import statistics

import pytest

from core.plan import kv_memory as kv
from core.plan import prices as pr


def test_every_gpu_preset_has_a_price_with_provider_date_and_source():
    assert set(pr.gpu_prices()) == set(kv.gpus())
    for price in pr.gpu_prices().values():
        assert price.offers
        for offer in price.offers:
            assert offer.provider and offer.offer and offer.source.startswith("https://")
            assert offer.date[:4].isdigit() and 2024 <= int(offer.date[:4]) <= 2026
            assert 0 < offer.price_per_gpu_hour < 100


def test_low_typical_high_are_the_offers_min_median_max():
    for price in pr.gpu_prices().values():
        values = [o.price_per_gpu_hour for o in price.offers]
        assert (price.low, price.typical, price.high) == pytest.approx(
            (min(values), statistics.median(values), max(values))
        )
        assert pr.offer_range(price.offers) == pytest.approx((price.low, price.typical, price.high))
        assert pr.typical_price(price.gpu_id) == price.typical


def test_most_gpus_have_more_than_one_provider_and_their_lists_differ():
    several = [p for p in pr.gpu_prices().values() if len(p.providers) > 1]
    assert len(several) >= 5
    assert all(p.low < p.high for p in several)


def test_own_prices_override_and_bad_ones_name_the_gpu():
    prices = pr.resolve_prices(kv.gpus(), {"h100-sxm": 2.0})
    assert prices["h100-sxm"] == 2.0 and prices["l4"] == pr.gpu_prices()["l4"].typical
    for bad in (0, -1, math.nan, math.inf, "two", None):
        problem = pr.price_problem("h100-sxm", bad)
        assert problem and "H100 SXM" in problem
        with pytest.raises(ValueError, match="H100 SXM"):
            pr.resolve_prices(kv.gpus(), {"h100-sxm": bad})
    assert pr.price_problem("h100-sxm", "2.49") is None
    with pytest.raises(ValueError, match="not a GPU preset"):
        pr.resolve_prices(kv.gpus(), {"tpu-v5": 1.0})
