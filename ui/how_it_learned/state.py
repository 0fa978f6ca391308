"""How it learned: the page's link and its widgets' state. The step, the prompt and the open section live in the link;
every value the link carries is checked before a widget reads it (`read_link`), and one that cannot be used is named
in the page's one notice with what is used instead: a step outside the run is clamped to its nearest end, a step
between two checkpoints moves to the nearest checkpoint.

Which replay the page shows (the shipped one, or one retrained live in this session) is session state too
(`current_replay`), as is whether the replay is playing.
"""

from __future__ import annotations

import streamlit as st

from core.explain.checkpoints import Replay, shipped_replay
from ui.elements import link_reader as lr

PAGE = "learned"
STEP = "learned_step"  # the step slider's key and the link's parameter
PROMPT = "learned_prompt"
SECTION = "learned_section"
PLAYING = "learned_playing"  # True while the replay plays (the step fragment reruns on a timer)
LIVE = "learned_live"  # a replay retrained in this session, when the reader asked for one
_FROM_START = "learned_from_start"  # play was just pressed at the end: the run shows step 0 before moving on
PLAY_SECONDS = 0.8  # one checkpoint per tick: the whole run in about half a minute

SECTIONS = ["① Replay", "② Eight siblings", "③ The rule it could not learn"]
PROMPTS = [
    "<BOS> the cat sat",
    "<BOS> the cat is",
    "<BOS> the mat is",
    "<BOS> the big dog ran",
    "<BOS> the small cat sat on the",
]


def current_replay() -> Replay:
    """The replay this session shows: one retrained live here, else the shipped one (assets/model/checkpoints.json)."""
    live = st.session_state.get(LIVE)
    return live if isinstance(live, Replay) else shipped_replay()


def read_step(raw: str, replay: Replay) -> str:
    """A link's step as the slider's option: a whole number in the run; one outside it is clamped to the nearest end,
    one between checkpoints moved to the nearest checkpoint (each named in the notice); anything else refused."""
    text = raw.strip().replace(",", "").replace("_", "")
    odd = next((c for c in text if not c.isascii()), None)
    if odd is not None:  # float() reads other scripts' digits ('٣' = 3): a link's step is written in plain digits
        raise lr.Refused(f"it holds “{odd}”, which is not a plain digit")
    try:
        value = float(text)
    except ValueError:
        raise lr.Refused("it is not a step number") from None
    if value != value:  # NaN
        raise lr.Refused("it is not a step number")
    first, last = int(replay.steps[0]), int(replay.steps[-1])
    if not first <= value <= last:
        clamped = first if value < first else last
        raise lr.Adjusted(
            str(clamped), f"the run has steps {first:,} … {last:,} only", f"used step {clamped:,} instead"
        )
    nearest = int(replay.steps[replay.index(round(value))])
    if nearest != value:
        raise lr.Adjusted(
            str(nearest),
            f"no checkpoint was kept at step {lr.number_text(value)}; the nearest one is step {nearest:,}",
            f"used step {nearest:,} instead",
        )
    return str(nearest)


def read_link(replay: Replay) -> None:
    """Check the link's values before any widget reads them; a refused one is named in the page's one notice."""
    last = int(replay.steps[-1])
    params = {
        STEP: lr.Param(lambda raw: read_step(raw, replay), instead=f"used step {last:,} (the end of training)"),
        PROMPT: lr.choice(PROMPTS, default=PROMPTS[0]),
        SECTION: lr.choice(SECTIONS, default=SECTIONS[0]),
    }
    lr.read_link(PAGE, params)
    lr.link_notice(PAGE)


def toggle_play(replay: Replay) -> None:
    """The play button's action: start playing (from the first checkpoint when the last one is shown) or pause."""
    playing = not st.session_state.get(PLAYING, False)
    st.session_state[PLAYING] = playing
    if playing and st.session_state.get(STEP, int(replay.steps[-1])) == int(replay.steps[-1]):
        st.session_state[STEP] = int(replay.steps[0])
        st.session_state[_FROM_START] = True  # show step 0 first: the next tick moves on


def advance(replay: Replay) -> None:
    """While playing, before the slider is drawn: move one checkpoint on; at the last one, stop."""
    if not st.session_state.get(PLAYING) or st.session_state.pop(_FROM_START, False):
        return
    now = replay.index(st.session_state.get(STEP, int(replay.steps[-1])))
    if now >= len(replay) - 1:
        st.session_state[PLAYING] = False
        st.rerun()  # the whole page, so the step fragment is declared again without its timer
    st.session_state[STEP] = int(replay.steps[now + 1])
