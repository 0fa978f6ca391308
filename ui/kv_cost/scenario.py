"""The cost page's scenario resolved: the model and deployment the inputs describe (checked), and the workload, API and
prices of the planner's sections."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.plan import engines, serving
from core.plan import kv_cache as kv
from core.plan.model_config import (
    ModelConfig,
    config_from_fields,
    presets,
)
from ui.kv_cost.own_model import (
    CUSTOM,
    PRIMER,
    custom_name,
)
from ui.kv_cost.settings import AUTO, DEFAULTS, NUMBERS, PRICE_KEYS, WORKLOAD_KEYS, choices, memory
from ui.kv_cost.state import keep_in_link, number_field, select_field, typed_value


# --------------------------------------------------------------------------------------------------- validation
def resolve(choice: dict, fields: dict) -> tuple[ModelConfig, kv.Deployment]:
    """The scenario's model and deployment; an inconsistent one is named in an error and the last valid one kept."""
    problems: list[str] = []
    if choice["model"] == CUSTOM:
        config, problems = config_from_fields(fields, name=custom_name())
    else:
        config = presets()[choice["model"]]
    deployment = kv.Deployment(
        gpu=kv.gpus()[choice["gpu"]],
        tp=1 if choice["tp"] == AUTO else int(choice["tp"]),
        context=int(choice["context"]),
        users=int(choice["users"]),
        prefix=int(choice["prefix"]),
        kv_dtype=choice["kv_dtype"],
        weight_bits=int(choice["w_bits"]),
        utilisation=float(choice["util"]),
        block=int(choice["block"]),
        efficiency=float(choice["eff"]),
        price_per_gpu_hour=float(choice["price"]),
        mfu=float(choice["mfu"]),
        layer_overhead_s=float(choice["overhead"]) * 1e-6,
    )
    deployment = engines.with_engine(deployment, choice["engine"])  # issue 26: the engine's memory rule
    if scenario_issue := kv.scenario_problem(deployment):  # checked first: no plan can be made of such a scenario
        problems.append(f"{scenario_issue[0].upper()}{scenario_issue[1:]}.")
    if config is not None and choice["tp"] == AUTO and not scenario_issue:
        deployment = replace(deployment, tp=kv.smallest_tp(config, deployment) or 1)
    if config is not None and (tp_issue := kv.tp_problem(config, deployment.tp)):
        problems.append(f"{tp_issue[0].upper()}{tp_issue[1:]}; choose another number of GPUs per model copy.")
    if problems or config is None:
        st.error(
            "This scenario cannot be computed, so the last valid one is shown:\n\n"
            + "\n".join(f"- {message}" for message in problems)
        )
        return memory().last_valid or (presets()[PRIMER], kv.Deployment(gpu=kv.gpus()[DEFAULTS["gpu"]]))
    memory().last_valid = (config, deployment)
    return config, deployment


# --------------------------------------------------------------------------------------------------- the workload
def tp_is_auto() -> bool:
    """True when the page chose the GPUs per model copy (the reader left 'Auto')."""
    return st.session_state.get("tp", AUTO) == AUTO


def workload_widgets() -> None:
    """The workload's fields in three columns; drawn only while their section is open (values kept in the session)."""
    kept = {"bind": None, "persist_state": "session"}
    for row in (WORKLOAD_KEYS[:3], WORKLOAD_KEYS[3:]):  # row by row, so a phone stacks them in reading order
        for col, key in zip(st.columns(3), row, strict=True):
            number_field(key, col, **kept)


def _on_api_change() -> None:
    chosen = st.session_state.get("api")
    if chosen in serving.api_prices():
        price = serving.api_prices()[chosen]
        st.session_state["api_in"], st.session_state["api_out"] = price.input_per_m, price.output_per_m


def _on_price_edit() -> None:
    st.session_state["api"] = CUSTOM


def price_widgets() -> None:
    """The API to compare with: a preset (provider, model, date) or the reader's own prices per 1M tokens."""
    kept = {"bind": None, "persist_state": "session"}
    cols = st.columns(3)
    with cols[0]:
        select_field(
            "API to compare with",
            "api",
            "A provider's list price (with its date and source), or type your own.",
            on_change=_on_api_change,
            **kept,
        )
    number_field("api_in", cols[1], format="%.2f", on_change=_on_price_edit, **kept)
    number_field("api_out", cols[2], format="%.2f", on_change=_on_price_edit, **kept)


def workload(config: ModelConfig) -> tuple[serving.Workload, str, float, float]:
    """The workload and the API prices (values kept in the session and the link); a workload the model cannot serve
    (prompt + answer beyond its maximum context) is named by field and the last valid one kept."""
    first = next(iter(serving.api_prices()))
    api = st.session_state.get("api", first)
    values = {key: typed_value(key) for key in (*WORKLOAD_KEYS, *PRICE_KEYS)}
    keep_in_link(
        {key: None if value == NUMBERS[key].default else str(value) for key, value in values.items()}
        | {"api": None if api == first else choices()["api"][1](api)}
    )
    load = serving.Workload(
        requests_per_minute=float(values["rpm"]),
        prompt_tokens=int(values["prompt"]),
        output_tokens=int(values["answer"]),
        ttft_s=float(values["ttft"]),
        min_tokens_per_s=float(values["speed"]),
        hours_per_month=float(values["hours"]),
    )
    prices = (float(values["api_in"]), float(values["api_out"]))
    total = load.prompt_tokens + load.output_tokens
    if config.exceeds_context(total):
        st.error(
            f"Mean prompt ({load.prompt_tokens:,}) + mean answer ({load.output_tokens:,}) = {total:,} tokens is longer "
            f"than {config.name}'s maximum context of {config.max_context:,} tokens, so the last valid workload is "
            "shown."
        )
        load = memory().last_workload or serving.Workload()
    else:
        memory().last_workload = load
    return load, api, *prices
