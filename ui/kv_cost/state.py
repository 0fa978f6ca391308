"""The cost page's inputs: its widgets (the URL holds them all) and their callbacks, config uploads and pastes.

Widgets always drawn are bound to the URL; those drawn only while their expander is open (engine settings, model
fields) keep their values in the session and write the link themselves (`keep_in_link`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.plan import kv_cache as kv
from core.plan.fields import Field
from core.plan.model_config import (
    BIASES,
    FIELD_NAMES,
    LIMITS,
    MAX_CONFIG_BYTES,
    NORMS,
    ModelConfig,
    ParseReport,
    model_name,
    parse_config_text,
    presets,
)
from core.plan.prices import gpu_prices
from ui.elements import link_reader as lr
from ui.elements.safe_text import plain
from ui.kv_cost.link import field_link_form, prices_link_form
from ui.kv_cost.own_model import (
    CUSTOM,
    CUSTOM_NAME,
    FIELD_KEYS,
    NAME_KEY,
    PRIMER,
    YOUR_MODEL,
    check_paste,
    custom_name,
)
from ui.kv_cost.settings import (
    BLOCK_HELP,
    BLOCKS,
    COMPARE_DEFAULT,
    DEFAULTS,
    ENGINE_DEFAULTS,
    ENGINE_LABEL,
    ENGINE_OPEN,
    FIELD_LABELS,
    MAX_COMPARE,
    NUMBERS,
    OWN_MODEL_LABEL,
    OWN_MODEL_OPEN,
    SECTION,
    SECTIONS,
    SIZES,
    choices,
    memory,
)

ENGINE_HELP = (  # issue 26
    "Whose rules serve the model: how much memory the KV cache gets (vLLM and SGLang: a share of the whole GPU less "
    "the weights; TensorRT-LLM: a share of what is free after the weights), how many requests one step runs and "
    "what is reserved when a request is admitted. 'Memory the engine may use' is that share."
)


# --------------------------------------------------------------------------------------------------- callbacks
def copy_into_fields(config: ModelConfig) -> None:
    """Fill the model fields with a config's values."""
    for name, key in FIELD_KEYS.items():
        st.session_state[key] = getattr(config, name)


# Help texts from the engine's own tables: bytes per stored number by type, and the weight widths it offers.
STORED_BYTES = ", ".join(
    f"{name.upper()} = {'½' if size == 0.5 else f'{size:g}'}" for name, size in kv.DTYPE_BYTES.items()
)
WEIGHT_BITS_HELP = (
    f"{kv.WEIGHT_BITS[0]}-bit = original; "
    + "- or ".join(f"{bits}" for bits in kv.WEIGHT_BITS[1:])
    + "-bit = quantised weights."
)


def on_model_change() -> None:
    chosen = st.session_state["model"]
    if chosen != CUSTOM:
        copy_into_fields(presets()[chosen])


def on_field_change() -> None:
    chosen = st.session_state.get("model")
    if chosen in presets():  # a preset edited by hand keeps its name, marked as edited
        st.session_state[CUSTOM_NAME] = model_name(f"{presets()[chosen].name} (edited)", YOUR_MODEL)
    st.session_state["model"] = CUSTOM


PRIMER_DTYPE = "fp16"  # the primer's §4 example stores its cache in 16-bit


def primer_example() -> str:
    """The primer's §4 example in words, from its preset and the context field's default: 'Primer's modern 7B, 32K
    tokens, FP16'."""
    context = NUMBERS["context"].default
    size = f"{context // 1024:,}K" if context % 1024 == 0 else f"{context:,}"
    return f"{presets()[PRIMER].name.split(' (')[0]}, {size} tokens, {PRIMER_DTYPE.upper()}"


def load_primer_example() -> None:
    """The primer's example: its 7B, its context (the context field's default), FP16."""
    st.session_state["model"] = PRIMER
    st.session_state["context"] = NUMBERS["context"].default
    st.session_state["kv_dtype"] = PRIMER_DTYPE
    copy_into_fields(presets()[PRIMER])
    memory().context_set = False


def on_context_set() -> None:
    """The reader set the context per user: it no longer follows the workload's prompt + answer."""
    memory().context_set = True


def follow_workload(prompt: int, answer: int) -> None:
    """Context on the memory charts follows prompt + answer (the workload's request) unless the reader set it; called
    when the prompt or the answer changes."""
    if not memory().context_set:
        st.session_state["context"] = int(prompt) + int(answer)


def own_price(gpu_id: str) -> float:
    """The $/GPU-hour a GPU is billed at: the reader's own for it, else its typical public price."""
    return memory().own_prices.get(gpu_id) or gpu_prices()[gpu_id].typical


def _on_price_typed() -> None:
    """A valid typed price is the reader's own for the GPU shown."""
    memory().own_prices[st.session_state["gpu"]] = float(st.session_state["price"])


def _price_follows_gpu() -> None:
    """Put the chosen GPU's price in the price field when the GPU changes (its own, or its typical public price)."""
    page, gpu = memory(), st.session_state["gpu"]
    if page.price_gpu != gpu:
        st.session_state["price"] = page.typed_ok["price"] = own_price(gpu)
        page.price_gpu = gpu


