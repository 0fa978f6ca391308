"""The compact record of inter-token gaps and the stretch of decode steps it is fed by: the statistics equal numpy's on
the gaps written out, a stretch's closed forms equal its steps added one by one, and a run with 100,000-token answers
holds a hundredth of its gaps' numbers or fewer."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.plan import engines
from core.plan import kv_cache as kv
from core.plan import serving as sv
from core.plan import simulator as sim
from core.plan.gaps import GapLog, Runs, Sample
from core.plan.model_config import presets
from core.plan.stretch import Stretch

gap = st.floats(0.0, 2.0, allow_nan=False, width=32).map(float)
runs = st.lists(
    st.tuples(
        gap, st.floats(0.0, 0.0009765625, allow_nan=False, width=32).map(float), st.integers(1, 40), st.integers(1, 4)
    ),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(gap, max_size=30), table=runs, q=st.floats(0.0, 100.0))
def test_the_compact_percentile_and_mean_are_numpys_on_every_gap(values, table, q):
    r = np.array(table, dtype=np.float64).reshape(-1, 4)
    sample = Sample(
        np.sort(np.array(values)), Runs(r[:, 0], r[:, 1], r[:, 2].astype(np.int64), r[:, 3].astype(np.int64))
    )
    every = sample.expand()
    if not every.size:
        assert np.isnan(sample.percentile(q)) and np.isnan(sample.mean())
        return
    assert sample.size == every.size
    assert sample.percentile(q) == float(np.percentile(every, q))  # exactly: the same k-th values, the same lerp
    assert np.isclose(sample.mean(), float(np.mean(every)), rtol=1e-12)


def test_the_log_keeps_the_kept_requests_gaps_only():
    log = GapLog()
    log.add(np.array([0, 1, 2]), np.array([0.5, 0.6, 0.7]))
    log.add_runs(np.array([1, 2]), [(0.1, 0.01, 3)])
    kept = np.array([False, True, True])
    expanded = np.sort(log.sample(kept).expand())
    np.testing.assert_allclose(expanded, np.sort([0.6, 0.7, 0.1, 0.11, 0.12, 0.1, 0.11, 0.12]))


def _steps_one_by_one(line, ctx, layers, steps):
    a, c = line
    full, sliding, window = layers
    j = np.arange(steps, dtype=np.float64)[:, None]
    held = full * (ctx[None, :] + j).sum(axis=1) + sliding * np.minimum(ctx[None, :] + j, window).sum(axis=1)
    return a + c * held


@settings(max_examples=200, deadline=None)
@given(
    ctx=st.lists(st.integers(1, 5000), min_size=1, max_size=12),
    sliding=st.sampled_from([0.0, 21.0]),
    steps=st.integers(2, 3000),
    at=st.floats(0.0, 1.0),
)
def test_a_stretch_sums_and_cuts_as_its_steps_one_by_one(ctx, sliding, steps, at):
    layers, line = (21.0 if sliding else 42.0, sliding, 4096.0), (0.012, 3e-9)
    context = np.array(ctx, dtype=np.float64)
    stretch = Stretch.of(line, context, layers, steps)
    every = _steps_one_by_one(line, context, layers, steps)
    runs = np.concatenate([f + s * np.arange(m) for f, s, m in stretch.runs(0)])
    np.testing.assert_allclose(runs, every, rtol=1e-12)
    assert np.isclose(stretch.seconds(), every.sum(), rtol=1e-12)
    target = at * float(every.sum())
    ends = np.cumsum(every)
    expected = min(steps, int(np.searchsorted(ends, target)) + 1)  # the steps until the one that reaches it
    assert abs(stretch.steps_until(target) - expected) <= (1 if np.isclose(ends[expected - 1], target) else 0)


def test_long_answers_are_simulated_without_one_number_per_token():
    setup = sv.Setup(presets()["llama-3.1-8b"], kv.gpus()["h100-sxm"], 1, 16, "fp16", sv.default_efficiency())
    limits = sim.engine_limits(setup, engines.profile("vllm"))
    result = sim.simulate(setup, sim.Traffic("poisson", 240, 1500, 100_000, rate=0.01), limits)
    assert result.complete
    numbers = sum(v.size for v in result.gaps._values) + 4 * len(result.gaps._runs)
    assert numbers < 240 * 99_999 / 100  # a hundredth of the gaps written out, or less
    summary = result.summary(skip=40)
    assert 0 < summary["itl_p50_s"] <= summary["itl_p95_s"] <= summary["itl_p99_s"]
