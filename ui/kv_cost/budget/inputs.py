"""The budget's questions: the day's traffic shape (a named one or the reader's 24 hourly values), a fixed or an
autoscaled fleet, monthly growth and the horizon, and the figures of every way to pay (each GPU type's presets from
core.plan.payment unless the reader typed their own). Kept in the session and the link; a value the engine refuses is
named and the last valid budget's inputs stay."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import streamlit as st

from core.plan import budget, daily, payment
from core.plan import serving as sv
from ui.kv_cost.settings import (
    BUDGET_KEYS,
    CHEAPEST,
    CURVE,
    FLEET,
    MONTHS,
    NUMBERS,
    OWN_CURVE,
    PAY_FIELDS,
    PAY_KEYS,
    SHAPE,
    WAY,
    choices,
    memory,
)
from ui.kv_cost.state import keep_in_link, number_field, select_field, typed_value

PAY_OPEN = "kv_pay_open"
PAY_LABEL = "Figures for each way to pay: reserved discounts, buying and running servers (presets with sources)"
KEPT = {"bind": None, "persist_state": "session"}
DEFAULT_SHAPE = next(iter(daily.SHAPES))


@dataclass(frozen=True)
class Inputs:
    """What the budget is computed from besides the plan: the day's curve, the fleet, the growth and the payment."""

    shape: str
    curve: tuple[float, ...]
    fleet: daily.Fleet
    growth: budget.Growth
    payment: payment.Payment
    typed: frozenset[str] = frozenset()  # the payment figures the reader typed ('your figure')
    way: str = CHEAPEST  # the way to pay the reader picked, or the cheapest over the horizon


def read_curve(text: str) -> tuple[tuple[float, ...] | None, str | None]:
    """The reader's 24 hourly values ('0.1, 0.2, …' or one per line) as numbers, or why they cannot be used."""
    parts = [p for p in text.replace(";", ",").replace("\n", ",").split(",") if p.strip()]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        return None, f"the curve must be {daily.HOURS} numbers separated by commas, each a share of the busiest hour"
    problem = daily.curve_problem(values)
    return (None, problem) if problem else (values, None)


def traffic() -> None:
    """The day's shape, the fleet, growth and the horizon, in two rows (the autoscaling limits only when they apply)."""
    row = st.columns(4)
    with row[0]:
        select_field("Traffic through the day", SHAPE, _shape_help(), **KEPT)
    with row[1]:
        select_field(
            "Fleet",
            FLEET,
            "Fixed: the copies the peak needs, up all day. Autoscaling: each hour the copies that hour's traffic "
            "needs, between a fewest and a most, each new copy paying a warm-up before its hour.",
            **KEPT,
        )
    number_field("growth", row[2], **KEPT)
    with row[3]:
        select_field("Horizon (months)", MONTHS, "How many months the budget covers.", **KEPT)
    if st.session_state.get(SHAPE, DEFAULT_SHAPE) == OWN_CURVE:
        st.text_input(
            f"Your hourly curve: {daily.HOURS} shares of the busiest hour, midnight first (the busiest at 1)",
            key=CURVE,
            help="Each hour's requests divided by the busiest hour's, for example from your gateway's logs.",
            **KEPT,
        )
    row = st.columns(4)
    with row[0]:
        select_field(
            "Way to pay",
            WAY,
            "The way this scenario pays (its cards, its row among the scenarios, the workbook's chosen line); the "
            "chart and the table show every way.",
            **KEPT,
        )
    if st.session_state.get(FLEET) == "autoscale":
        for column, key in zip(row[1:], ("min_copies", "max_copies", "scale_minutes"), strict=True):
            number_field(key, column, **KEPT)


def _shape_help() -> str:
    return (
        daily.shapes_note()
        + " "
        + " ".join(f"{info['label']}: {info['description']}" for info in map(daily.shape_info, daily.SHAPES))
    )


def _on_pay_typed(key: str) -> None:
    memory().pay_own[key] = float(st.session_state[key])


def pay_fields(gpu_id: str) -> None:
    """The figures of every way to pay, drawn only while their expander is open: each GPU type's presets, with the
    source under each field, or the reader's own figure ('your figure')."""
    own = memory().pay_own
    presets = payment.sources(gpu_id)
    for key, name in zip(PAY_KEYS, PAY_FIELDS, strict=True):
        if key not in own:  # a new GPU brings its own presets into the fields the reader has not typed
            st.session_state[key] = presets[name].value
    box = st.expander(PAY_LABEL, key=PAY_OPEN, on_change="rerun")
    if not box.open:
        return
    with box:
        st.caption(
            "Each figure starts at its preset for this GPU type; type your own to replace it. The API's prices are "
            "the ones in Build vs buy."
        )
        cols = st.columns(3)
        for index, (key, name) in enumerate(zip(PAY_KEYS, PAY_FIELDS, strict=True)):
            column = cols[index % 3]
            _pay_field(key, column)
            source = presets[name].text.replace("$", "\\$")  # the asset's own words; a dollar sign stays literal
            column.caption("your figure" if key in own else f"{presets[name].status}: {_short(source)}", help=source)
        if own:
            st.button("Use the presets again", key="kv-pay-presets", on_click=own.clear)


