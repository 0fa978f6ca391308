"""How it learned: "Retrain live". With torch installed (the dev requirements), the reader can run the shipped
model's recipe here, with a progress bar, and the page then shows that run's checkpoints instead of the recorded
replay, for this session. Without torch (the cloud app runs numpy only) the page says that the recorded replay is what
it shows. torch is looked for with importlib.util.find_spec and imported (through core.explain.training) only when
the reader presses the button, never on a first screen.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import streamlit as st

from core.explain.checkpoints import CHECKPOINTS, LIVE_SOURCE, Replay, checkpoint_steps, replay_from, shipped_replay
from core.explain.recipe import MAIN_SEED, RECIPE
from core.explain.world import training_corpus
from ui.how_it_learned.state import LIVE


def torch_available() -> bool:
    """Whether torch is installed (found without importing it)."""
    return importlib.util.find_spec("torch") is not None


def _retrain() -> None:
    """Run the recipe with a progress bar and keep the new replay for this session (the slider keeps its step: the
    live run keeps the same checkpoint steps)."""
    from core.explain import training  # imports torch: only here, on demand

    bar = st.progress(0.0, text=f"Training the {shipped_replay().model(0).n_params}-parameter model…")

    def tick(step: int, steps: int) -> None:
        if step % 25 == 0 or step == steps:
            bar.progress(step / steps, text=f"Training: step {step:,} of {steps:,}")

    run = training.run_training(MAIN_SEED, snapshots=checkpoint_steps(RECIPE.steps), on_step=tick)
    bar.progress(1.0, text="Computing the checkpoints' metrics…")
    st.session_state[LIVE] = replay_from(run.snapshots, run.model, LIVE_SOURCE)
    st.rerun()


def same_as_shipped(replay: Replay) -> bool:
    """Whether a replay's weights equal the shipped replay's at every checkpoint, bit for bit."""
    shipped = shipped_replay()
    return len(replay) == len(shipped) and all(
        np.array_equal(a[name], b[name]) for a, b in zip(replay.weights, shipped.weights, strict=True) for name in a
    )


def retrain_box(replay: Replay) -> None:
    """What the replay is, and the retrain button where torch is installed."""
    if not torch_available():
        st.info(
            f"This server runs without torch (as the cloud app does), so the page shows the replay recorded in "
            f"assets/model/{CHECKPOINTS.name}: {len(replay)} checkpoints of the shipped model's own training run, "
            "written by `python -m core.training`. With the dev requirements installed, a button here retrains the "
            "model live."
        )
        return
    with st.expander("Retrain live"):
        if replay.source == LIVE_SOURCE:
            same = same_as_shipped(replay)
            st.markdown(
                f"The page shows the run retrained in this session: {len(replay)} checkpoints, "
                + (
                    "the same weights as the recorded replay, bit for bit (same seed, recipe and corpus)."
                    if same
                    else "whose weights differ from the recorded replay's (another torch version or machine)."
                )
            )
            st.button(
                "Back to the recorded replay", key="learned_recorded", on_click=st.session_state.pop, args=(LIVE,)
            )
        else:
            st.markdown(
                f"The page shows the replay recorded in assets/model/{CHECKPOINTS.name}. torch is installed here, so "
                f"you can run the same recipe (seed {MAIN_SEED}, {RECIPE.steps:,} full-batch AdamW steps on the "
                f"{len(training_corpus().types)} training types, one CPU thread) and watch this session's own run "
                "instead; it takes about a quarter of a minute."
            )
        if st.button("Retrain live", key="learned_retrain", icon=":material/model_training:"):
            _retrain()