def price_source(gpu_id: str) -> str:
    """Where the price shown comes from, in words: the reader's own, or the public offers' range and providers."""
    offers = gpu_prices()[gpu_id]
    listed = "; ".join(f"{o.provider} ${o.price_per_gpu_hour:,.2f} ({o.date}, {o.source})" for o in offers.offers)
    whose = "your own price" if gpu_id in memory().own_prices else f"the typical public price ${offers.typical:,.2f}"
    return (
        f"{kv.gpus()[gpu_id].name}: {whose}; public on-demand offers ${offers.low:,.2f}–${offers.high:,.2f} per "
        f"GPU-hour ({listed})."
    )


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
def select_field(label: str, key: str, help: str, widget: Callable = st.selectbox, **extra: object) -> None:
    """A selector whose options and labels come from `choices()`, so links are read the way they are written; bound
    to the URL unless `extra` says otherwise."""
    options, shown = choices()[key]
    widget(label, options, format_func=shown, key=key, help=help, **{"bind": "query-params", **extra})


@lru_cache(maxsize=256)  # 256 × ~0.5 kB: the page's number fields
def _spec(key: str) -> Field:
    """A number field's declaration: the planner's own (core.plan.fields), or a model field's (its limits, the
    primer's value, step 1); built once per key, as every run reads it several times per field."""
    if key in NUMBERS:
        return NUMBERS[key]
    name = key.removeprefix("f_")
    label, helptext = FIELD_LABELS[name]
    return Field(key, label, "", *LIMITS[name], getattr(presets()[PRIMER], name), 1, helptext, whole=True)


def _whole(key: str) -> bool:
    """True for a field that takes whole numbers only (tokens, users, model sizes)."""
    return _spec(key).whole


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
        read = spec.check(value)
    except lr.Refused as refused:
        notes[key] = lr.typed_refusal(spec.label, value, str(refused), kept)
        st.session_state[key] = kept
        return
    notes.pop(key, None)
    st.session_state[key] = read
    if then is not None:
        then()


def number_field(key: str, container: object = st, **extra: object) -> float | int:
    """A number input (a slider for the two fractions) from its declaration, bound to the URL unless `extra` says
    otherwise; returns its value (`typed_value`).

    A number input has no bounds of its own and takes decimals: the browser then passes every typed value on
    (bounded or whole-number inputs drop out-of-range values silently and read 1e308 as 1), and `_check_typed`
    keeps or refuses it by the declaration, naming a refused value under the field.
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


def model_widget() -> None:
    """The model selector: the first question of the workload's plan, read by every section below it."""
    select_field(
        "Model",
        "model",
        "A published model, or 'Custom' for your own: upload its config.json or edit its sizes in 'Your own model' "
        "below.",
        on_change=on_model_change,
    )


CALCULATOR_CHOICES = {"kv_dtype": PRIMER_DTYPE, "w_bits": 16, "gpu": DEFAULTS["gpu"]}  # selectors and defaults
KEPT = {"bind": None, "persist_state": "session"}  # drawn only while their expander is open: the session keeps them


def calculator_widgets(kv_help: str) -> DeltaGenerator:
    """The memory calculator's selectors in three columns (number types, GPU and its price); returns the middle
    column, which the page's fragment fills with the sizes (`size_widgets`). Kept in the session and the link
    (`calculator_values`), as the calculator is drawn only while it is open."""
    top = st.columns(3)
    with top[0]:
        select_field(
            "KV cache number type",
            "kv_dtype",
            f"{kv_help}\n\nBytes per stored number: {STORED_BYTES}.",
            index=list(kv.DTYPE_BYTES).index(PRIMER_DTYPE),
            **KEPT,
        )
        select_field("Weights stored at", "w_bits", WEIGHT_BITS_HELP, **KEPT)
    with top[2]:
        gpu_ids = list(kv.gpus())
        select_field(
            "GPU", "gpu", "Memory, bandwidth and speed from the vendor.", index=gpu_ids.index(DEFAULTS["gpu"]), **KEPT
        )
        _price_follows_gpu()
        number_field("price", format="%.2f", on_change=_on_price_typed, **KEPT)
        gpu = st.session_state["gpu"]
        offers = gpu_prices()[gpu]
        whose = "your own price" if gpu in memory().own_prices else "typical public on-demand price"
        st.caption(
            f"{whose}; listed offers ${offers.low:,.2f}–${offers.high:,.2f} ({len(offers.offers)} offers)",
            help=price_source(gpu),
        )
    return top[1]


def calculator_values() -> dict:
    """The calculator's selectors and price as the session holds them (defaults before the reader sets any), written
    into the link whether or not the calculator is open."""
    values = {key: st.session_state.get(key, default) for key, default in CALCULATOR_CHOICES.items()}
    keep_in_link(
        {key: None if value == CALCULATOR_CHOICES[key] else _link_form(key, value) for key, value in values.items()}
        | {"price": prices_link_form(memory().own_prices)}
    )
    return values | {"price": own_price(values["gpu"])}


