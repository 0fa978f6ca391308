"""The primer's discarded second rule, reproduced (assets/model/discarded_world.json): the world, the table the engine
recomputes from the shipped weights, and deterministic training that `python -m core.training --discarded-world`
reproduces."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest

from core.explain import discarded_world as dw
from core.explain.world import sentence_types
from tests.unit import float_kernels as fk


@pytest.fixture(scope="module")
def runs() -> dw.DiscardedRuns:
    return dw.load()


def test_the_world_adds_sixteen_repeat_types_four_held_out_with_their_siblings_trained():
    types = dw.discarded_types()
    repeats = [t for t in types if dw.is_repeat(t)]
    assert len(types) == len(sentence_types()) + 16 and len(repeats) == 16
    assert all(t.words[1] == t.words[-1] for t in repeats)  # the answer repeats the subject's adjective
    held = [t for t in repeats if t.held_out]
    assert {t.text for t in held} == dw.HELD_OUT_REPEATS
    trained = {t.text for t in repeats if not t.held_out}
    for t in held:
        other = "was" if t.words[3] == "is" else "is"
        assert " ".join((*t.words[:3], other, t.words[4])) in trained


def test_four_configurations_one_larger_than_736_and_an_early_checkpoint(runs):
    assert len(dw.RUNS) == 4 and len({(r.seed, r.learning_rate, r.config) for r in dw.RUNS}) == 4
    sizes = {row.name: row.n_params for row in runs.rows}
    assert sizes["A"] == 736 and max(sizes.values()) > 736
    assert [row.step for row in runs.rows].count(dw.EARLY[1]) == 1


def test_the_table_recomputed_by_the_engine_from_the_shipped_weights_equals_the_assets(runs):
    for row, model in zip(runs.rows, runs.models, strict=True):
        again = dw.evaluate(model, row.name, row.label, row.step)
        assert (again.class_metric, again.repeat_trained, again.repeat_held_out, again.first_adjective) == (
            row.class_metric,
            row.repeat_trained,
            row.repeat_held_out,
            row.first_adjective,
        )
        assert [(a.prompt, a.top) for a in again.answers] == [(a.prompt, a.top) for a in row.answers]
        assert again.loss == pytest.approx(row.loss, rel=1e-12)
        assert [a.p_repeat for a in again.answers] == pytest.approx([a.p_repeat for a in row.answers], rel=1e-12)


def test_the_verdict_reads_the_table(runs):
    verdict = dw.verdict(runs.rows)
    assert verdict.class_range[0] <= verdict.class_range[1] <= 1.0
    for row in verdict.blind:
        assert row.class_metric == 1.0 and min(row.repeat_trained, row.repeat_held_out) < 1.0
    if verdict.smallest_learner is not None:
        assert verdict.smallest_learner.repeat_held_out == verdict.smallest_learner.repeat_trained == 1.0


def test_training_the_discarded_world_is_deterministic():
    from core.explain.training import train_discarded

    once, twice = (train_discarded(dw.RUNS[1], steps=25, early=10) for _ in range(2))
    assert [step for step, _ in once] == [10, 25]
    for (_, a), (_, b) in zip(once, twice, strict=True):
        for name in a.params:
            assert np.array_equal(a.params[name], b.params[name]), name


@pytest.mark.slow
def test_the_command_reproduces_the_shipped_table(tmp_path, runs):
    from core.explain.training import main

    out = tmp_path / "discarded_world.json"
    main(["--discarded-world", "--out", str(out)])
    again = dw.load(out)
    early = next(i for i, row in enumerate(runs.rows) if row.step < runs.steps)  # run A's step-200 checkpoint
    if not fk.identical(again.models[early].params, runs.models[early].params):
        difference = fk.largest_difference(again.models[early].params, runs.models[early].params)
        assert difference <= 1e-6, difference  # 1e-12 at step 1, about 1e-8 by step 200 (round-off, growing)
        got, kept = again.rows[early], runs.rows[early]
        assert got.loss == pytest.approx(kept.loss, rel=1e-6)
        assert (got.class_metric, got.repeat_trained, got.repeat_held_out) == (
            kept.class_metric,
            kept.repeat_trained,
            kept.repeat_held_out,
        )
        fk.skip_on_other_kernels("the finished runs", difference)
    assert [asdict(r) for r in again.rows] == [asdict(r) for r in runs.rows]
    for a, b in zip(again.models, runs.models, strict=True):
        assert all(np.array_equal(a.params[n], b.params[n]) for n in a.params)
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(dw.ASSET.read_text(encoding="utf-8"))
