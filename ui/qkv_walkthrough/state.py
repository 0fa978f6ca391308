"""The QKV walkthrough's inputs: the reader's matrices (X and the four weights), their URL form and validation.

The last valid matrices live in the session ('qkv_state') so they survive page switches; edited ones also go into the
URL (`qkv_X`, `qkv_W_Q`, …) so a shared link restores the what-if. Bad input gives a message and keeps the last
valid matrix. The sampler's draw count is kept in the URL too ('qkv_draws').
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import permutations

import numpy as np
import streamlit as st

from core.explain.kv_generation import PRIMER_7B
from core.explain.primer import hand_example
from core.explain.sampling import TEMPERATURE_RANGE
from core.explain.transformer import Model, hand_model
from ui.elements import link_reader as lr
from ui.elements.widgets import matrix_frame

EXAMPLE = hand_example()
PRIMER_SENTENCE = " ".join(EXAMPLE.prompt)
# Every order of the three tokens whose embedding rows the primer prints; the primer's own sentence first.
SENTENCES = tuple(dict.fromkeys([PRIMER_SENTENCE, *(" ".join(p) for p in permutations(EXAMPLE.prompt))]))
MATRICES = ("X", "W_Q", "W_K", "W_V", "W_O")
EDIT_BOUND = 10.0  # what-if editors accept numbers in [-10, 10]: wide enough to break things, small enough to plot
LABELS = {
    "X": "X: the input rows h⁰ (one per token)",
    "W_Q": "W_Q: what each token looks for",
    "W_K": "W_K: what each token offers",
    "W_V": "W_V: what each token carries",
    "W_O": "W_O: how the head writes back",
}
MAX_DRAWS = 10_000
MAX_EXTRA = 6  # made-up rows the KV-cache section may append
SIZE_LIMITS = {"L": 1000, "T": 10_000_000, "h": 1000, "d_k": 4096, "bytes_per_element": 8}  # the §4 size inputs
PAGE = "qkv"


# The page's sections (tabs) and the walk's steps by key, with the label a reader sees; the views draw each.
SECTIONS = ("Step by step", "Read-out", "KV cache")
STEPS = {
    "x": "Embeddings X",
    "qkv": "Q, K, V",
    "raw": "Raw QKᵀ",
    "scaled": "÷ √d_k",
    "masked": "Causal mask",
    "weights": "Softmax",
    "z": "Weights · V",
    "wo": "· W_O",
    "resid": "Residual h¹",
    "last": "Last row",
}


def read_link() -> None:
    """Check the link's values before any widget reads them; a refused one is named in the page's one notice."""
    shapes = {name: values.shape for name, values in primer_values(PRIMER_SENTENCE).items()}
    longest = len(EXAMPLE.prompt) + MAX_EXTRA
    params = {
        "qkv_sentence": lr.choice(SENTENCES, default=SENTENCES[0]),
        "qkv_scale": lr.flag(default=True),
        "qkv_mask": lr.flag(default=True),
        "qkv_section": lr.choice(SECTIONS, default=SECTIONS[0]),
        "qkv_step": lr.choice(
            list(STEPS.values()),
            aliases=STEPS,
            default=next(iter(STEPS.values())),
        ),
        "qkv_temp": lr.number(*TEMPERATURE_RANGE, default=1.0),
        "qkv_decoding": lr.choice(("Greedy", "Sample"), default="Greedy"),
        "qkv_top_k": lr.number(0, len(EXAMPLE.vocabulary), whole=True, default=0),
        "qkv_top_p": lr.number(0.05, 1.0, default=1.0),
        "qkv_seed": lr.number(0, 10**6, whole=True, default=0),
        "qkv_draws": lr.number(0, MAX_DRAWS, whole=True, instead="no draws are shown"),
        "qkv_prefill": lr.number(1, len(EXAMPLE.prompt), whole=True, default=1),
        "qkv_extra": lr.number(0, MAX_EXTRA, whole=True, default=0),
        "qkv_gen_step": lr.number(0, longest - 1, whole=True, default=0),
        **{
            f"qkv_size_{name}": lr.number(1, high, whole=True, default=getattr(PRIMER_7B, name))
            for name, high in SIZE_LIMITS.items()
        },
        **{
            f"qkv_{name}": lr.text(_matrix_check(shape), instead="the primer's is used")
            for name, shape in shapes.items()
        },
    }
    lr.read_link(PAGE, params)
    lr.link_notice(PAGE)


def _matrix_check(shape: tuple[int, int]) -> Callable[[str], None]:
    """Raises ValueError with the reason when URL text is not a usable matrix of this shape."""

    def check(text: str) -> None:
        if (reason := decode(text, shape)[1]) is not None:
            raise ValueError(reason)

    return check


def primer_values(sentence: str) -> dict[str, np.ndarray]:
    """The primer's weights and the embedding rows of a sentence's tokens."""
    rows = [EXAMPLE.embedding_rows[token] for token in sentence.split()]
    return {"X": np.array(rows), "W_Q": EXAMPLE.W_Q, "W_K": EXAMPLE.W_K, "W_V": EXAMPLE.W_V, "W_O": EXAMPLE.W_O}


def problem(values: np.ndarray) -> str | None:
    """Why a matrix cannot be used (empty, not a number, out of range), or None if it can."""
    if values.size == 0:
        return "it is empty"
    bad = ~np.isfinite(values)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        return f"row {row + 1}, column {column + 1} is empty or not a number"
    far = np.abs(values) > EDIT_BOUND
    if far.any():
        row, column = np.argwhere(far)[0]
        value = values[row, column]
        return f"row {row + 1}, column {column + 1} ({value:.3g}) is outside [−{EDIT_BOUND:g}, {EDIT_BOUND:g}]"
    return None


def encode(values: np.ndarray) -> str:
    """A matrix as URL text: numbers separated by commas, rows by semicolons."""
    return ";".join(",".join(f"{v:.6g}" for v in row) for row in values)


def decode(text: str, shape: tuple[int, int]) -> tuple[np.ndarray | None, str | None]:
    """Parse a matrix from URL text; returns (matrix, None) or (None, the reason it was refused)."""
    cells = [line.split(",") for line in text.split(";")]
    if len({len(row) for row in cells}) > 1 or len(cells) != shape[0] or len(cells[0]) != shape[1]:
        lengths = " / ".join(str(len(row)) for row in cells[:8]) + (" / …" if len(cells) > 8 else "")
        rows = f"{len(cells)} row{'s' if len(cells) != 1 else ''}"
        return None, f"it has {rows} of {lengths} numbers, not a {shape[0]} × {shape[1]} matrix"
    try:
        rows = [[lr.read_number(cell, -np.inf, np.inf, whole=False) for cell in row] for row in cells]
    except lr.Refused:
        return None, "it contains something that is not a finite number"
    values = np.array(rows, dtype=np.float64)
    if values.shape != shape:
        return None, f"it is not a {shape[0]} × {shape[1]} matrix"
    reason = problem(values)
    return (None, reason) if reason else (values, None)


def page_state(sentence: str) -> dict:
    """The reader's current (last valid) matrices, created from the URL on a first visit, kept across pages.

    The link's refusals are shown once, as warnings.
    """
    state = st.session_state.get("qkv_state")
    if state is None:
        values, notes = primer_values(sentence), []
        for name in MATRICES:
            text = st.query_params.get(f"qkv_{name}")
            if text:
                parsed, reason = decode(text, values[name].shape)
                if reason:
                    notes.append(lr.refusal(f"qkv_{name}", text, reason, "the primer's is used"))
                else:
                    values[name] = parsed
        state = {"values": values, "base": dict(values), "sentence": sentence, "version": 0, "notes": notes}
        st.session_state["qkv_state"] = state
    if state["sentence"] != sentence:  # a preset sentence replaces the input rows, edited weights stay
        state["values"]["X"] = state["base"]["X"] = primer_values(sentence)["X"]
        state["sentence"] = sentence
        state["version"] += 1
    lr.add_notes(PAGE, state["notes"])
    state["notes"] = []  # said once; the page now runs on the primer's matrix
    return state


def reset_to_primer() -> None:
    """Button callback: the primer's sentence, input rows, weights, scaling and causal mask; edits dropped."""
    state = st.session_state["qkv_state"]
    st.session_state["qkv_sentence"] = PRIMER_SENTENCE
    st.session_state["qkv_scale"] = st.session_state["qkv_mask"] = True
    state["values"] = primer_values(PRIMER_SENTENCE)
    state["base"] = dict(state["values"])
    state["sentence"] = PRIMER_SENTENCE
    state["version"] += 1
    state["notes"] = []


