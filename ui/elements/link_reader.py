"""Reading a shared link: every value a page's URL carries is checked once, before its widgets read it.

A link is untrusted input. Streamlit's URL binding raises on some values (`inf` for a whole number) and drops others
without a word (an option it does not know, a number out of range). So each page declares its link parameters once
(`Param`: one line each, built with `number`, `choice`, `flag` or `text`), `read_link` replaces what cannot be used by
the page's default before any widget runs, and `link_notice` names every such value, and what is used instead, in one
message whose user-derived text is escaped and shortened (`ui.elements.safe_text`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import streamlit as st

from core.numbers import Refused, number_text, read_number
from ui.elements.safe_text import plain, quoted

MAX_TEXT = 500  # characters any one link value may hold (a whole image or matrix fits in far fewer)


class Adjusted(ValueError):
    """A link value the page can use only once changed: what it uses (`value`, in the widget's form), why, and how
    to say what is used instead."""

    def __init__(self, value: str, reason: str, instead: str) -> None:
        super().__init__(reason)
        self.value, self.instead = value, instead


@dataclass(frozen=True)
class Param:
    """One link parameter: how to read one raw value into the form the widget reads, how many values it may hold,
    and what the page uses when a value is refused."""

    read: Callable[[str], str]
    many: int = 1
    instead: str = "the default is used"


def _ascii(raw: str) -> str:
    """The value stripped; refused when it holds a digit or character outside plain ASCII ('²', '٣')."""
    text = raw.strip()
    odd = next((c for c in text if not c.isascii()), None)
    if odd is not None:
        raise Refused(f"it holds “{odd}”, which is not a plain digit or letter")
    return text


def used(value: object) -> str:
    """What a notice says the page uses instead of a refused value: 'used 32,768 instead', 'used FP16 instead'."""
    shown = number_text(value) if isinstance(value, int | float) and not isinstance(value, bool) else str(value)
    return f"used {shown} instead"


def number(
    low: float, high: float, whole: bool = False, instead: str = "the default is used", default: float | None = None
) -> Param:
    """A number parameter in [low, high] (whole numbers only if `whole`), written back as the widget reads it; the
    notice names `default` as the value used for a refused one, when given."""
    return Param(
        lambda raw: str(read_number(raw, low, high, whole)), instead=instead if default is None else used(default)
    )


def _plain_key(text: str) -> str:
    """A label reduced to lower-case letters and digits, so 'Layer 1', 'layer-1' and 'layer1' all match."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def choice(
    options: Sequence[str],
    aliases: Mapping[str, str] | None = None,
    many: int = 1,
    instead: str = "the default is used",
    default: str | None = None,
) -> Param:
    """One of `options` (the labels the widget shows and the URL stores), matched loosely; `aliases` maps other
    spellings (e.g. 'L1H1') to labels. `many` > 1 for a multi-select. The notice names `default` as the choice
    used for a refused value, when given."""
    by_plain = {_plain_key(o): o for o in options} | {_plain_key(k): v for k, v in (aliases or {}).items()}
    shown = ", ".join(list(options)[:6]) + (", …" if len(options) > 6 else "")

    def read(raw: str) -> str:
        found = raw.strip() if raw.strip() in options else by_plain.get(_plain_key(raw)) if _plain_key(raw) else None
        if not found:
            raise Refused(f"it is not one of the choices ({shown})")
        return found

    return Param(read, many=many, instead=instead if default is None else used(default))


def flag(instead: str = "the default is used", default: bool | None = None) -> Param:
    """A yes/no switch: 'true'/'false' (also 1/0, yes/no, on/off); the notice names `default` (on/off) as the
    setting used for a refused value, when given."""
    words = {"true": "true", "1": "true", "yes": "true", "on": "true"}
    words |= {"false": "false", "0": "false", "no": "false", "off": "false"}

    def read(raw: str) -> str:
        if (found := words.get(_ascii(raw).lower())) is None:
            raise Refused("it is not true or false")
        return found

    return Param(read, instead=instead if default is None else used("on" if default else "off"))


