"""Reading a shared link into the cost page's scenario before any widget reads it.

A link may hold the page's own labels (`w_bits=16-bit`, `gpu=H200+SXM`) or plain forms typed by hand (`w_bits=8`,
`gpu=h200-sxm`, `model=llama-3.1-8b`); both restore the scenario. A value that is not exactly one of the allowed
forms is refused and named in the page's one notice, never reshaped."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import streamlit as st

from core.plan import kv_cache as kv
from core.plan.model_config import (
    FIELD_NAMES,
    LIMITS,
    presets,
)
from ui.elements import link_reader as lr
from ui.elements.safe_text import plain
from ui.kv_cost.own_model import (
    CUSTOM,
    CUSTOM_NAME,
    FIELD_KEYS,
    NAME_KEY,
    PRIMER,
    edited_preset,
    field_value,
    name_value,
)
from ui.kv_cost.scenario_names import kept_scenarios
from ui.kv_cost.settings import (
    ALLOWED_GPUS,
    AUTO,
    BUDGET_KEYS,
    CALCULATOR,
    CALCULATOR_KEYS,
    CALCULATOR_OPEN,
    CALCULATOR_OPEN_KEY,
    CURVE,
    DEFAULTS,
    ENGINE_DEFAULTS,
    FLEET,
    LINK_NOTES,
    LOAD_AS,
    MAX_COMPARE,
    MEMORY,
    MONTHS,
    NUMBERS,
    PAY_KEYS,
    PIN_TP,
    PRICE_KEYS,
    SCENARIO,
    SECTION,
    SHAPE,
    SIZES,
    WAY,
    WORKLOAD_KEYS,
    choices,
    memory,
    model_label,
)


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
        return lr.used(getattr(primer, name) if name in ("norm", "bias") else field_link_form(getattr(primer, name)))
    if key in NUMBERS:
        return lr.used(NUMBERS[key].default)
    firsts = {"kv_dtype": "fp16", "gpu": DEFAULTS["gpu"], "block": ENGINE_DEFAULTS["block"], "tp": AUTO}
    options, label = choices()[key]
    return lr.used(label(firsts.get(key, options[0])))


def prices_link_form(own: Mapping[str, float]) -> str | None:
    """How the link writes the reader's own prices: 'h100-sxm:2.1,l40s:0.95' (None when there are none)."""
    return ",".join(f"{gpu}:{value:g}" for gpu, value in own.items()) or None


def read_prices(raw: str, gpu: str, notes: list[str]) -> dict[str, float]:
    """The reader's own $/GPU-hour from a link value: 'GPU:dollars' pairs separated by commas ('h100-sxm:2.1'), or a
    plain number for the link's GPU (`gpu`). A pair naming no GPU preset, or a price that is not a positive, finite
    number within the field's bounds, is named in `notes` and left out (that GPU keeps its typical price)."""
    spec, out = NUMBERS["price"], {}
    for part in raw.split(","):
        name, _, value = part.rpartition(":")
        gpu_id = gpu if not name else match_choice(name, *choices()["gpu"])
        try:
            number = lr.read_number(value, spec.low, spec.high, False)
            if gpu_id is None:
                raise lr.Refused(f"{plain(name)} is not a GPU preset ({', '.join(kv.gpus())})")
            if not math.isfinite(number) or number <= 0:
                raise lr.Refused("it is not a positive dollar amount")
        except lr.Refused as refused:
            notes.append(lr.refusal("price", part, str(refused), "its typical public price is used instead"))
            continue
        out[str(gpu_id)] = float(number)
    return out


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
    if key == SCENARIO:
        return kept_scenarios(values, notes)
    if key == "price":  # the reader's own prices per GPU, read into the page's memory by `read_link`
        return [values[-1]]
    if key in options:
        found, label = [], options[key][1]
        for raw in values:
            option = match_choice(raw, *options[key])
            if option is None:
                shown = ", ".join(label(o) for o in options[key][0][:8])
                more = ", …" if len(options[key][0]) > 8 else ""
                instead = {
                    "compare": "it is left out",
                    ALLOWED_GPUS: "it is left out",
                    SECTION: "no section is opened",
                }.get(key) or _default_used(key)
                notes.append(lr.refusal(key, raw, f"it is not one of the choices ({shown}{more})", instead))
            elif label(option) not in found:
                found.append(label(option))
        if key == "compare" and len(found) > MAX_COMPARE:
            notes.append(
                f"**compare** names {len(found)} models; at most {MAX_COMPARE} are compared, so "
                + ", ".join(plain(name) for name in found[MAX_COMPARE:])
                + " are left out."
            )
        if key == ALLOWED_GPUS:  # several GPU types, like the comparison
            return found
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


