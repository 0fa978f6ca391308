"""The KV-cost page's scenario: its widgets (the URL holds them all), reading a shared link, config uploads, checks.

Widgets always drawn are bound to the URL; those drawn only while their expander is open (engine settings, model
fields) keep their values in the session and write the link themselves (`_keep_in_link`).

A link may hold the page's own labels (`w_bits=16-bit`, `gpu=H200+SXM`) or plain forms typed by hand (`w_bits=8`,
`gpu=h200-sxm`, `model=llama-3.1-8b`); both restore the scenario, and a value the page cannot read is named in a
message instead of being dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.plan import kv_cache as kv
from core.plan import serving
from core.plan.model_config import (
    BIASES,
    FIELD_NAMES,
    LIMITS,
    MAX_CONFIG_BYTES,
    NORMS,
    ModelConfig,
    ParseReport,
    config_from_fields,
    model_name,
    parse_config_text,
    presets,
)
from ui.elements import link_reader as lr
from ui.elements.safe_text import plain
from ui.kv_own_model import (
    CUSTOM,
    CUSTOM_NAME,
    FIELD_KEYS,
    NAME_KEY,
    PRIMER,
    YOUR_MODEL,
    check_paste,
    custom_name,
    edited_preset,
    field_value,
    name_value,
)

DEFAULTS = kv.defaults()
FIRST_API = next(iter(serving.api_prices().values()))  # the build-vs-buy comparison starts from the first preset
COMPARE_DEFAULT = ["llama-3.1-8b", "llama-3.1-70b", "mistral-7b", "deepseek-v3"]
MAX_COMPARE = 4  # models compared beside the current one
VIEWS = ("KV vs context", "Memory per GPU", "Users vs context", "Cost vs batch")
BLOCKS = (1, 16, 32)
LINK_NOTES = "kv_link_notes"
MEMORY = "kv_memory"  # the page's own memory between runs (`memory`)
OWN_MODEL_OPEN = "kv_own_model_open"
OWN_MODEL_LABEL = "Your own model: upload or paste a Hugging Face config.json, or edit every size"
ENGINE_OPEN = "kv_engine_open"
ENGINE_LABEL = "Engine settings: GPUs per model copy, shared prompt, memory use and speed"
SECTION = "kv_section"
SECTIONS = (  # the planner's sections below the side-by-side table, one drawn at a time
    "Workload and bill",
    "Build vs buy",
    "Calibration",
    "Budget",
    "Model anatomy",
    "Sources",
)
SIZES = ("context", "users")  # the scenario's sizes, drawn inside the page's fragment
AUTO = "auto"  # GPUs per model copy chosen by the page: the fewest that hold the model and one user

FIELD_LABELS = {
    "n_layers": ("Layers L", "How many Transformer blocks are stacked; each keeps its own K and V for every token."),
    "d_model": ("Width d_model", "How many numbers describe each token inside the model (the residual stream)."),
    "n_heads": ("Attention heads h", "How many attention heads each layer runs side by side."),
    "n_kv_heads": (
        "KV heads",
        "How many distinct K/V pairs each layer stores per token. Equal to the heads = classic multi-head; fewer = "
        "grouped-query attention (GQA); 1 = multi-query (MQA). Fewer KV heads, smaller cache.",
    ),
    "head_dim": ("Head size d_k", "Numbers per head in each K or V vector (often d_model / h, not always)."),
    "vocab_size": ("Vocabulary V", "How many different tokens the model knows; sets the embedding's size."),
    "d_ff": ("MLP width d_ff", "Hidden width of each layer's MLP block (dense layers)."),
    "tied_embeddings": ("Tied embeddings", "The output matrix reuses the input embedding (U = Eᵀ), saving V·d_model."),
    "gated_mlp": ("Gated MLP", "Three MLP matrices (gate, up, down) as in Llama; off = two (W₁, W₂) as in GPT-2."),
    "norm": ("Norm type", "LayerNorm has a scale and a shift per number; RMSNorm only a scale."),
    "norms_per_layer": ("Norms per layer", "Normalisations inside each block (2 usually; 4 in Gemma-2)."),
    "bias": ("Biases", "Which projections carry a bias vector: none, only Q/K/V, or all (GPT-2)."),
    "learned_positions": ("Learned positions", "Rows of a learned position table (GPT-2: 1024); 0 for rotary."),
    "kv_lora_rank": (
        "Latent rank (MLA)",
        "Multi-head latent attention (DeepSeek): the size of the one compressed vector cached per token and "
        "layer instead of K and V. 0 = ordinary attention.",
    ),
    "qk_rope_head_dim": ("Rotary key part (MLA)", "Extra position-carrying numbers cached beside the latent."),
    "q_lora_rank": ("Query rank (MLA)", "Compressed query size (weights only; 0 = full query projection)."),
    "qk_nope_head_dim": ("Key head size (MLA)", "Per-head key size rebuilt from the latent (weights only)."),
    "v_head_dim": ("Value head size (MLA)", "Per-head value size rebuilt from the latent (weights only)."),
    "sliding_window": ("Sliding window W", "Sliding layers keep only the last W tokens; 0 = none."),
    "sliding_layers": ("Sliding layers", "How many of the layers use the window (Mistral: all; Gemma-2: half)."),
    "n_experts": ("Experts", "Mixture of experts: MLP copies per layer, of which a few run per token; 0 = dense."),
    "experts_per_token": ("Experts per token", "How many experts each token is routed to."),
    "expert_d_ff": ("Expert width", "Hidden width of one expert."),
    "shared_experts": ("Shared experts", "Experts every token always uses (DeepSeek: 1)."),
    "dense_layers": ("Dense first layers", "Layers at the bottom that keep an ordinary MLP (DeepSeek-V3: 3)."),
    "max_context": (
        "Maximum context (tokens)",
        "The longest conversation the model is built for (config.json max_position_embeddings); 0 = not stated. "
        "The page warns when the context per user is longer.",
    ),
}


@dataclass(frozen=True)
class NumberSpec:
    """A number input of the scenario: its label, bounds, default, step and plain-words help."""

    label: str
    low: float
    high: float
    default: float
    step: float
    help: str


@dataclass
class Memory:
    """What the page keeps between runs besides its widgets' values, in one session entry: every selector and number
    field reads every session entry on each run, so one entry instead of five keeps each run cheaper."""

    link_read: bool = False  # the shared link has been read (`read_link` reads it once per session)
    typed_ok: dict[str, float] = field(default_factory=dict)  # each number field's last valid value (put back)
    typed_notes: dict[str, str] = field(default_factory=dict)  # the refused typed value of each field, named under it
    last_valid: tuple[ModelConfig, kv.Deployment] | None = None  # shown while the scenario cannot be computed
    last_workload: serving.Workload | None = None  # shown while the workload cannot be served


def memory() -> Memory:
    """The page's memory for this session."""
    kept = st.session_state.get(MEMORY)
    if kept is None:
        kept = st.session_state[MEMORY] = Memory()
    return kept


