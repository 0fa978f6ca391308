"""Entry point: page config, navigation built from ui.navigation, and the home page's story of the primer."""

from __future__ import annotations

import streamlit as st

from ui.glossary import link
from ui.navigation import GLOSSARY, HOME, PAGES


def home() -> None:
    """The overview: what a Transformer does, the residual stream, attention as the only channel, the page map."""
    st.title(HOME.landmark)
    st.caption("An interactive companion to the primer *Transformers and QKV Attention*, for management and finance.")
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


def main() -> None:
    """Build the navigation from the page registry and run the page the URL asks for."""
    st.set_page_config(page_title="Transformer primer dashboard", layout="wide")
    pages = [st.Page(home, title=HOME.title, default=True)]
    pages += [st.Page(spec.script, title=spec.title, url_path=spec.url_path) for spec in PAGES]
    pages.append(st.Page(GLOSSARY.script, title=GLOSSARY.title, url_path=GLOSSARY.url_path))
    st.navigation(pages).run()


main()
