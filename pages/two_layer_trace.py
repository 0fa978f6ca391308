"""Two-layer trace (primer §6 and §7): one prompt through the trained model of §6's shape, every matrix with its shape.

Thin page: prompt -> one cached forward pass -> the open tab's views (ui/two_layer_trace/). Only the selected
step's matrices and the open tab are drawn, so an interaction reruns in a few milliseconds.
"""

import streamlit as st

from core.explain.weights import trained_model
from ui.elements import leads
from ui.elements.navigation import PAGES
from ui.elements.widgets import setup_page
from ui.two_layer_trace.prompt import prompt_builder
from ui.two_layer_trace.results import cached_trace
from ui.two_layer_trace.state import read_link
from ui.two_layer_trace.views import VIEWS, headline, plain_words

setup_page(next(spec for spec in PAGES if spec.script == "pages/two_layer_trace.py"))
model = trained_model()
read_link(model, list(VIEWS))
words_slot = st.empty()  # whose model this is, then what the page shows in words: filled once the prompt is read
lead = leads.slot()
leads.words("two_layer_trace")
tokens = prompt_builder(model)
words_slot.markdown(f"{leads.our_model()}\n\n{plain_words(model, tokens)}")
trace = cached_trace(tokens)
with lead:
    headline(model, trace, tokens)
for tab, view in zip(st.tabs(list(VIEWS), key="trace_view", bind="query-params"), VIEWS.values(), strict=True):
    if tab.open:
        with tab:
            view(model, trace, tokens)