NUMBERS = {
    "context": NumberSpec(
        "Context per user T (tokens)",
        1,
        10_000_000,
        32768,
        1024,
        "Prompt plus answer held in memory for each conversation.",
    ),
    "users": NumberSpec(
        "Concurrent users", 1, 1_000_000, 16, 1, "Conversations running at the same moment (each has its own KV cache)."
    ),
    "prefix": NumberSpec(
        "Shared system prompt (tokens)",
        0,
        10_000_000,
        0,
        256,
        "A prefix every conversation starts with; prefix caching stores it once per model copy.",
    ),
    "price": NumberSpec(
        "Price per GPU-hour ($)",
        0.01,
        1000.0,
        float(DEFAULTS["price_per_gpu_hour"]),
        0.1,
        "Your cloud or amortised on-premise cost of one GPU for one hour.",
    ),
    "util": NumberSpec(
        "Memory the engine may use",
        0.5,
        0.99,
        float(DEFAULTS["gpu_memory_utilization"]),
        0.01,
        "vLLM's gpu_memory_utilization: the rest is reserve.",
    ),
    "eff": NumberSpec(
        "Bandwidth efficiency (MBU)",
        0.1,
        1.0,
        float(DEFAULTS["bandwidth_efficiency"]),
        0.01,
        "Model bandwidth utilisation: the share of peak memory bandwidth decoding really gets.",
    ),
    "mfu": NumberSpec(
        "Compute efficiency (MFU)",
        0.05,
        1.0,
        float(DEFAULTS["mfu"]),
        0.01,
        "Model FLOPs utilisation: the share of the GPU's peak FLOP/s prefill and large batches really get.",
    ),
    "overhead": NumberSpec(
        "Fixed cost per layer and pass (µs)",
        0.0,
        10_000.0,
        float(DEFAULTS["layer_overhead_us"]),
        5.0,
        "Kernel launches and synchronisation: paid once per layer by every prefill and every decode step.",
    ),
    # the workload (drawn in its section; kept in the session and the link like the engine settings)
    "rpm": NumberSpec(
        "Peak requests per minute", 0.01, 1_000_000.0, 60.0, 10.0, "Requests arriving per minute at the busiest hour."
    ),
    "prompt": NumberSpec(
        "Mean prompt (input tokens)", 1, 1_000_000, 1000, 100, "Tokens sent per request: question, context, history."
    ),
    "answer": NumberSpec("Mean answer (output tokens)", 1, 100_000, 250, 50, "Tokens generated per request."),
    "ttft": NumberSpec(
        "First token within (seconds)", 0.01, 600.0, 2.0, 0.5, "Latency target: time until the answer starts."
    ),
    "speed": NumberSpec(
        "At least tokens/s per user", 0.1, 10_000.0, 20.0, 5.0, "Latency target: reading speed of the answer."
    ),
    "hours": NumberSpec(
        "Hours served per month", 1.0, 744.0, 730.0, 10.0, "Hours the GPUs are rented per month (730 = always on)."
    ),
    "api_in": NumberSpec(
        "API $ per 1M input tokens", 0.0, 10_000.0, FIRST_API.input_per_m, 0.05, "The API's list price for input."
    ),
    "api_out": NumberSpec(
        "API $ per 1M output tokens", 0.0, 10_000.0, FIRST_API.output_per_m, 0.05, "The API's list price for output."
    ),
}


