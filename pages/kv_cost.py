"""KV-cache cost calculator and deployment planner: from the primer's formula (§3–4) to GPUs, concurrent users,
a workload's monthly bill, $ per 1M input and output tokens, and build vs buy.

Thin page: the scenario (widgets whose values the URL holds, ui/kv_cost/state.py) -> the engine (core.plan.kv_cache,
core.plan.serving, core.plan.model_config) -> its answer, formula, charts, tables and sections (ui/kv_cost/). Only
what the reader opens is drawn: the open chart tab, the section picked below the table (workload, build vs buy,
calibration, budget, anatomy, sources, latency under load; none until one is picked), the engine settings and your
own model's upload and fields while their expanders are open. The sizes and everything they feed are one fragment,
so the main control (context ±) reruns only that part. Default state = the primer's example (7B, 32K context, FP16
-> 17.18 GB = 16.00 GiB).
"""

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.plan import kv_cache as kv
from ui.elements import leads
from ui.elements.briefing import app_url, download, scenario_link
from ui.elements.glossary import link, tip
from ui.elements.navigation import PAGES
from ui.elements.widgets import open_tab, setup_page
from ui.kv_cost import answer as answer_view
from ui.kv_cost import briefing as kv_briefing
from ui.kv_cost import charts, latency, numbers, planner, scenario, settings, tables
from ui.kv_cost import link as shared_link
from ui.kv_cost import sections as reference
from ui.kv_cost import state as inputs

SPEC = next(spec for spec in PAGES if spec.script == "pages/kv_cost.py")
opened = setup_page(SPEC)
shared_link.read_link(SPEC.path, opened=opened)
shared_link.link_notes()
answer = leads.slot()  # the answer first, above the inputs (on a phone too)
leads.words("kv_cost")
st.markdown(
    f"Primer §3 explains why only K and V are kept: every new token looks back at the {link('kv-cache')} of all "
    "earlier tokens. This page turns the primer's size formula into a deployment plan: memory per GPU, how many "
    "users fit, how many GPUs you need and what a million generated tokens cost; the sections below the table plan a "
    "workload's monthly bill, weigh it against an API and show how close the time model comes to measured servers. "
    "Every number below follows from "
    "the choices in this box, and the page's address holds all of them: copy the link to share the scenario."
)
st.button("Show the primer's example (7B, 32K tokens, FP16)", on_click=inputs.load_primer_example, type="primary")
choice, sizes_column = inputs.scenario_widgets(kv_help=tip("kv-cache"))
fields = inputs.own_model(choice["model"])


@st.fragment
def scenario_results(answer: DeltaGenerator, choice: dict, fields: dict, sizes_column: DeltaGenerator) -> None:
    """The sizes (context and users, in their column above) and all they feed: the answer at the top, the formula,
    charts, table and the picked section. A size, a compared model, a tab or a section reruns only this part; the
    selectors and expanders above rerun the page."""
    choice = choice | inputs.size_widgets(sizes_column)
    config, deployment = scenario.resolve(choice, fields)
    result = kv.plan(config, deployment)
    load, api, *prices = scenario.workload(config)  # every run, so the link keeps the workload while it is closed

    auto = scenario.tp_is_auto()
    with answer:
        answer_view.headline(leads.kv_cost(config, deployment, result), config, deployment, result, auto=auto)
    charts.formula(config, deployment, result)

    others = inputs.compare_widget()
    compared = numbers.compared_rows(config, deployment, others)
    with answer:
        url, here = app_url(), scenario_link(SPEC.url_path)
        download(
            lambda: kv_briefing.briefing(config, deployment, result, compared, url=url, link=here),
            file_name="kv-cost-briefing.html",
        )
        answer_view.context_warning(config, deployment.context)  # the answer's caveat, under its numbers
    open_tab(settings.VIEWS, charts.VIEW_SECTIONS, compared)

    tables.comparison_table(compared)
    serving_dep = planner.workload_deployment(config, deployment, load, auto)
    sections = (  # in the order of settings.SECTIONS; only the picked one runs
        lambda: planner.workload_section(config, serving_dep, load, auto),
        lambda: planner.build_vs_buy_section(
            config, planner.plan(config, serving_dep, load)[0], load, api, tuple(prices)
        ),
        lambda: planner.calibration_section(deployment),
        lambda: reference.finance(config, deployment, kv.budget_effects(config, deployment)),
        lambda: reference.anatomy(config, deployment, result),
        lambda: reference.sources(choice["model"], config, deployment.gpu),
        lambda: latency.section(config, serving_dep, load),
    )
    picked = inputs.section_picker()  # none by default: the page opens on its answer, the planner on a click
    if picked is not None:
        dict(zip(settings.SECTIONS, sections, strict=True))[picked]()


scenario_results(answer, choice, fields, sizes_column)
