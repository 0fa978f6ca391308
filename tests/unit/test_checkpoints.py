"""The training replay (assets/model/checkpoints.json): the shipped model's own run, its last checkpoint the shipped
weights bit for bit, its metrics the engine's, and retraining it gives the same checkpoints again."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.explain import checkpoints as cp
from core.explain.trace_views import rule_emergence
from core.explain.weights import LOG_DIR, trained_model, training_log
from tests.unit import float_kernels as fk


@pytest.fixture(scope="module")
def replay() -> cp.Replay:
    return cp.load()


def test_the_last_checkpoint_is_the_shipped_model_bit_for_bit(replay):
    shipped = trained_model()
    assert int(replay.steps[-1]) == shipped.metadata["steps"]
    last = replay.weights[-1]
    assert list(last) == list(shipped.params)
    for name, value in shipped.params.items():
        assert np.array_equal(last[name], value), name


def test_forty_checkpoints_log_spaced_from_step_zero(replay):
    assert tuple(replay.steps.tolist()) == cp.checkpoint_steps(2000) and len(replay) == cp.COUNT == 40
    gaps = np.diff(replay.steps[1:])
    assert replay.steps[0] == 0 and (gaps >= 1).all() and gaps[-1] > 100 * gaps[0]  # dense early, sparse late


def test_the_replays_metrics_recomputed_by_the_engine_equal_the_assets(replay):
    # Shares are counts over the corpus (exactly equal); probabilities and losses may differ in the last bit on
    # another BLAS build, which sums a matrix product in another order, so they are held to 1e-12.
    for i in range(len(replay)):
        recomputed = cp.metrics(replay.model(i))
        for name in ("rule_accuracy_held_out", "copula_class_accuracy", "bigram_top1"):
            assert recomputed[name] == replay.values[name][i], (int(replay.steps[i]), name)
        for name in ("loss", "p_on", "class_mass", "class_mass_mean"):
            assert recomputed[name] == pytest.approx(replay.values[name][i], rel=1e-12, abs=1e-15), name


def test_the_final_loss_is_the_shipped_models_recorded_loss(replay):
    assert replay.values["loss"][-1] == pytest.approx(trained_model().metadata["final_loss"], abs=1e-12)


def test_the_asset_is_compact_and_documented():
    assert cp.CHECKPOINTS.stat().st_size <= 2_000_000
    doc = json.loads(cp.CHECKPOINTS.read_text(encoding="utf-8"))
    assert doc["format"] == cp.FORMAT and set(doc["metrics"]) == set(cp.METRICS)
    assert doc["model"] == "tiny_transformer.json" and doc["seed"] == trained_model().metadata["seed"]


def test_emergence_and_milestones_follow_the_metrics(replay):
    first, stays = replay.emergence
    accuracy = replay.values["rule_accuracy_held_out"]
    assert accuracy[replay.index(first)] == 1.0 and (accuracy[: replay.index(first)] < 1.0).all()
    assert (accuracy[replay.index(stays) :] == 1.0).all()
    marks = cp.milestones(replay)
    assert marks[0].step == 0 and marks[-1].step == int(replay.steps[-1])
    assert [m.step for m in marks] == sorted({m.step for m in marks})
    assert first in [m.step for m in marks]
    change = cp.change(replay, marks[0], marks[-1])
    assert change.figures["loss"] == (replay.values["loss"][0], replay.values["loss"][-1])


def test_the_embedding_map_is_fitted_on_the_final_model(replay):
    emap = cp.embedding_map(replay)
    assert emap.points.shape == (len(replay), 20, 2) and 0 < emap.explained <= 1
    final = np.asarray(replay.weights[-1]["E"])
    centred = final - final.mean(axis=0)
    # the two axes are the final rows' leading principal axes: their spread is the two largest singular values
    singular = np.linalg.svd(centred, compute_uv=False)
    assert np.allclose(np.linalg.norm(emap.points[-1], axis=0), singular[:2])
    assert set(emap.classes) == set(cp.WORD_CLASSES)


def test_the_family_emergence_is_read_from_the_logged_training_logs():
    runs = cp.family_emergence()
    assert [r.seed for r in runs] == list(range(9))
    log = training_log(trained_model())
    assert (runs[0].first, runs[0].stays) == rule_emergence(log["step"], log["rule_accuracy_held_out"])
    assert len(list(LOG_DIR.glob("seed_*.json"))) == 9


@pytest.mark.slow
def test_retraining_gives_the_same_checkpoints_bit_for_bit(replay):
    from core.explain.training import RECIPE, run_training

    run = run_training(0, snapshots=cp.checkpoint_steps(RECIPE.steps))
    assert [step for step, _ in run.snapshots] == replay.steps.tolist()
    pairs = [(step, weights, kept) for (step, weights), kept in zip(run.snapshots, replay.weights, strict=True)]
    if not fk.identical(pairs[1][1], pairs[1][2]):  # step 1 already differs: another CPU's kernels
        early = [fk.largest_difference(weights, kept) for step, weights, kept in pairs if step <= 34]
        assert max(early) <= fk.ROUND_OFF, early
        fk.skip_on_other_kernels("the 40 checkpoints", max(early))
    for step, weights, kept in pairs:
        assert fk.identical(weights, kept), step


def test_writing_the_replay_again_gives_the_shipped_file_byte_for_byte(replay, tmp_path):
    doc = json.loads(cp.CHECKPOINTS.read_text(encoding="utf-8"))
    written = cp.save(replay, doc["seed"], doc["steps"], tmp_path / "checkpoints.json")
    assert written.read_bytes() == cp.CHECKPOINTS.read_bytes()