ENGINE_DEFAULTS = {  # engine settings (drawn only while their expander is open)
    "tp": AUTO,
    "prefix": NUMBERS["prefix"].default,
    "util": NUMBERS["util"].default,
    "block": 16,
    "eff": NUMBERS["eff"].default,
    "mfu": NUMBERS["mfu"].default,
    "overhead": NUMBERS["overhead"].default,
}
WORKLOAD_KEYS = ("rpm", "prompt", "answer", "ttft", "speed", "hours")
PRICE_KEYS = ("api_in", "api_out")


def model_label(model_id: str) -> str:
    """What the model selectors show (and the URL stores) for a preset id or 'custom'."""
    return "Custom (fields below)" if model_id == CUSTOM else presets()[model_id].name


def bits_label(bits: int) -> str:
    """'16-bit' for 16: how the weight selector shows a bit width."""
    return f"{bits}-bit"


def gpu_name(gpu_id: str) -> str:
    """The GPU selector's label for a preset id."""
    return kv.gpus()[gpu_id].name


def tp_label(tp: object) -> str:
    """'Auto (fewest that fit)' or the GPU count."""
    return "Auto (fewest that fit)" if tp == AUTO else str(tp)


def api_label(price_id: str) -> str:
    """An API price preset as 'DeepSeek deepseek-chat (DeepSeek-V3), 2025-02', or 'Your own prices'."""
    if price_id == CUSTOM:
        return "Your own prices"
    price = serving.api_prices()[price_id]
    return f"{price.provider} {price.model}, {price.date}"


def choices() -> dict[str, tuple[Sequence, Callable[[object], str]]]:
    """Every bound selector and multiselect: its options and the label the page shows and the URL stores."""
    return {
        "model": ([*presets(), CUSTOM], model_label),
        "compare": (list(presets()), model_label),
        "kv_dtype": (list(kv.DTYPE_BYTES), str.upper),
        "w_bits": (list(kv.WEIGHT_BITS), bits_label),
        "gpu": (list(kv.gpus()), gpu_name),
        "tp": ([AUTO, *kv.TP_OPTIONS], tp_label),
        "api": ([*serving.api_prices(), CUSTOM], api_label),
        "block": (list(BLOCKS), str),
        "view": (list(VIEWS), str),
        SECTION: (list(SECTIONS), str),
        FIELD_KEYS["norm"]: (list(NORMS), str),
        FIELD_KEYS["bias"]: (list(BIASES), str),
    }


# --------------------------------------------------------------------------------------------------- the link
def match_choice(raw: str, options: Sequence, label: Callable[[object], str]) -> object | None:
    """The option a URL value names exactly: its label ('8-bit', 'FP8', 'H200 SXM') or its id ('8', 'fp8',
    'h200-sxm'), in any case; anything else (1.6, 3-2, -1, h200_sxm) names no option and is refused, never reshaped."""
    wanted = raw.strip().casefold()
    for option in options:
        if wanted and wanted in (label(option).casefold(), str(option).casefold()):
            return option
    return None