def _pay_field(key: str, column: object) -> None:
    number_field(key, column, format="%.4g", on_change=lambda: _on_pay_typed(key), **KEPT)


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def inputs_from(
    values: dict, own: dict[str, float], gpu_id: str, api: sv.ApiPrice, peak_rpm: float
) -> tuple[Inputs | None, list[str]]:
    """The budget's inputs from its fields' values (shape, curve text, fleet, months and the numbers by key) and the
    reader's own payment figures (by key; every other figure is the GPU type's preset), or every value the engine
    cannot use, named (a growth is checked against the first month's peak rate, `peak_rpm`)."""
    shape = values[SHAPE]
    curve, problem = (
        (tuple(float(v) for v in daily.shape(shape)), None) if shape != OWN_CURVE else read_curve(values[CURVE])
    )
    problems = [f"Your hourly curve: {problem}"] if problem else []
    autoscale = values[FLEET] == "autoscale"
    fleet = (  # a fixed fleet has no limits: the autoscaling fields keep their values for when they apply
        daily.Fleet(
            autoscale=True,
            min_copies=int(values["min_copies"]),
            max_copies=int(values["max_copies"]) or None,
            scale_up_minutes=float(values["scale_minutes"]),
        )
        if autoscale
        else daily.Fleet()
    )
    if why := daily.fleet_problem(fleet):
        problems.append(f"Fleet: {why}")
    growth = budget.Growth(float(values["growth"]), int(values[MONTHS]))
    if why := budget.growth_problem(growth, peak_rpm):
        problems.append(f"Growth: {why}")
    presets = payment.sources(gpu_id)
    figures = {name: own.get(f"pay_{name}", presets[name].value) for name in PAY_FIELDS}
    owning = payment.Owning(**{k: v for k, v in figures.items() if not k.startswith("reserved")})
    pay = payment.Payment(figures["reserved_1y_discount"], figures["reserved_3y_discount"], owning, api)
    problems += [f"Ways to pay: {why}" for why in payment.payment_problem(pay)]
    if problems or curve is None:
        return None, problems
    return Inputs(shape, curve, fleet, growth, pay, frozenset(own), str(values[WAY])), problems


def page_values() -> dict:
    """The budget's fields as the session holds them (defaults where the reader has set nothing)."""
    return {
        SHAPE: st.session_state.get(SHAPE, DEFAULT_SHAPE),
        CURVE: str(st.session_state.get(CURVE, "")),
        FLEET: st.session_state.get(FLEET, "fixed"),
        MONTHS: st.session_state.get(MONTHS, budget.HORIZONS[0]),
        WAY: st.session_state.get(WAY, CHEAPEST),
    } | {key: typed_value(key) for key in BUDGET_KEYS}


def read(gpu_id: str, api: sv.ApiPrice, peak_rpm: float) -> tuple[Inputs | None, list[str]]:
    """The budget's inputs from the session, and every value that cannot be used, named; the link follows. With a
    refused value the last valid inputs stay (None before the first)."""
    values = page_values()
    _to_link(values[SHAPE])
    made, problems = inputs_from(values, memory().pay_own, gpu_id, api, peak_rpm)
    if made is None:
        return memory().last_budget, problems
    memory().last_budget = made
    return made, problems


def _to_link(shape: str) -> None:
    """The budget's choices in the link: defaults left out, the reader's own payment figures only."""
    label = choices()
    shown = {
        SHAPE: None if shape == DEFAULT_SHAPE else label[SHAPE][1](shape),
        CURVE: str(st.session_state.get(CURVE, "")) or None if shape == OWN_CURVE else None,
        FLEET: None if st.session_state.get(FLEET, "fixed") == "fixed" else label[FLEET][1]("autoscale"),
        MONTHS: None
        if st.session_state.get(MONTHS, budget.HORIZONS[0]) == budget.HORIZONS[0]
        else str(st.session_state[MONTHS]),
        WAY: None if st.session_state.get(WAY, CHEAPEST) == CHEAPEST else label[WAY][1](st.session_state[WAY]),
    }
    numbers = {key: typed_value(key) for key in BUDGET_KEYS}
    shown |= {key: None if value == NUMBERS[key].default else str(value) for key, value in numbers.items()}
    own = memory().pay_own
    shown |= {key: f"{own[key]:g}" if key in own and math.isfinite(own[key]) else None for key in PAY_KEYS}
    keep_in_link(shown)


def hourly(curve: tuple[float, ...]) -> np.ndarray:
    """The curve as an array (for the engine)."""
    return np.asarray(curve, dtype=np.float64)