def engine_settings() -> dict:
    """The engine settings' expander (drawn only while open; kept in the session and the link) and their values by
    key: the serving engine, GPUs per copy, shared prompt, memory use, block size and the time model's settings."""
    engine = st.expander(ENGINE_LABEL, key=ENGINE_OPEN, on_change="rerun")
    if engine.open:
        with engine:
            cols = st.columns(3)
            with cols[0]:
                select_field(
                    "GPUs per model copy (tensor parallelism)",
                    "tp",
                    "The model's weights and KV heads are split across this many GPUs working as one. 'Auto' takes "
                    "the fewest GPUs that hold the model and one user at this context.",
                    **KEPT,
                )
            number_field("prefix", cols[1], **KEPT)
            with cols[2]:  # the serving engine (its memory rule, batch limits and admission)
                select_field("Serving engine", "engine", ENGINE_HELP, **KEPT)
            cols = st.columns(3)
            number_field("util", cols[0], **KEPT)
            with cols[1]:
                select_field(
                    "KV block size (tokens)",
                    "block",
                    BLOCK_HELP,
                    index=BLOCKS.index(ENGINE_DEFAULTS["block"]),
                    **KEPT,
                )
            number_field("eff", cols[2], **KEPT)
            cols = st.columns(3)
            number_field("mfu", cols[0], **KEPT)
            number_field("overhead", cols[1], **KEPT)
            cols[2].caption(
                "MBU, MFU and the fixed cost start at the values fitted on the published measurements in the "
                "Calibration section; change them to see how every time and cost below moves."
            )
    engine_values = {
        key: typed_value(key) if key in NUMBERS else st.session_state.get(key, default)
        for key, default in ENGINE_DEFAULTS.items()
    }
    keep_in_link(
        {key: None if value == ENGINE_DEFAULTS[key] else _link_form(key, value) for key, value in engine_values.items()}
    )
    return engine_values


def _link_form(key: str, value: object) -> str:
    """How the link writes a setting drawn only in its expander: a choice by its label, as bound selectors write it."""
    return choices()[key][1](value) if key in choices() else str(value)


def size_widgets(column: DeltaGenerator) -> dict:
    """Context and concurrent users in their column; returns their values by key. Drawn by the page's
    fragment, so a change reruns only what the sizes feed, not the selectors and expanders around them."""
    for key in SIZES:
        number_field(key, column, **KEPT, **({"on_change": on_context_set} if key == "context" else {}))
    return size_values()


def size_values() -> dict:
    """Context and concurrent users as the session holds them, written into the link (drawn or not)."""
    values = {key: typed_value(key) for key in SIZES}
    keep_in_link({key: None if value == NUMBERS[key].default else str(value) for key, value in values.items()})
    return values


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

    Not bound to the URL (see `keep_in_link`); `persist_state` keeps a value while the widget is not drawn.
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
        number_field(key, bind=None, persist_state="session", on_change=on_field_change)


def _fields_in_link(values: dict) -> None:
    """Keep the custom model's fields in the link, so it reproduces the scenario: every field that differs from the
    primer's 7B, only while the model is Custom (`values` is then not empty; a preset's name implies its fields)."""
    primer = presets()[PRIMER]
    keep_in_link(
        {
            key: field_link_form(values[name]) if values and values[name] != getattr(primer, name) else None
            for name, key in FIELD_KEYS.items()
        }
        | {NAME_KEY: custom_name() if values and custom_name() != YOUR_MODEL else None}
    )


def keep_in_link(wanted: dict[str, str | None]) -> None:
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


def compare_widget() -> None:
    """Up to four presets to compare with the current model (drawn in the calculator; kept in the session)."""
    select_field(
        f"Models to compare (up to {MAX_COMPARE}, beside the current one)",
        "compare",
        "Shown as extra lines in the charts and rows in the table.",
        default=COMPARE_DEFAULT,
        max_selections=4,
        widget=st.multiselect,
        **KEPT,
    )


def compared_models() -> tuple[ModelConfig, ...]:
    """The presets compared with the current model, as the session holds them, written into the link (the defaults
    leave it; none is written as an empty value)."""
    chosen = list(st.session_state.get("compare", COMPARE_DEFAULT))
    labels = [choices()["compare"][1](key) for key in chosen]
    if chosen == COMPARE_DEFAULT:
        if "compare" in st.query_params:
            del st.query_params["compare"]
    elif st.query_params.get_all("compare") != (labels or [""]):
        st.query_params["compare"] = labels or [""]
    return tuple(presets()[key] for key in chosen)


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
        "against measured servers. Budget by month: your day's traffic, growth and every way to pay, scenarios side "
        "by side and the workbook. Memory levers: what each memory lever saves. Model anatomy: where the bytes go. "
        "Sources: where every figure comes from. Latency under load: first token and token gaps as the request rate "
        "per copy grows.",
    )
    return picked