def _number_field(key: str) -> tuple[float, float, bool] | None:
    """(low, high, whole numbers only) for a numeric scenario key or model field, None for other keys."""
    if key in NUMBERS:
        spec = NUMBERS[key]
        return spec.low, spec.high, isinstance(spec.default, int)
    name = key.removeprefix("f_")
    if key.startswith("f_") and name in LIMITS:
        low, high = LIMITS[name]
        return low, high, True
    return None


def _default_used(key: str) -> str:
    """What a link notice says the page uses for a refused value of this key: the widget's default, as it shows it."""
    primer = presets()[PRIMER]
    name = key.removeprefix("f_")
    if key.startswith("f_") and name in FIELD_NAMES:
        return lr.used(getattr(primer, name) if name in ("norm", "bias") else _field_link_form(getattr(primer, name)))
    if key in NUMBERS:
        return lr.used(NUMBERS[key].default)
    firsts = {"kv_dtype": "fp16", "gpu": DEFAULTS["gpu"], "block": ENGINE_DEFAULTS["block"], "tp": AUTO}
    options, label = choices()[key]
    return lr.used(label(firsts.get(key, options[0])))


BOOLEANS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


def _canonical(key: str, values: list[str], notes: list[str]) -> list[str] | None:
    """The values a link parameter should hold, in the form the page's widgets read; None for a key not the page's.

    Values already in that form are kept as written; a value that cannot be read is left out and named in `notes`.
    """
    options = choices()
    if key == "compare" and values == [""]:  # how the URL writes an empty comparison: none, kept as it is
        return [""]
    if key == NAME_KEY:
        return name_value(values[-1], notes)
    if key in options:
        found, label = [], options[key][1]
        for raw in values:
            option = match_choice(raw, *options[key])
            if option is None:
                shown = ", ".join(label(o) for o in options[key][0][:8])
                more = ", …" if len(options[key][0]) > 8 else ""
                instead = {"compare": "it is left out", SECTION: "no section is opened"}.get(key) or _default_used(key)
                notes.append(lr.refusal(key, raw, f"it is not one of the choices ({shown}{more})", instead))
            elif label(option) not in found:
                found.append(label(option))
        if key == "compare" and len(found) > MAX_COMPARE:
            notes.append(
                f"**compare** names {len(found)} models; at most {MAX_COMPARE} are compared, so "
                + ", ".join(plain(name) for name in found[MAX_COMPARE:])
                + " are left out."
            )
        return found[:MAX_COMPARE] if key == "compare" else found[-1:]
    raw = values[-1]
    if (bounds := _number_field(key)) is not None:
        try:
            value = lr.read_number(raw, *bounds)
        except lr.Refused as refused:
            kind = "whole number" if bounds[2] else "number"
            reason = str(refused) if "outside" in str(refused) else f"{refused}; the page takes a {kind}"
            notes.append(lr.refusal(key, raw, reason, _default_used(key)))
            return []
        form = r"-?[0-9]+" if bounds[2] else r"-?[0-9]*\.?[0-9]+"  # what Streamlit's int() / float() read alike
        return [raw if re.fullmatch(form, raw) else str(value)]
    if key.startswith("f_") and key[2:] in FIELD_NAMES:  # the two yes/no model fields
        flag = BOOLEANS.get(raw.strip().lower())
        if flag is None:
            notes.append(lr.refusal(key, raw, "it is not true or false", _default_used(key)))
            return []
        return [raw if raw.lower() in ("true", "false") else str(flag).lower()]
    return None


def _field_link_form(value: object) -> str:
    """How the link writes a model field's value: 'true'/'false' for yes/no fields, the plain value otherwise."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def forget_scenario() -> None:
    """Drop the page's scenario from the session (its widgets' values, fields, name, report and memory), so a link
    opening the page is read as a new reader's would be: what it holds, and the defaults for what it leaves out."""
    keys = {*choices(), *NUMBERS, *FIELD_KEYS.values(), CUSTOM_NAME, LINK_NOTES, MEMORY, "kv_report", "kv_paste"}
    for key in keys & set(st.session_state.keys()):
        del st.session_state[key]


