"""Overview page: a briefing. The point in one sentence, the whole model in one clickable picture (primer §7) with
live shapes, five takeaways with live numbers and links, which defaults reproduce the primer, and a briefing file.

Thin page: everything is computed once per process in ui/overview/views.py (nothing here depends on the reader's input).
"""

from urllib.parse import parse_qsl

import streamlit as st

from ui.elements import html_element
from ui.elements.briefing import app_url, download
from ui.elements.glossary import link
from ui.elements.navigation import GLOSSARY, HOME, PAGES
from ui.elements.widgets import chart, explain, setup_page
from ui.overview import views as brief

setup_page(HOME)
st.markdown(brief.lead())
with st.container(border=True, key="plain-words"):
    st.markdown(brief.plain_words())
url = app_url()
download(lambda: brief.briefing(url), file_name="transformer-briefing.html")

st.subheader("The whole model in one picture")
st.caption(
    f"Primer §7's data flow through our trained model for the prompt *{' '.join(brief.PROMPT)}* (T = "
    f"{len(brief.PROMPT)} tokens). {brief.shapes_note()} The arrows are the {link('residual-stream')}: every "
    "block reads it and adds a correction. Select a box to open that step in the two-layer trace."
)
with st.container(key="pipeline"):
    html_element.draw_html(brief.pipeline_html(brief.pipeline()))

st.subheader("Five takeaways")
for number, item in enumerate(brief.takeaways(), start=1):
    with st.container(border=True):
        st.markdown(f"**{number}. {item.title}.** {item.sentence}")
        page, _, query = item.href.partition("?")
        st.page_link(
            f"pages/{page}.py",
            label=f"Open {item.page}",
            icon=":material/arrow_forward:",
            query_params=dict(parse_qsl(query)),
        )

chart(brief.ablation_figure(), key="overview-ablation", alt=brief.ablation_alt())
explain(brief.ablation_what(), brief.ablation_why())

st.subheader("Which defaults reproduce the primer")
st.markdown(brief.honesty())

st.subheader("What each page lets you see")
for spec in PAGES:
    st.page_link(spec.script, label=f"**{spec.title}**: {spec.summary}", icon=spec.icon)
st.page_link(GLOSSARY.script, label=f"**{GLOSSARY.title}**: {GLOSSARY.summary}", icon=GLOSSARY.icon)
