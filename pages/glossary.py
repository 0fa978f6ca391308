"""Glossary page: the primer's Appendix C as printed, then the dashboard's own terms, one anchored entry per term.

A link from another page (`?term=kv-cache`) opens the page on that term: its definition first, then the full list.
"""

import streamlit as st

from ui.elements.glossary import DASHBOARD, PRIMER, TERM_PARAM, entries_markdown, matches, terms
from ui.elements.navigation import GLOSSARY
from ui.elements.widgets import setup_page

setup_page(GLOSSARY)
entries = terms()
counts = {origin: sum(entry["origin"] == origin for entry in entries.values()) for origin in (PRIMER, DASHBOARD)}
st.markdown(
    f"**{len(entries)} terms in plain words:** the primer's {counts[PRIMER]} (its Appendix C) and "
    f"{counts[DASHBOARD]} of the dashboard's own, marked as such, for words the pages use that the primer does not "
    "define. The (?) help icons beside the controls show the same text."
)
asked = st.query_params.get(TERM_PARAM)
if asked is not None:
    if asked in entries:
        entry = entries[asked]
        with st.container(border=True, key="asked-term"):
            st.subheader(entry["term"], anchor=False)
            st.markdown(entry["definition"])
            if entry["origin"] == DASHBOARD:
                st.caption("The dashboard's own term, not in the primer's glossary.")
    else:
        st.warning("This link asks for a glossary term that does not exist; the full glossary is below.")
        st.text(f"Term asked for: {asked[:60]}")

wanted = st.text_input("Find a term", key="glossary_find", placeholder="e.g. cache, GQA, held out")
shown = {key: entry for key, entry in entries.items() if matches(entry, wanted)}
if not shown:
    st.text(f"No term or definition contains “{wanted.strip()[:60]}”.")

st.header("The primer's glossary (Appendix C)", anchor="primer-terms")
entries_markdown(shown, PRIMER)
st.header("The dashboard's own terms", anchor="dashboard-terms")
st.caption("Not in the primer: words the dashboard's pages use, defined by the dashboard.")
entries_markdown(shown, DASHBOARD)