def read_link(page: Path, opened: bool = False) -> None:
    """Whenever the page is opened by a link that carries a query (a new session, or in-app navigation such as the
    overview's link), before the widgets: put the link's plain forms into the page's own and name unreadable values.
    A page opened with no query keeps the session's scenario, and reruns of the page read nothing.

    Streamlit drops a bound value it cannot parse without a word (`w_bits=8` where the page writes `w_bits=8-bit`),
    and the dropped value then disappears from the address too. So a link holding plain forms is re-opened with the
    same values written the page's way (one extra run, only for such links), and every value that cannot be read is
    named in a message (`link_notes`). A link naming only a preset (?model=Llama-3.1-8B) also fills the model fields
    from it; fields present in the link win. The fields and engine settings go into the session here, because their
    widgets are drawn only while their expander is open (`own_model`, `scenario_widgets`).
    """
    if opened and len(st.query_params):
        forget_scenario()
    if memory().link_read:
        return
    memory().link_read = True
    notes: list[str] = []
    written = {key: st.query_params.get_all(key) for key in st.query_params}
    link = {}
    for key, values in written.items():
        canonical = _canonical(key, values, notes)
        link[key] = values if canonical is None else canonical
    link = {key: values for key, values in link.items() if values}
    model = match_choice((link.get("model") or [model_label(PRIMER)])[0], *choices()["model"])
    if edited := edited_preset(model, link):  # fields beside a preset: a custom model based on the preset
        link = {NAME_KEY: [edited]} | link | {"model": [model_label(CUSTOM)]}
        for name, key in FIELD_KEYS.items():
            st.session_state[key] = getattr(presets()[model], name)
        model = CUSTOM
    if NAME_KEY in link:
        st.session_state[CUSTOM_NAME] = link[NAME_KEY][-1]
    for key in ENGINE_DEFAULTS:
        if key in link:
            raw = link[key][-1]
            if key in choices():
                st.session_state[key] = match_choice(raw, *choices()[key])
            else:
                st.session_state[key] = type(NUMBERS[key].default)(float(raw))
    for key in (*WORKLOAD_KEYS, *PRICE_KEYS):  # drawn only in their sections: kept in the session like the engine's
        if key in link:
            st.session_state[key] = type(NUMBERS[key].default)(float(link[key][-1]))
    if "api" in link:
        st.session_state["api"] = match_choice(link["api"][-1], *choices()["api"])
    for name, key in FIELD_KEYS.items():
        if key in link:
            st.session_state[key] = field_value(name, link[key][-1])
        elif model in presets() and model != PRIMER:
            st.session_state[key] = getattr(presets()[model], name)
    if notes:
        st.session_state[LINK_NOTES] = notes
    if link != written:
        st.switch_page(page, query_params=link)


def link_notes() -> None:
    """The message naming the link's unreadable values (until the reader hides it)."""
    notes = st.session_state.get(LINK_NOTES)
    if not notes:
        return
    st.warning(
        "This link holds values the page could not use; each is named here with what is used instead:\n\n"
        + "\n".join(f"- {note}" for note in notes)
    )
    st.button("Hide this message", key="kv-hide-link-notes", on_click=st.session_state.pop, args=(LINK_NOTES, None))


# --------------------------------------------------------------------------------------------------- callbacks
def copy_into_fields(config: ModelConfig) -> None:
    """Fill the model fields with a config's values."""
    for name, key in FIELD_KEYS.items():
        st.session_state[key] = getattr(config, name)


def on_model_change() -> None:
    chosen = st.session_state["model"]
    if chosen != CUSTOM:
        copy_into_fields(presets()[chosen])


def on_field_change() -> None:
    chosen = st.session_state.get("model")
    if chosen in presets():  # a preset edited by hand keeps its name, marked as edited
        st.session_state[CUSTOM_NAME] = model_name(f"{presets()[chosen].name} (edited)", YOUR_MODEL)
    st.session_state["model"] = CUSTOM


def load_primer_example() -> None:
    """The primer's example: its 7B, 32K tokens, FP16."""
    st.session_state["model"] = PRIMER
    st.session_state["context"] = 32768
    st.session_state["kv_dtype"] = "fp16"
    copy_into_fields(presets()[PRIMER])


def _apply_report(report: ParseReport, source: str) -> None:
    st.session_state["kv_report"] = (source, report)
    if report.config is not None:
        copy_into_fields(report.config)
        st.session_state["model"] = CUSTOM
        st.session_state[CUSTOM_NAME] = report.config.name


def on_upload() -> None:
    upload = st.session_state.get("kv_upload")
    if upload is not None:  # parse_config_text refuses files over MAX_CONFIG_BYTES with their size
        _apply_report(parse_config_text(upload.getvalue(), name=upload.name), upload.name)


