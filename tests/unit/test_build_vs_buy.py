"""Build vs buy like for like: the API presets of open models, the default API that serves the same model, the note
when it is not the same model, and the API billed on the average month while the fleet is sized for the peak."""

from __future__ import annotations

import pytest

from core.plan import build_vs_buy as bb
from core.plan import search as se
from core.plan import serving as sv
from core.plan.model_config import presets

P = presets()
TASK = sv.Workload(requests_per_minute=300, prompt_tokens=1500, output_tokens=400, ttft_s=2.0, min_tokens_per_s=20)


def test_the_asset_keeps_the_pages_format_and_names_the_model_each_api_serves():
    prices = sv.api_prices()
    assert next(iter(prices)) == "deepseek-chat"  # the page's first preset stays its default
    assert {"gpt-4o", "gpt-4o-mini"} <= set(prices)
    served = bb.served_model()
    assert set(served) <= set(prices) and set(served.values()) <= set(P)
    for model in ("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen2.5-72b", "deepseek-v3"):
        providers = {prices[a].provider for a, m in served.items() if m == model}
        assert providers, model
    assert bb.default_peak_to_average() == 3.0 and "working hours" in bb.peak_to_average_reason()


@pytest.mark.parametrize("model_id", sorted(set(bb.served_model().values())))
def test_the_default_api_is_the_same_model_where_one_serves_it(model_id):
    choice = bb.default_api(P[model_id], model_id, TASK)
    assert choice.same_model and bb.served_model()[choice.price.id] == model_id
    same = [sv.api_prices()[a] for a, m in bb.served_model().items() if m == model_id]
    assert bb.blended_per_m(choice.price, TASK) == min(bb.blended_per_m(p, TASK) for p in same)
    assert "itself" in choice.note


def test_a_model_no_api_serves_is_compared_with_the_closest_in_size_and_said_so():
    choice = bb.default_api(P["gemma-2-9b"], "gemma-2-9b", TASK)
    assert not choice.same_model and bb.served_model()[choice.price.id] == "llama-3.1-8b"
    assert "is not the same model" in choice.note and "Gemma-2-9B" in choice.note
    custom = bb.default_api(P["qwen2.5-72b"], None, TASK)  # an uploaded config has no preset id
    assert not custom.same_model
    plan = se.search(P["gemma-2-9b"], TASK).plan
    verdict = bb.verdict(plan.monthly_cost, TASK, choice)
    assert "is not the same model" in verdict.sentence


def test_the_api_is_billed_on_the_average_month_and_the_fleet_on_the_peak():
    price = sv.api_prices()["deepinfra-llama-3.1-70b"]
    bill = bb.api_bill(TASK, price)
    requests = 300 / 3 * 60 * 730
    assert bill.average_rpm == 100 and bill.monthly_requests == pytest.approx(requests)
    expected = requests * (1500 * price.input_per_m + 400 * price.output_per_m) / 1e6
    assert bill.monthly_cost == pytest.approx(expected)
    assert bb.api_bill(TASK, price, 1.0).monthly_cost == pytest.approx(3 * expected)
    for bad in (0.5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="peak-to-average"):
            bb.api_bill(TASK, price, bad)
    plan = se.search(P["llama-3.1-70b"], TASK).plan
    verdict = bb.verdict(plan.monthly_cost, TASK, bb.default_api(P["llama-3.1-70b"], "llama-3.1-70b", TASK))
    assert verdict.api.monthly_cost == pytest.approx(expected)
    assert verdict.cheaper == ("self-hosted" if plan.monthly_cost < expected else "API")
    assert "sized for the peak of 300 requests a minute" in verdict.sentence and "not the same" not in verdict.sentence
