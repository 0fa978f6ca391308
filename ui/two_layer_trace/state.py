"""The two-layer trace's link: every value it carries is checked before the widgets read it (`read_link`).

The prompt is kept as typed text; the temperature, layer, shape-table row and open tab as their labels. The row's
radio shows each step with its live shape, so it is not bound to the link (its labels change with the prompt's
length): the page writes the step's name into the link and reads a step from a link itself (`step_into_link`,
`step_from_link`).
"""

from __future__ import annotations

import streamlit as st

from core.explain.trace_views import MAX_TOKENS, ShapeRow, parse_prompt, shape_table
from core.explain.transformer import Model
from ui.elements import link_reader as lr

PAGE = "trace"
STEP = "trace_step"  # the shape-table row: the radio's key (a row's key) and the link's parameter (its step name)
_LINKED = "trace_step_linked"  # the step name last read from or written into the link
MAX_PROMPT_CHARS = 400  # a prompt of MAX_TOKENS words fits in far fewer
TAU_RANGE = (0.1, 3.0)  # the temperature slider's bounds


def read_link(model: Model, views: list[str]) -> None:
    """Check the link's values before any widget reads them; a refused one is named in the page's one notice."""
    rows = shape_table(model.config, 1)
    params = {
        "trace_prompt": lr.text(
            lambda text: parse_prompt(text, model.vocabulary, MAX_TOKENS),
            limit=MAX_PROMPT_CHARS,
            instead="the default prompt is traced",
        ),
        "trace_tau": lr.number(*TAU_RANGE, default=1.0),
        "trace_layer": lr.choice([f"Layer {i + 1}" for i in range(model.config.n_layers)], default="Layer 1"),
        "trace_step": lr.choice(
            [row.step for row in rows], aliases={row.key: row.step for row in rows}, default=rows[0].step
        ),
        "trace_view": lr.choice(views, default=views[0]),
    }
    lr.read_link(PAGE, params)
    lr.link_notice(PAGE)


def step_from_link(table: list[ShapeRow]) -> None:
    """Before the row radio: a step name in the link that the page did not write itself (a shared link, or an in-app
    link from the overview) selects its row; one that names no row is named in the link notice."""
    wanted = st.query_params.get(STEP)
    if wanted is None or wanted == st.session_state.get(_LINKED):
        return
    st.session_state[_LINKED] = wanted
    key = next((row.key for row in table if row.step == wanted), None)
    if key is None:
        lr.add_notes(PAGE, [lr.refusal(STEP, wanted, "it names no row of the shape table", "the row shown is kept")])
    else:
        st.session_state[STEP] = key


def step_into_link(row: ShapeRow, first: ShapeRow) -> None:
    """After the row radio: the link names the picked row's step, or none for the table's first row (the default)."""
    wanted = None if row.key == first.key else row.step
    if st.query_params.get(STEP) != wanted:
        if wanted is None:
            del st.query_params[STEP]
        else:
            st.query_params[STEP] = wanted
    st.session_state[_LINKED] = wanted
