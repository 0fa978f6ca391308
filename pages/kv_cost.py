"""KV-cache cost calculator and deployment planner: from the primer's formula (§3–4) to GPUs, concurrent users,
a workload's monthly bill, $ per 1M input and output tokens, and build vs buy.

The workload first: what a planner knows (model, peak requests per minute, prompt and answer tokens, the first
token's target, the GPU types allowed) -> the planner's search (core.plan.search, cached) -> the plan as the answer,
its runners-up and why it won (ui/kv_cost/plan_view.py). Every section below reads the same scenario.

Thin page: the scenario (widgets whose values the session and the URL hold, ui/kv_cost/state.py) -> the engine
(core.plan.kv_cache, core.plan.serving, core.plan.model_config) -> its answer, formula, charts, tables and sections
(ui/kv_cost/). Only what the reader opens is drawn: the memory calculator (an expander below the plan: its answer,
selectors, sizes, formula, chart tabs and side-by-side table), the open chart tab, the section picked below it
(workload, build vs buy, calibration, budget by month, memory levers, anatomy, sources, latency under load; none until
one is picked), the search and engine settings and your own model while their expanders are open. The sizes and
everything they feed are one fragment, so the calculator's main control (context ±) reruns only that part. The
calculator's default = the primer's example (7B, 32K context, FP16 -> 17.18 GB = 16.00 GiB)."""

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
from ui.kv_cost import charts, latency, numbers, plan_view, planner, scenario, settings, tables
from ui.kv_cost import link as shared_link
from ui.kv_cost import sections as reference
from ui.kv_cost import state as inputs
from ui.kv_cost.budget import compare as budget_compare
from ui.kv_cost.budget import section as budget_section

SPEC = next(spec for spec in PAGES if spec.script == "pages/kv_cost.py")
opened = setup_page(SPEC)
shared_link.read_link(SPEC.path, opened=opened)
shared_link.link_notes()
plan_answer, plan_inputs = st.container(), st.container()  # the answer first, above the inputs (on a phone too)
with plan_inputs:
    plan_view.inputs()
    engine = inputs.engine_settings()
    model_id = st.session_state.get("model", inputs.PRIMER)
    fields = inputs.own_model(model_id)
choice = {"model": model_id} | inputs.calculator_values() | engine
planned = scenario.model_config(model_id, fields)
workload = scenario.workload(planned, model_id)
found = plan_view.run_search(planned, choice, workload[0])
with plan_answer:
    plan_view.answer(planned, found, workload[0])
with plan_inputs:
    plan_view.details(found)
briefing_box = st.container()  # the briefing's download, under the plan (the fragment fills it)
leads.words("kv_cost")
if settings.CALCULATOR_OPEN_KEY not in st.session_state and settings.memory().calculator_open:
    st.session_state[settings.CALCULATOR_OPEN_KEY] = True  # back from another page: open as the reader left it
calculator = st.expander(settings.CALCULATOR_LABEL, key=settings.CALCULATOR_OPEN_KEY, on_change="rerun")
settings.memory().calculator_open = calculator.open
inputs.keep_in_link({settings.CALCULATOR: settings.CALCULATOR_OPEN if calculator.open else None})
answer = sizes_column = None
if calculator.open:  # drawn only while open: the plan's first screen stays light
    with calculator:
        answer = leads.slot()  # the memory calculator's answer, above its inputs
        st.markdown(
            "The plan above is sized by the peak requests per minute; this calculator counts concurrent users "
            f"instead (the primer's example, {inputs.primer_example()}, one click away) and does not change the "
            f"plan. Primer §3 explains why only K and V are kept: every new token looks back at the {link('kv-cache')} "
            "of all earlier tokens. Here, the primer's size formula in full: memory per GPU, how many users fit, how "
            "many GPUs they need. Every number follows from the choices on this page, and the page's address holds "
            "all of them: copy the link to share the scenario."
        )
        st.button(
            f"Show the primer's example ({inputs.primer_example()})",
            on_click=inputs.load_primer_example,
            type="primary",
        )
        sizes_column = inputs.calculator_widgets(kv_help=tip("kv-cache"))


@st.fragment
def scenario_results(
    calculator: DeltaGenerator | None,
    answer: DeltaGenerator | None,
    choice: dict,
    fields: dict,
    sizes_column: DeltaGenerator | None,
    workload: tuple,
    found: object,
) -> None:
    """The sizes (context and users, in their column of the calculator) and all they feed: the calculator's answer,
    formula, charts and table while it is open, the briefing, and the picked section. A size, a compared model, a tab
    or a section reruns only this part; the selectors and expanders above rerun the page."""
    if scenario.workload(scenario.model_config(choice["model"], fields), choice["model"], quiet=True) != workload:
        st.rerun(scope="app")  # a workload field of a section changed: the plan at the top follows
    load, api, peak = workload
    choice = choice | (inputs.size_widgets(sizes_column) if sizes_column else inputs.size_values())
    config, deployment = scenario.resolve(choice, fields)
    result = kv.plan(config, deployment)
    plan = getattr(found, "plan", None)
    if calculator is not None:
        with answer:
            headline = leads.kv_cost(config, deployment, result)
            answer_view.headline(headline, config, deployment, result, auto=scenario.tp_is_auto())
            answer_view.context_warning(config, deployment.context)  # the answer's caveat, under its numbers
        with calculator:
            charts.formula(config, deployment, result)
            inputs.compare_widget()
    compared = numbers.compared_rows(config, deployment, inputs.compared_models())
    if calculator is not None:
        with calculator:
            open_tab(settings.VIEWS, charts.VIEW_SECTIONS, compared)
            tables.comparison_table(compared)
    with briefing_box:
        url, here, money = app_url(), scenario_link(SPEC.url_path), budget_compare.link_values()
        download(
            lambda: kv_briefing.briefing(
                config,
                deployment,
                result,
                compared,
                url=url,
                link=here,
                planned=(config, found, load, api, peak),
                budget=money,
            ),
            file_name="kv-cost-briefing.html",
        )
    plan_dep = plan_view.plan_deployment(choice, plan) if plan else None
    sections = (  # in the order of settings.SECTIONS; only the picked one runs
        lambda: (
            planner.workload_section(config, plan_dep, load, plan, plan_view.whose(found))
            if plan
            else plan_view.needs_a_plan("Workload and bill")
        ),
        lambda: planner.build_vs_buy_section(
            config, planner.plan(config, plan_dep, load)[0] if plan else None, load, api, peak
        ),
        lambda: planner.calibration_section(deployment),
        lambda: (
            budget_section.draw(config, choice["model"], load, plan, api.price, plan_view.page_search_args(choice))
            if plan
            else plan_view.needs_a_plan("Budget by month")
        ),
        lambda: reference.finance(config, deployment, kv.budget_effects(config, deployment)),
        lambda: reference.anatomy(config, deployment, result),
        lambda: reference.sources(choice["model"], config, deployment.gpu),
        lambda: latency.section(config, plan_dep or deployment, load),
    )
    picked = inputs.section_picker()  # none by default: the page opens on its answer, the planner on a click
    if picked is not None:
        dict(zip(settings.SECTIONS, sections, strict=True))[picked]()


scenario_results(calculator if calculator.open else None, answer, choice, fields, sizes_column, workload, found)
