"""How it learned (primer §6): the shipped model's training replayed from its checkpoints, its eight siblings, and the
primer's discarded second rule reproduced, with the lesson that a metric scores only what it scores.

Thin page: the link is checked (ui/how_it_learned/state.py), then the open section is drawn
(ui/how_it_learned/views.py, discarded.py); the replay's step slider and what it moves rerun alone (a fragment, on a
timer while playing). Everything shown is read from assets/model/checkpoints.json, discarded_world.json and the
family's training logs: a step change is a lookup.
"""

import streamlit as st

from ui.elements import leads
from ui.elements.navigation import PAGES
from ui.elements.widgets import setup_page
from ui.how_it_learned.state import SECTION, SECTIONS, current_replay, read_link
from ui.how_it_learned.views import section_views

setup_page(next(spec for spec in PAGES if spec.script == "pages/how_it_learned.py"))
replay = current_replay()
read_link(replay)
st.markdown(leads.our_model())
lead = leads.slot()
leads.words("how_it_learned")
for tab, view in zip(st.tabs(SECTIONS, key=SECTION, bind="query-params"), section_views(), strict=True):
    if tab.open:
        with tab:
            view(replay, lead)