def model_from(values: dict[str, np.ndarray]) -> Model:
    """The §5 model with the reader's weight matrices (validated and frozen by Model)."""
    base = hand_model()
    params = dict(base.params) | {f"blocks.0.attn.{name}": values[name] for name in MATRICES[1:]}
    return Model(config=base.config, params=params, vocabulary=base.vocabulary, prompt=base.prompt)


def what_if(state: dict, tokens: list[str]) -> bool:
    """The 'What-if' switch and, when on, bounded editors for X and the four weights; True while they are open.

    An invalid edit gives a message and keeps the last valid matrix.
    """
    if not st.toggle("What-if: edit the input rows and weights", key="qkv_edit"):
        return False
    dims = [f"d{i + 1}" for i in range(EXAMPLE.W_Q.shape[0])]
    config = {
        c: st.column_config.NumberColumn(c, min_value=-EDIT_BOUND, max_value=EDIT_BOUND, step=0.001, format="%.3f")
        for c in dims
    }
    st.caption(
        f"Numbers between −{EDIT_BOUND:g} and {EDIT_BOUND:g}. Everything below updates; an empty or impossible "
        "entry is refused and the last valid matrix is kept. 'Reset to the primer' undoes all edits."
    )
    left, right = st.columns(2)
    places = (left, right, left, right, left)  # X, then the four weights two per row
    for place, name in zip(places, MATRICES, strict=True):
        with place:
            st.markdown(f"**{LABELS[name]}**")
            frame = matrix_frame(state["base"][name], tokens if name == "X" else dims, dims)
            edited = st.data_editor(
                frame, key=f"qkv_edit_{name}_{state['version']}", column_config=config, num_rows="fixed"
            )
            import pandas as pd  # only once the reader edits a value

            values = pd.DataFrame(edited).apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
            reason = problem(values) if values.shape == state["base"][name].shape else "rows were added or removed"
            if reason:
                st.error(f"{name} not applied: {reason}. The page keeps the last valid {name}.")
            else:
                state["values"][name] = values
    return True


def settle(state: dict, editors_open: bool) -> None:
    """End of a run: editors closed start from the current values next time; edited matrices go into the URL."""
    if not editors_open and any(not np.array_equal(state["base"][n], state["values"][n]) for n in MATRICES):
        state["base"] = dict(state["values"])
        state["version"] += 1
    defaults = primer_values(state["sentence"])
    for name in MATRICES:
        key = f"qkv_{name}"
        if np.array_equal(state["values"][name], defaults[name]):
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != encode(state["values"][name]):
            st.query_params[key] = encode(state["values"][name])


def draw_count() -> int:
    """How many times the reader pressed 'sample' (kept in the URL so a link shows the same draw)."""
    try:
        return int(lr.read_number(st.query_params.get("qkv_draws", "0"), 0, MAX_DRAWS, whole=True))
    except lr.Refused:
        return 0  # read_link has named the link's value; a later hand edit of the address starts again at 0


def draw_once() -> None:
    """Button callback: one more draw."""
    st.query_params["qkv_draws"] = str(draw_count() + 1)
