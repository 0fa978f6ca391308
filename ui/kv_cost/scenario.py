"""The cost page's scenario resolved: the model and deployment the inputs describe (checked), and the workload, API and
prices of the planner's sections."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.plan import build_vs_buy as bvb
from core.plan import concurrency, engines, serving
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
from ui.kv_cost.settings import (
    AUTO,
    DEFAULTS,
    LOAD_AS,
    NUMBERS,
    PRICE_KEYS,
    SAME_MODEL,
    WORKLOAD_KEYS,
    choices,
    memory,
)
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


def model_config(model_id: str, fields: dict) -> ModelConfig:
    """The model the workload's plan is for: a preset, or the custom fields' model when they make one (else the last
    valid model; `resolve` names what is wrong)."""
    if model_id != CUSTOM:
        return presets()[model_id]
    config, _ = config_from_fields(fields, name=custom_name())
    return config or (memory().last_valid or (presets()[PRIMER], None))[0]


# --------------------------------------------------------------------------------------------------- the workload
def tp_is_auto() -> bool:
    """True when the page chose the GPUs per model copy (the reader left 'Auto')."""
    return st.session_state.get("tp", AUTO) == AUTO


SECTION_KEYS = ("speed", "hours", "peak")  # the workload's fields in its section (the rest on the first screen)


def workload_widgets() -> None:
    """The workload's other fields in three columns (the first screen asks for the rate, the tokens and the first
    token's target); drawn only while their section is open (values kept in the session)."""
    kept = {"bind": None, "persist_state": "session"}
    for col, key in zip(st.columns(3), SECTION_KEYS, strict=True):
        number_field(key, col, **kept)


def _on_price_edit() -> None:
    st.session_state["api"] = CUSTOM


def price_widgets(choice: bvb.ApiChoice) -> None:
    """The API to compare with: the same model as the plan (the default), a preset (provider, model, date) or the
    reader's own prices per 1M tokens; the price fields show the chosen API's prices."""
    kept = {"bind": None, "persist_state": "session"}
    if st.session_state.get("api", SAME_MODEL) != CUSTOM:
        st.session_state["api_in"], st.session_state["api_out"] = choice.price.input_per_m, choice.price.output_per_m
    cols = st.columns(3)
    with cols[0]:
        select_field(
            "API to compare with",
            "api",
            "By default the cheapest listed API serving the plan's own model (or, where none does, the API-served "
            "open model closest in size, said so); or a provider's list price (with its date and source), or your own.",
            **kept,
        )
    number_field("api_in", cols[1], format="%.2f", on_change=_on_price_edit, **kept)
    number_field("api_out", cols[2], format="%.2f", on_change=_on_price_edit, **kept)


def load_as_users() -> bool:
    """True when the reader gives the peak as users waiting at once rather than requests a minute."""
    return st.session_state.get(LOAD_AS) == "in_flight"


def make_workload(values: dict[str, float], in_flight: bool) -> serving.Workload:
    """The workload of the fields' values; `in_flight`: the peak is given as users waiting at once, turned into the
    rate that keeps them waiting at the target's pace (Little's law)."""
    load = serving.Workload(
        requests_per_minute=float(values["rpm"]),
        prompt_tokens=int(values["prompt"]),
        output_tokens=int(values["answer"]),
        ttft_s=float(values["ttft"]),
        min_tokens_per_s=float(values["speed"]),
        hours_per_month=float(values["hours"]),
    )
    if in_flight:
        load = replace(load, requests_per_minute=concurrency.requests_per_minute(values["in_flight"], load))
    return load


def workload(config: ModelConfig, model_id: str, quiet: bool = False) -> tuple[serving.Workload, bvb.ApiChoice, float]:
    """The workload, the API it is compared with and the peak-to-average factor (values kept in the session and the
    link); a workload the model cannot serve (prompt + answer beyond its maximum context) is named by field and the
    last valid one kept. `quiet`: only read them (no message, no link, no memory), to see whether they changed."""
    api = st.session_state.get("api", SAME_MODEL)
    in_flight = load_as_users()
    values = {key: typed_value(key) for key in (*WORKLOAD_KEYS, *PRICE_KEYS)}
    given = {key: values[key] for key in WORKLOAD_KEYS if key != ("rpm" if in_flight else "in_flight")}
    keep_in_link(
        {}
        if quiet
        else {key: None if value == NUMBERS[key].default else str(value) for key, value in given.items()}
        | {"rpm" if in_flight else "in_flight": None}  # the other way of giving the peak stays out of the link
        | {key: str(values[key]) if api == CUSTOM else None for key in PRICE_KEYS}  # a preset's prices are its own
        | {"api": None if api == SAME_MODEL else choices()["api"][1](api)}
        | {LOAD_AS: choices()[LOAD_AS][1]("in_flight") if in_flight else None}
    )
    load = make_workload(values, in_flight)
    total = load.prompt_tokens + load.output_tokens
    if config.exceeds_context(total) and quiet:
        load = memory().last_workload or serving.Workload()
    elif config.exceeds_context(total):
        st.error(
            f"Mean prompt ({load.prompt_tokens:,}) + mean answer ({load.output_tokens:,}) = {total:,} tokens is longer "
            f"than {config.name}'s maximum context of {config.max_context:,} tokens, so the last valid workload is "
            "shown."
        )
        load = memory().last_workload or serving.Workload()
    else:
        memory().last_workload = load
    return load, api_choice(config, model_id, load, api, values), float(values["peak"])


def api_choice(
    config: ModelConfig, model_id: str, load: serving.Workload, api: str, values: dict[str, float]
) -> bvb.ApiChoice:
    """The API the plan is compared with: the same model's (build_vs_buy's default), a chosen preset, or the
    reader's own prices, each with whether it is the same model and the sentence that says so."""
    default = bvb.default_api(config, model_id, load)
    if api == SAME_MODEL:
        return default
    if api in serving.api_prices():
        price = serving.api_prices()[api]
        same = bvb.served_model().get(api) == model_id
        note = f"{price.provider}'s {price.model} is not the same model as {config.name}: not like for like"
        return bvb.ApiChoice(price, same, "" if same else note)
    own = serving.ApiPrice(
        CUSTOM, "Your", "own API prices", "", float(values["api_in"]), float(values["api_out"]), "typed on the page"
    )
    return bvb.ApiChoice(own, False, "your own API prices: the page cannot tell which model they are for")