def text(
    check: Callable[[str], object] | None = None, limit: int = MAX_TEXT, instead: str = "the default is used"
) -> Param:
    """Free text up to `limit` characters; `check` raises ValueError (its message = the reason) for text the page
    cannot use."""

    def read(raw: str) -> str:
        if len(raw) > limit:
            raise Refused(f"it is {len(raw):,} characters long; at most {limit:,} are read")
        if check is not None:
            try:
                check(raw)
            except ValueError as error:
                raise Refused(str(error)) from None
        return raw

    return Param(read, instead=instead)


def _note(key: str, raw: str, reason: str, instead: str) -> str:
    """One line of the notice: the parameter, an escaped excerpt of its value, why it was refused, what is used."""
    return f"**{plain(key)}** = {quoted(raw)}: {plain(reason.rstrip('. '), 240)}; {plain(instead, 120)}."


def clean(params: Mapping[str, Param], link: Mapping[str, list[str]]) -> tuple[dict[str, list[str]], list[str]]:
    """The link with every refused value left out and every value in the widget's form; and the notice's lines."""
    cleaned: dict[str, list[str]] = {}
    notes: list[str] = []
    for key, values in link.items():
        param = params.get(key)
        if param is None:
            cleaned[key] = list(values)
            continue
        if param.many > 1 and values == [""]:  # how the URL writes an empty multi-selection
            cleaned[key] = [""]
            continue
        kept: list[str] = []
        for raw in values if param.many > 1 else values[-1:]:
            try:
                value = param.read(raw)
            except Adjusted as adjusted:
                notes.append(_note(key, raw, str(adjusted), adjusted.instead))
                value = adjusted.value
            except Refused as error:
                notes.append(_note(key, raw, str(error), param.instead))
                continue
            if value not in kept:
                kept.append(value)
        if len(kept) > param.many:
            notes.append(
                f"**{plain(key)}** names {len(kept)} items; at most {param.many} are used, so "
                f"{', '.join(quoted(v) for v in kept[param.many :])} {'is' if len(kept) == param.many + 1 else 'are'} "
                "left out."
            )
            kept = kept[: param.many]
        if kept:
            cleaned[key] = kept
    return cleaned, notes


def read_link(page: str, params: Mapping[str, Param]) -> None:
    """Once per session, before the page's widgets: check the link's values, keep the notice's lines, and re-run
    with the cleaned link when anything had to change (Streamlit's binding reads the URL when a run starts)."""
    done = f"{page}_link_read"
    if st.session_state.get(done):
        return
    st.session_state[done] = True
    written = {key: st.query_params.get_all(key) for key in st.query_params}
    cleaned, notes = clean(params, written)
    if notes:
        st.session_state[f"{page}_link_notes"] = notes
    if cleaned != written:
        for key in written:
            if key not in cleaned:
                del st.query_params[key]
        for key, values in cleaned.items():
            if values != written.get(key):
                st.query_params[key] = values if len(values) > 1 else values[0]
        st.rerun()


def add_notes(page: str, notes: Sequence[str]) -> None:
    """Add lines to the page's link notice (values found unusable after the first check, e.g. a refused matrix)."""
    if notes:
        st.session_state[f"{page}_link_notes"] = [*st.session_state.get(f"{page}_link_notes", []), *notes]


def refusal(key: str, raw: str, reason: str, instead: str) -> str:
    """A notice line for a value refused outside `clean` (same form as its own lines)."""
    return _note(key, raw, reason, instead)


def typed_refusal(label: str, typed: object, reason: str, kept: float) -> str:
    """The message under a number field that refused a typed value: the field, the value, why, and the value kept."""
    shown = number_text(typed) if isinstance(typed, int | float) else typed
    return (
        f"**{plain(label, 120)}**: {quoted(shown)} cannot be used: {plain(reason.rstrip('. '), 240)}; "
        f"the field keeps {plain(number_text(kept))}."
    )


def link_notice(page: str) -> None:
    """The one message naming every link value the page could not use and what it used instead (until hidden)."""
    notes = st.session_state.get(f"{page}_link_notes")
    if not notes:
        return
    st.warning(
        "This link holds values the page could not use; each is named here with what is used instead:\n\n"
        + "\n".join(f"- {note}" for note in notes)
    )
    st.button(
        "Hide this message",
        key=f"{page}-hide-link-notes",
        on_click=st.session_state.pop,
        args=(f"{page}_link_notes", None),
    )
