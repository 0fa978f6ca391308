"""The app's shell: navigation built from the page registry, and the guard that routes cold deep links through it."""

from __future__ import annotations

import streamlit as st

from ui.elements.navigation import GLOSSARY, HOME, PAGES

NAVIGATION_READY = "_navigation_ready"


def navigation() -> st.navigation:
    """Declare the app's pages (absolute paths, so it works whichever script Streamlit started from)."""
    pages = [st.Page(HOME.path, title=HOME.title, default=True)]
    pages += [st.Page(spec.path, title=spec.title, url_path=spec.url_path) for spec in (*PAGES, GLOSSARY)]
    return st.navigation(pages)


def run_app() -> None:
    """What app.py does on every run: page config, navigation, then the page the URL asks for."""
    st.set_page_config(page_title="Transformer primer dashboard", layout="wide")
    st.session_state[NAVIGATION_READY] = True
    navigation().run()


def ensure_navigation() -> None:
    """Send a page that was started without app.py back through app.py's navigation.

    With a folder named pages/, Streamlit serves the first request after a server start with its legacy
    file-name router: a deep link then runs the page script alone, under an automatic sidebar. Declaring the
    real navigation switches that router off for the server, and the rerun goes through app.py.
    """
    if NAVIGATION_READY not in st.session_state:
        st.session_state[NAVIGATION_READY] = True
        navigation()
        st.rerun()
