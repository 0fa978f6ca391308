"""The 'How it learned' page in Streamlit's AppTest: every checkpoint renders and draws the asset's numbers, the step,
prompt and section live in the link (a hostile step is named and clamped), play/pause moves the slider, the discarded
world's table and the primer's lesson are shown, and "Retrain live" is offered only where torch is installed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.explain.checkpoints import milestones, shipped_replay
from core.explain.discarded_world import LESSON, shipped_runs
from tests.app.helpers import charts, numbers, run_page, shown, static_tables
from tests.unit import float_kernels as fk
from ui.how_it_learned import live
from ui.how_it_learned.state import PROMPTS, SECTIONS

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "how_it_learned.py")
REPLAY = shipped_replay()


def lead(at: AppTest) -> str:
    return shown(at.markdown[1].value)


def notice(at: AppTest) -> str:
    return shown("\n".join(w.value for w in at.warning if "could not use" in w.value))


def figure(at: AppTest, key: str) -> dict:
    return next(c["figure"] for c in charts(at) if c["key"] == key)


def test_every_step_renders_with_the_assets_numbers():
    at = run_page(PAGE)
    assert at.select_slider(key="learned_step").value == int(REPLAY.steps[-1])
    for i, step in enumerate(REPLAY.steps.tolist()):
        at.select_slider(key="learned_step").set_value(step).run()
        assert not at.exception, (step, at.exception)
        text = lead(at)
        assert f"At step {step:,}: P(on | the cat sat) {REPLAY.values['p_on'][i]:.3f}" in text
        assert f"class mass after *the cat is* {REPLAY.values['class_mass'][i]:.3f}" in text
        drawn = {c["key"] for c in charts(at)}
        assert {"learned-loss", "learned-accuracy", "learned-answers", "learned-embedding"} <= drawn
        assert sum(k.startswith("learned-head-") for k in drawn) == 4
        loss = figure(at, "learned-loss")
        assert numbers(loss["data"][0]["y"]) == pytest.approx(REPLAY.values["loss"])
        assert numbers(loss["data"][-1]["y"]) == pytest.approx([REPLAY.values["loss"][i]])  # the shown step
        heads = figure(at, "learned-head-0-0")
        rows = numbers(heads["data"][0]["z"])
        assert np.nansum(rows, axis=1) == pytest.approx(np.ones(len(rows)))


def test_the_lead_names_the_rule_emergence_step_and_the_milestones_are_listed():
    at = run_page(PAGE)
    first, _ = REPLAY.emergence
    assert f"the copula rule first holds on every held-out type at step {first:,}" in lead(at)
    milestone_line = next(c.value for c in at.caption if c.value.startswith("Milestones:"))
    for mark in milestones(REPLAY):
        assert f"step {mark.step:,}" in milestone_line
    accuracy = figure(at, "learned-accuracy")
    assert any(f"rule holds: step {first:,}" in note["text"] for note in accuracy["layout"]["annotations"])


@pytest.mark.parametrize(
    ("raw", "used", "why"),
    [
        ("99999", 2000, "the run has steps 0 … 2,000 only"),
        ("-7", 0, "the run has steps 0 … 2,000 only"),
        ("150", 141, "no checkpoint was kept at step 150; the nearest one is step 141"),
        ("zzz", 2000, "it is not a step number"),
        ("٣", 2000, "not a plain digit"),
    ],
)
def test_a_hostile_step_is_named_and_clamped(raw, used, why):
    at = run_page(PAGE, learned_step=raw)
    assert at.select_slider(key="learned_step").value == used
    assert "**learned_step**" in notice(at) and why in notice(at)
    assert f"At step {used:,}:" in lead(at)


def test_step_prompt_and_section_come_from_the_link():
    at = run_page(PAGE, learned_step="118", learned_prompt=PROMPTS[1])
    assert at.select_slider(key="learned_step").value == 118 and notice(at) == ""
    heads = figure(at, "learned-head-1-0")
    assert heads["data"][0]["y"] == ["1 <BOS>", "2 the", "3 cat", "4 is"]
    for section in SECTIONS[1:]:
        at = run_page(PAGE, learned_section=section)
        assert not at.exception
        assert "learned-loss" not in {c["key"] for c in charts(at)}  # only the open section is drawn


def test_play_moves_the_slider_and_pause_stops_it():
    at = run_page(PAGE)
    at.button(key="learned_play").click().run()
    assert at.session_state["learned_playing"] is True
    assert at.select_slider(key="learned_step").value == 0  # from the end, play starts again at step 0
    at.run()  # a tick of the fragment's timer reruns it
    assert at.select_slider(key="learned_step").value == int(REPLAY.steps[1])
    at.button(key="learned_play").click().run()
    assert at.session_state["learned_playing"] is False
    held = at.select_slider(key="learned_step").value
    at.run()
    assert at.select_slider(key="learned_step").value == held


def test_the_siblings_come_from_the_logs():
    at = run_page(PAGE, learned_section=SECTIONS[1])
    table = static_tables(at)["Rule emergence, run by run"]
    assert [row[0] for row in table[1:]] == ["seed 0 (shipped)", *(f"seed {s}" for s in range(1, 9))]
    assert table[1][1:3] == ["150", "500"]  # assets/model/logs/seed_00.json


def test_the_rule_it_could_not_learn_shows_both_metrics_and_ends_with_the_lesson():
    at = run_page(PAGE, learned_section=SECTIONS[2])
    rows = shipped_runs().rows
    table = static_tables(at)["Runs of the discarded world"]
    assert [r[0] for r in table[1:]] == [r.name for r in rows]
    for cells, row in zip(table[1:], rows, strict=True):
        assert cells[2:5] == [f"{row.class_metric:.3f}", f"{row.repeat_trained:.3f}", f"{row.repeat_held_out:.3f}"]
    bars = figure(at, "learned-discarded")
    assert numbers(bars["data"][0]["y"]) == pytest.approx([r.class_metric for r in rows])
    last = shown(at.markdown[-1].value)
    assert f"“{LESSON}”" in last and "the primer, §6" in last
    assert "Here the class metric read" in last


def test_without_torch_the_page_says_the_replay_is_what_it_shows(monkeypatch):
    monkeypatch.setattr(live, "torch_available", lambda: False)
    at = run_page(PAGE)
    assert any("runs without torch" in i.value and "checkpoints.json" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == "learned_retrain"]


@pytest.mark.slow
def test_retrain_live_replaces_the_replay_for_the_session():
    if not live.torch_available():
        pytest.skip("torch is not installed")
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.run()
    at.button(key="learned_retrain").click().run()
    assert not at.exception, at.exception
    assert "retrained live in this session" in lead(at)
    retrained, recorded = at.session_state[live.LIVE], shipped_replay()
    if fk.identical(retrained.weights[1], recorded.weights[1]):  # this CPU's kernels add as the recorded run's did
        assert live.same_as_shipped(retrained) and any("bit for bit" in m.value for m in at.markdown)
    else:  # another CPU's: round-off at step 1 grows until the runs part (tests/unit/float_kernels.py)
        assert fk.largest_difference(retrained.weights[1], recorded.weights[1]) <= fk.ROUND_OFF
        assert any("whose weights differ from the recorded replay's" in m.value for m in at.markdown)
    at.button(key="learned_recorded").click().run()
    assert "replayed from its checkpoints" in lead(at)
