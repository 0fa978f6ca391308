"""QKV walkthrough (primer §2–5): one attention head step by step, temperature and sampling, the KV cache at work.

Thin page: the reader's scenario -> the engine (core) -> the open tab's sections (ui/qkv_walkthrough/views.py; inputs,
URL and validation in ui/qkv_walkthrough/state.py). Only the open tab and the chosen step are drawn.
"""

import streamlit as st

from core.explain.kv_generation import check_against_forward, generate
from core.explain.sampling import next_token_distribution, sample
from core.explain.transformer import forward
from ui.elements import leads
from ui.elements.navigation import PAGES
from ui.elements.widgets import setup_page
from ui.qkv_walkthrough import kv_cache as cache
from ui.qkv_walkthrough import readout
from ui.qkv_walkthrough import views as show
from ui.qkv_walkthrough.state import EXAMPLE, SECTIONS, model_from, page_state, read_link, settle, what_if

setup_page(next(spec for spec in PAGES if spec.script == "pages/qkv_walkthrough.py"))
read_link()
lead = leads.slot()
leads.words("qkv_walkthrough")
show.intro()
sentence, scale, causal = show.scenario()
state = page_state(sentence)
tokens = sentence.split()
tabs = st.tabs(SECTIONS, key="qkv_section", bind="query-params")
editing = False


@st.fragment
def walk(values: dict, tokens: list[str], scale: bool, causal: bool) -> None:
    """The step selector and the chosen step's matrices: moving to another step reruns only this part."""
    step = show.step_selector()
    model, X = model_from(values), values["X"]
    trace = forward(model, embeddings=X, scale=scale, causal=causal)
    default = trace if scale and causal else forward(model, embeddings=X)
    show.show_step(step, show.Walk(trace, default, tokens, scale, causal))


if tabs[0].open:
    with tabs[0]:
        editing = what_if(state, tokens)
        walk(state["values"], tokens, scale, causal)

if tabs[1].open:
    with tabs[1]:
        choice = readout.read_out_controls()
        dist = next_token_distribution(EXAMPLE.illustrative_logits, choice.temperature, choice.top_k, choice.top_p)
        readout.probabilities(dist, choice.temperature)
        seed, n = readout.sampler(choice.method)
        readout.decision(dist, choice.method, sample(dist.final, seed, n), seed)

if tabs[2].open:
    with tabs[2]:
        model = model_from(state["values"])
        prefill, X, names = cache.cache_controls(state["values"]["X"], tokens, causal)
        run = generate(model, X, prefill, scale=scale)
        chosen = cache.generation_step(run)
        cache.cache_grid(run, chosen, names)
        cache.cache_step(run.steps[chosen], names)
        cache.proof(run, chosen, check_against_forward(model, X, run, scale=scale))
        cache.cache_size(model.config, len(names))

lead_trace = forward(model_from(state["values"]), embeddings=state["values"]["X"], scale=scale, causal=causal)
lead.markdown(leads.qkv(lead_trace["blocks.0.attn.hook_pattern"][0], tokens))
settle(state, editing)
