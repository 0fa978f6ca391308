"""CNN vs head (primer §1 and Appendix B): a convolution filter's fixed 3×3 window next to an attention head's.

Thin page: the inputs (ui/cnn_vs_head/state.py) -> Appendix B's network (core.explain.conv, one cached trace) -> the
open step's views (ui/cnn_vs_head/views.py). Only the open tab is drawn and the pixel boxes only while "Edit pixels" is
on; the window's controls and the tabs are one fragment, so moving the window reruns only them.
"""

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.explain.conv import ConvTrace
from ui.cnn_vs_head import views
from ui.cnn_vs_head.state import STEPS, filter_editor, image_picker, pixel_editor, read_link, window_picker
from ui.elements import leads
from ui.elements.glossary import link
from ui.elements.navigation import PAGES
from ui.elements.widgets import setup_page

setup_page(next(spec for spec in PAGES if spec.script == "pages/cnn_vs_head.py"))
read_link()
lead = leads.slot()
leads.words("cnn_vs_head")
st.markdown(
    f"An image-reading network slides small {link('convolution')} filters over the pixels; an "
    f"{link('attention-head')} lets each word choose which other words to read. Build an image and the filters "
    "below, follow it through the primer's Appendix B network step by step, then put the filter next to a head."
)
controls = st.columns([1.1, 1.2, 1.3], gap="large")
with controls[0]:
    image = image_picker()
    views.image_view(image)
    pixel_editor(image)
with controls[1]:
    filters = filter_editor()
trace = views.cached_trace(image, filters)
lead.markdown(leads.cnn(trace))


@st.fragment
def windowed(trace: ConvTrace, image: np.ndarray, filters: dict[str, np.ndarray], column: DeltaGenerator) -> None:
    """The window's controls (in the third column), the read-out and the open step: moving the window or switching
    the sliding filter reruns only this part, not the image and filter editors above."""
    with column:
        name, step, number = window_picker(image, filters)
        views.readout_box(trace)
    tabs = st.tabs(STEPS, key="view", on_change="rerun", bind="query-params")
    if tabs[0].open:
        with tabs[0]:
            views.sliding_window(trace, name, step, number)
    if tabs[1].open:
        with tabs[1]:
            views.feature_maps(trace)
    if tabs[2].open:
        with tabs[2]:
            views.readout(trace)
    if tabs[3].open:
        with tabs[3]:
            views.filter_vs_head(trace, name, step)


windowed(trace, image, filters, controls[2])
