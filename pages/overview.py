"""Overview page: the story of the primer in plain language, and a map of the dashboard's pages."""

import streamlit as st

from ui.glossary import link
from ui.navigation import GLOSSARY, HOME, PAGES
from ui.widgets import setup_page

setup_page(HOME)
st.markdown(
    "A Transformer language model reads a piece of text as a row of **tokens** and, for the last one, "
    "produces a probability for every possible next token. Everything in between is arithmetic on vectors "
    "that you can open up and inspect on these pages, from a five-number toy to a trained model small enough "
    "to print in full."
)
left, right = st.columns(2)
with left:
    st.subheader("The residual stream is the spine")
    st.markdown(
        f"Each token starts as a row of numbers, its {link('embedding')}. That row travels up through the "
        f"model as the {link('residual-stream')}: every block reads it and *adds* a correction, never "
        "replacing it. The prediction is read off the final state of the last token's row."
    )
with right:
    st.subheader("Attention is the only channel between tokens")
    st.markdown(
        f"Two kinds of block take turns. The {link('mlp')} reshapes each token on its own. An "
        f"{link('attention-head')} is the only place where one token's row can take information from "
        "another's: the query decides where to look, the key decides who answers, the value is what flows. "
        "Switch attention off and the model can no longer relate one word to another."
    )
st.subheader("What each page lets you see")
for spec in PAGES:
    st.page_link(spec.script, label=f"**{spec.title}**: {spec.summary}", icon=spec.icon)
st.page_link(GLOSSARY.script, label=f"**{GLOSSARY.title}**: {GLOSSARY.summary}", icon=GLOSSARY.icon)
st.info(
    "Every number on these pages is computed live by the dashboard's engine or loaded from a documented file; "
    "the default settings of each page reproduce the primer's own example, so you can read them side by side."
)
