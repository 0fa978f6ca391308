"""Glossary page: the primer's Appendix C, one anchored entry per term so other pages can link to it."""

import streamlit as st

from ui.glossary import terms
from ui.navigation import GLOSSARY
from ui.widgets import setup_page

setup_page(GLOSSARY)
st.markdown(
    "The terms the pages use, in the order the primer introduces them. The ⓘ tooltips on every page show the same text."
)
for key, entry in terms().items():
    st.subheader(entry["term"], anchor=key)
    st.markdown(entry["definition"])
