"""Users waiting at once, as a request rate (Little's law): a planner may know how many people wait on an answer at
the busiest moment rather than how many requests arrive a minute. At the latency target's pace each request takes the
first token's time plus the answer at the minimum reading speed, so N requests in flight arrive at N ÷ that time.
"""

from __future__ import annotations

from core.plan.serving import Workload


def seconds_per_request(load: Workload) -> float:
    """A request's time at the target's pace: first token within ttft_s, then the answer at min_tokens_per_s."""
    return load.ttft_s + load.output_tokens / load.min_tokens_per_s


def requests_per_minute(in_flight: float, load: Workload) -> float:
    """The peak requests a minute that keep `in_flight` requests waiting at once at the target's pace."""
    return in_flight * 60.0 / seconds_per_request(load)
