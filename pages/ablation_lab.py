"""Ablation lab (primer Appendix A as an experiment bench): switch attention off, one head at a time, see what breaks.

Thin page: the bench's controls, bound to the URL (ui/ablation_lab/state.py) -> core.explain.analysis /
core.explain.experiments, cached on small keys -> the bench read-out and the open tab's figures and annotations
(ui/ablation_lab/views.py). Only the open tab is drawn, and a switch reruns only the bench and the tab (a fragment),
not the fixed text above. Default state = the primer's own example: <BOS> the cat is with layer 1, head 1 removed.
"""

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui.ablation_lab import views as lab
from ui.ablation_lab.state import TABS, controls
from ui.elements import leads
from ui.elements.navigation import PAGES
from ui.elements.widgets import open_tab, setup_page

setup_page(next(spec for spec in PAGES if spec.script == "pages/ablation_lab.py"))
st.markdown(f"{leads.our_model()}\n\n{lab.plain_words()}")  # whose model, then what the page shows, in words
lead = leads.slot()
leads.words("ablation_lab")
lab.method_box()


@st.fragment
def workbench(lead: DeltaGenerator) -> None:
    """The bench's controls, its read-out, the lead above (written in place) and the open tab: a switch or a tab
    reruns only this part, not the page's fixed text."""
    setting = controls()
    lead.markdown(leads.ablation(setting.name, setting.removed, setting.off, lab.sweep()))
    lab.bench(setting)
    open_tab(TABS, lab.VIEWS, setting)


workbench(lead)