def on_paste() -> None:
    """Use the pasted config; once its sizes are in the model fields the box is emptied, so the text is neither held
    in the session nor re-sent by the browser on every run (a config that cannot be used stays, to be corrected)."""
    if check_paste():
        _apply_report(parse_config_text(st.session_state.get("kv_paste", ""), name="Pasted config"), "pasted text")
        if st.session_state["kv_report"][1].config is not None:
            st.session_state["kv_paste"] = ""


# --------------------------------------------------------------------------------------------------- widgets
def _select(label: str, key: str, help: str, widget: Callable = st.selectbox, **extra: object) -> None:
    """A selector whose options and labels come from `choices()`, so links are read the way they are written; bound
    to the URL unless `extra` says otherwise."""
    options, shown = choices()[key]
    widget(label, options, format_func=shown, key=key, help=help, **{"bind": "query-params", **extra})


@cache
def _spec(key: str) -> NumberSpec:
    """A number field's NumberSpec: the scenario's own, or a model field's (its limits, the primer's value, step 1);
    built once per key, as every run reads it several times per field."""
    if key in NUMBERS:
        return NUMBERS[key]
    name = key.removeprefix("f_")
    label, helptext = FIELD_LABELS[name]
    return NumberSpec(label, *LIMITS[name], getattr(presets()[PRIMER], name), 1, helptext)


def _whole(key: str) -> bool:
    """True for a field that takes whole numbers only (tokens, users, model sizes), as its default says."""
    return isinstance(_spec(key).default, int)


def typed_value(key: str) -> float | int:
    """A number field's current value in its own type (a whole-number field's as an int, so the link writes 32768)."""
    value = st.session_state.get(key, _spec(key).default)
    return int(value) if _whole(key) else float(value)


def _check_typed(key: str, then: Callable[[], None] | None = None) -> None:
    """On a typed or stepped value: keep it if the field can use it, otherwise put the last valid value back and name
    what was typed (the browser's own checks drop such values without a word, or read 1e308 as 1)."""
    spec, value = _spec(key), st.session_state.get(key)
    kept = memory().typed_ok.get(key, spec.default)
    notes = memory().typed_notes
    try:
        read = lr.read_number(repr(value), spec.low, spec.high, _whole(key))
    except lr.Refused as refused:
        notes[key] = lr.typed_refusal(spec.label, value, str(refused), kept)
        st.session_state[key] = kept
        return
    notes.pop(key, None)
    st.session_state[key] = read
    if then is not None:
        then()


def _number(key: str, container: object = st, **extra: object) -> float | int:
    """A number input (a slider for the two fractions) from its NumberSpec, bound to the URL unless `extra` says
    otherwise; returns its value (`typed_value`).

    A number input has no bounds of its own and takes decimals: the browser then passes every typed value on
    (bounded or whole-number inputs drop out-of-range values silently and read 1e308 as 1), and `_check_typed`
    keeps or refuses it by the NumberSpec, naming a refused value under the field.
    """
    spec = _spec(key)
    common = {"key": key, "help": spec.help, **{"bind": "query-params", **extra}}
    if key in ("util", "eff", "mfu"):
        container.slider(spec.label, spec.low, spec.high, spec.default, spec.step, **common)
        return typed_value(key)
    common.setdefault("format", "%.0f" if _whole(key) else None)
    then = common.pop("on_change", None)
    container.number_input(
        spec.label,
        value=float(spec.default),
        step=float(spec.step),
        on_change=_check_typed,
        args=(key, then),
        **common,
    )
    page = memory()
    value = page.typed_ok[key] = typed_value(key)
    if note := page.typed_notes.get(key):
        container.warning(note)
    return value


