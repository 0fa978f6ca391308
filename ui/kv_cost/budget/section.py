"""The "Budget by month" section as the page draws it: the budget of the page's plan, the scenarios side by side, and
the workbook of them all (core.plan.workbook: assumptions as named cells, the plan as live formulas, the sources)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.plan import daily, search, workbook
from core.plan import serving as sv
from core.plan.model_config import ModelConfig
from ui.kv_cost.budget import compare, view
from ui.kv_cost.budget import scenarios as sc
from ui.kv_cost.settings import OWN_CURVE


def workbook_inputs(r: sc.Resolved) -> workbook.BudgetInputs:
    """A compared scenario as the workbook's inputs, each figure the reader typed marked as theirs."""
    made = r.made
    typed = {key.removeprefix("pay_") for key in made.typed}
    typed |= {"curve"} if made.shape == OWN_CURVE else set()
    typed |= {"api"} if r.own_api else set()
    typed |= {"price_per_gpu_hour"} if r.own_price else set()
    return workbook.BudgetInputs(
        name=r.name,
        model=r.config.name,
        gpu=r.plan.gpu.id,
        tp=r.plan.tp,
        engine=r.engine,
        workload=r.load,
        capacity=daily.Capacity.of(r.plan, r.load),
        curve=np.asarray(made.curve, dtype=np.float64),
        fleet=made.fleet,
        growth=made.growth,
        payment=made.payment,
        shape=None if made.shape == OWN_CURVE else made.shape,
        typed=frozenset(typed),
    )


def workbook_file(rows: list[sc.Resolved]) -> bytes:
    """The workbook of every compared scenario over its own horizon."""
    made = []
    for r in rows:
        own = view.compute(r.config, r.model_id, r.load, r.plan, r.made, r.args).budget
        made.append((r.name, workbook_inputs(r), own))
    return workbook.workbook_bytes(made)


def draw(
    config: ModelConfig, model_id: str | None, load: sv.Workload, plan: search.Candidate, api: sv.ApiPrice, args: tuple
) -> None:
    """The budget, the scenarios, and the workbook's download."""
    if view.section(config, model_id, load, plan, api, args) is None:
        return
    rows = compare.section()
    if not rows:
        st.caption("The workbook needs a scenario the page can plan: a published model (not your own).")
        return
    if not workbook.available():
        st.caption(
            "The workbook cannot be written here: this installation lacks XlsxWriter, the package that writes it "
            "(listed in requirements.txt). Every figure on the page is unaffected."
        )
        return
    st.download_button(
        "Download the workbook (xlsx)",
        lambda: workbook_file(rows),
        file_name="kv-budget.xlsx",
        mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        on_click="ignore",
        icon=":material/download:",
        help="Assumptions as named cells with their sources, each scenario's plan as live formulas over them "
        "(change a price and every total follows), and the sources.",
    )
