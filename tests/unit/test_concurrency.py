"""Users waiting at once as a request rate: Little's law at the latency target's pace, by hand."""

import pytest

from core.plan import concurrency
from core.plan.serving import Workload


def test_a_request_takes_the_first_token_then_the_answer_at_the_minimum_speed():
    load = Workload(prompt_tokens=1500, output_tokens=400, ttft_s=2.0, min_tokens_per_s=20.0)
    assert concurrency.seconds_per_request(load) == pytest.approx(2.0 + 400 / 20)  # 22 s


def test_two_thousand_waiting_at_once_arrive_at_little_s_law_rate():
    load = Workload(prompt_tokens=1500, output_tokens=400, ttft_s=2.0, min_tokens_per_s=20.0)
    assert concurrency.requests_per_minute(2000, load) == pytest.approx(2000 * 60 / 22)  # 5,454.5 a minute
    assert concurrency.requests_per_minute(1, load) * 22 / 60 == pytest.approx(1.0)  # rate × time = in flight