def scenario_widgets(kv_help: str) -> tuple[dict, DeltaGenerator]:
    """The scenario's selectors in three columns and the engine settings; returns their values by key and the middle
    column, which the page's fragment fills with the sizes (`size_widgets`)."""
    top = st.columns(3)
    with top[0]:
        _select(
            "Model",
            "model",
            "A published model, or 'Custom' for your own: upload its config.json or edit its sizes in 'Your own model' "
            "below.",
            on_change=on_model_change,
        )
        _select(
            "KV cache number type",
            "kv_dtype",
            kv_help + "\n\nBytes per stored number: FP32 = 4, FP16/BF16 = 2, FP8/INT8 = 1, INT4 = ½.",
            index=1,
        )
        _select("Weights stored at", "w_bits", "16-bit = original; 8- or 4-bit = quantised weights.")
    with top[2]:
        gpu_ids = list(kv.gpus())
        _select("GPU", "gpu", "Memory, bandwidth and speed from the vendor.", index=gpu_ids.index(DEFAULTS["gpu"]))
        price = _number("price", format="%.2f")
    engine = st.expander(ENGINE_LABEL, key=ENGINE_OPEN, on_change="rerun")
    if engine.open:  # drawn only while open; like the model fields, kept in the session and the link explicitly
        kept = {"bind": None, "persist_state": "session"}
        with engine:
            cols = st.columns(3)
            with cols[0]:
                _select(
                    "GPUs per model copy (tensor parallelism)",
                    "tp",
                    "The model's weights and KV heads are split across this many GPUs working as one. 'Auto' takes "
                    "the fewest GPUs that hold the model and one user at this context.",
                    **kept,
                )
            _number("prefix", cols[1], **kept)
            cols = st.columns(3)
            _number("util", cols[0], **kept)
            with cols[1]:
                _select(
                    "KV block size (tokens)",
                    "block",
                    "Memory is handed out in pages of this many tokens (vLLM 16, TensorRT-LLM 32).",
                    index=BLOCKS.index(ENGINE_DEFAULTS["block"]),
                    **kept,
                )
            _number("eff", cols[2], **kept)
            cols = st.columns(3)
            _number("mfu", cols[0], **kept)
            _number("overhead", cols[1], **kept)
            cols[2].caption(
                "MBU, MFU and the fixed cost start at the values fitted on the published measurements in the "
                "Calibration section; change them to see how every time and cost below moves."
            )
    engine_values = {
        key: typed_value(key) if key in NUMBERS else st.session_state.get(key, default)
        for key, default in ENGINE_DEFAULTS.items()
    }
    _keep_in_link(
        {key: None if value == ENGINE_DEFAULTS[key] else _link_form(key, value) for key, value in engine_values.items()}
    )
    keys = ("model", "kv_dtype", "w_bits", "gpu")
    return {key: st.session_state[key] for key in keys} | {"price": price} | engine_values, top[1]


def _link_form(key: str, value: object) -> str:
    """How the link writes a setting drawn only in its expander: a choice by its label, as bound selectors write it."""
    return choices()[key][1](value) if key in choices() else str(value)


def size_widgets(column: DeltaGenerator) -> dict:
    """Context and concurrent users in their column; returns their values by key. Drawn by the page's
    fragment, so a change reruns only what the sizes feed, not the selectors and expanders around them."""
    return {key: _number(key, column) for key in SIZES}


def own_model(model: str) -> dict:
    """One expander for building your own model: a config.json to upload or paste, then every size of the model as a
    field. Returns the custom model's fields by name ({} for a preset, whose fields are its own). Its widgets are drawn
    only while it is open (a closed one costs nothing); the values live in the session either way, and the link holds
    them while the model is Custom (`_fields_in_link`)."""
    box = st.expander(OWN_MODEL_LABEL, key=OWN_MODEL_OPEN, on_change="rerun")
    if box.open:
        with box:
            _config_inputs()
            st.markdown("**Every size of the model** (edit any to build your own; the model becomes Custom)")
            _field_widgets()
    primer = presets()[PRIMER]
    values = {
        name: typed_value(key) if name in LIMITS else st.session_state.get(key, getattr(primer, name))
        for name, key in FIELD_KEYS.items()
        if model == CUSTOM
    }
    _fields_in_link(values)
    return values


def _field_widgets() -> None:
    """Every size of the model as a field, four to a row (row by row, so a phone stacks them in reading order).

    Not bound to the URL (see `_keep_in_link`); `persist_state` keeps a value while the widget is not drawn.
    """
    for start in range(0, len(FIELD_NAMES), 4):
        row = FIELD_NAMES[start : start + 4]
        for col, name in zip(st.columns(4), row, strict=False):  # the last row is shorter
            with col:
                _field_widget(name)


def _field_widget(name: str) -> None:
    """One model field, defaulting to the primer's 7B: a checkbox, a choice or a number."""
    label, helptext = FIELD_LABELS[name]
    key = FIELD_KEYS[name]
    default = getattr(presets()[PRIMER], name)
    common = {"key": key, "persist_state": "session", "help": helptext, "on_change": on_field_change}
    if isinstance(default, bool):
        st.checkbox(label, default, **common)
    elif name in ("norm", "bias"):
        options = list(NORMS if name == "norm" else BIASES)
        st.selectbox(label, options, options.index(default), **common)
    else:
        _number(key, bind=None, persist_state="session", on_change=on_field_change)