def field_link_form(value: object) -> str:
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
    if NAME_KEY in link and model != CUSTOM:  # a name belongs to your own model only
        notes.append(
            lr.refusal(
                NAME_KEY,
                link.pop(NAME_KEY)[-1],
                "a name is used only with your own model (model = Custom)",
                "it is left out",
            )
        )
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
    for key in (LOAD_AS, SHAPE, FLEET, MONTHS, WAY):  # selectors drawn only in their sections
        if key in link:
            st.session_state[key] = match_choice(link[key][-1], *choices()[key])
    for key in (*BUDGET_KEYS, *PAY_KEYS):  # the budget's numbers; a way to pay's figure in the link is the reader's
        if key in link:
            st.session_state[key] = type(NUMBERS[key].default)(float(link[key][-1]))
            if key in PAY_KEYS:
                memory().pay_own[key] = float(link[key][-1])
    if CURVE in link:
        st.session_state[CURVE] = link[CURVE][-1][:2000]  # read by the budget, which names a curve it cannot use
    if "api" in link:
        st.session_state["api"] = match_choice(link["api"][-1], *choices()["api"])
    elif any(key in link for key in PRICE_KEYS):  # prices without a preset: the reader's own
        st.session_state["api"] = CUSTOM
    for key in (ALLOWED_GPUS, PIN_TP):  # the search's pins: drawn only in their expander, kept like the workload
        if key in link:
            found = [match_choice(raw, *choices()[key]) for raw in link[key]]
            st.session_state[key] = found if key == ALLOWED_GPUS else found[-1]
    if "context" not in link and ("prompt" in link or "answer" in link):  # the charts follow the workload's request
        sizes = [float(link[key][-1]) if key in link else NUMBERS[key].default for key in ("prompt", "answer")]
        link["context"] = [str(int(sum(sizes)))]
    if "price" in link:
        gpu = match_choice((link.get("gpu") or [DEFAULTS["gpu"]])[-1], *choices()["gpu"]) or DEFAULTS["gpu"]
        own = read_prices(link["price"][-1], str(gpu), notes)
        memory().own_prices = own
        link["price"] = [form] if (form := prices_link_form(own)) else []
    link = {key: values for key, values in link.items() if values}
    for key in ("kv_dtype", "w_bits", "gpu"):  # the calculator's selectors: kept in the session, drawn only when open
        if key in link:
            st.session_state[key] = match_choice(link[key][-1], *choices()[key])
    for key in SIZES:
        if key in link:
            st.session_state[key] = int(float(link[key][-1]))
    if "compare" in link:
        found = [match_choice(raw, *choices()["compare"]) for raw in link["compare"] if raw]
        st.session_state["compare"] = [key for key in found if key is not None]
    opens = CALCULATOR_KEYS & set(written) or any(key.startswith("f_") for key in written)  # a model's own sizes too
    if opens or link.get(CALCULATOR) == [CALCULATOR_OPEN]:  # a calculator's link opens it
        st.session_state[CALCULATOR_OPEN_KEY] = True
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