def _fields_in_link(values: dict) -> None:
    """Keep the custom model's fields in the link, so it reproduces the scenario: every field that differs from the
    primer's 7B, only while the model is Custom (`values` is then not empty; a preset's name implies its fields)."""
    primer = presets()[PRIMER]
    _keep_in_link(
        {
            key: _field_link_form(values[name]) if values and values[name] != getattr(primer, name) else None
            for name, key in FIELD_KEYS.items()
        }
        | {NAME_KEY: custom_name() if values and custom_name() != YOUR_MODEL else None}
    )


def _keep_in_link(wanted: dict[str, str | None]) -> None:
    """Write these link parameters (None = leave out) for values whose widgets are not bound to the URL: Streamlit
    deletes a bound widget's parameter whenever the widget is not drawn, so a closed expander would break the link."""
    link = st.query_params.to_dict()
    for key, value in wanted.items():
        if value is None and key in link:
            del st.query_params[key]
        elif value is not None and link.get(key) != value:
            st.query_params[key] = value


def _config_inputs() -> None:
    """Upload or paste a Hugging Face config.json, and what came of the last one (the pasted text is kept while the
    expander is closed)."""
    st.file_uploader(
        "config.json (up to 1 MB)",
        type=["json"],
        key="kv_upload",
        on_change=on_upload,
        help="The model's config.json from its Hugging Face page ('Files and versions').",
    )
    st.text_area(
        f"…or paste its contents (up to {MAX_CONFIG_BYTES:,} characters)",
        key="kv_paste",
        height=120,
        max_chars=MAX_CONFIG_BYTES + 1,  # one more than is read: a longer paste arrives cut here, and is refused
        placeholder='{"num_hidden_layers": 32, …}',
        persist_state="session",
        on_change=check_paste,
    )
    st.button("Use pasted config", on_click=on_paste)
    _report_box()


def _report_box() -> None:
    if "kv_report" not in st.session_state:
        return
    source, report = st.session_state["kv_report"]
    if report.config is None:
        st.error(
            f"Could not use the config from {plain(source)}; the current scenario is unchanged.\n\n"
            + "\n".join(f"- {plain(message, 300)}" for message in report.errors)
        )
        return
    st.success(f"Loaded “{plain(report.config.name)}” from {plain(source)} into the model fields (model = Custom).")
    st.markdown("**Fields read:** " + ", ".join(plain(name) for name in report.used))
    if report.assumed:
        st.markdown(
            "**Missing or not stated, so assumed:**\n" + "\n".join(f"- {plain(text, 300)}" for text in report.assumed)
        )


def compare_widget() -> tuple[ModelConfig, ...]:
    """Up to four presets to compare with the current model; returns their configs."""
    _select(
        "Models to compare (up to 4, beside the current one)",
        "compare",
        "Shown as extra lines in the charts and rows in the table.",
        default=COMPARE_DEFAULT,
        max_selections=4,
        widget=st.multiselect,
    )
    return tuple(presets()[key] for key in st.session_state["compare"])


def section_picker() -> str | None:
    """The planner's sections as one row of buttons below the table, bound to the link; returns the picked one, or None
    (the default: the page opens on its answer, and only a picked section is drawn)."""
    picked = st.segmented_control(
        "Plan further",
        SECTIONS,
        key=SECTION,
        bind="query-params",
        help="Pick a section to open it below; the link then opens it too. Workload and bill: GPUs and the monthly "
        "bill for your traffic. Build vs buy: the same traffic against an API's prices. Calibration: the time model "
        "against measured servers. Budget: what each lever saves. Model anatomy: where the bytes go. Sources: where "
        "every figure comes from.",
    )
    return picked


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
            _number(key, col, **kept)


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
        _select(
            "API to compare with",
            "api",
            "A provider's list price (with its date and source), or type your own.",
            on_change=_on_api_change,
            **kept,
        )
    _number("api_in", cols[1], format="%.2f", on_change=_on_price_edit, **kept)
    _number("api_out", cols[2], format="%.2f", on_change=_on_price_edit, **kept)


def workload(config: ModelConfig) -> tuple[serving.Workload, str, float, float]:
    """The workload and the API prices (values kept in the session and the link); a workload the model cannot serve
    (prompt + answer beyond its maximum context) is named by field and the last valid one kept."""
    first = next(iter(serving.api_prices()))
    api = st.session_state.get("api", first)
    values = {key: typed_value(key) for key in (*WORKLOAD_KEYS, *PRICE_KEYS)}
    _keep_in_link(
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
