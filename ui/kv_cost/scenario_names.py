"""The names of the budget's kept scenarios, from a link or typed: on one line, without invisible format characters
(a right-to-left override would make a name display in another order in the page, the CSV, the chart's legend and the
briefing), at most SCENARIO_NAME_CHARS characters, and unique (a repeat gets ' (2)'). Whatever is changed is named in
the page's notice; scenarios beyond the most kept are named as left out."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

from ui.elements import link_reader as lr
from ui.elements.numbers import in_words
from ui.elements.safe_text import invisible, quoted, without_invisible
from ui.kv_cost.settings import MAX_SCENARIOS, NOW, SCENARIO, SCENARIO_NAME_CHARS

UNNAMED = "(unnamed)"


def typed_name(raw: str) -> tuple[str, str]:
    """A scenario's name made plain, and what was changed in words ('' when nothing was)."""
    removed = invisible(raw)
    name = " ".join(without_invisible(raw).split())
    said = []
    if removed:
        said.append(f"invisible characters that can reorder text were removed ({', '.join(removed)})")
    if any(c in raw for c in "\t\n\r\v\f"):
        said.append("its tabs and line breaks became spaces")
    if len(name) > SCENARIO_NAME_CHARS:
        name = name[:SCENARIO_NAME_CHARS].rstrip()
        said.append(f"it was cut to {SCENARIO_NAME_CHARS} characters")
    return name, "; ".join(said)


def kept_scenarios(values: list[str], notes: list[str]) -> list[str]:
    """The link's scenario values with plain, unique names, at most MAX_SCENARIOS; each change named in `notes`."""
    out: list[str] = []
    names = [NOW]
    dropped: list[str] = []
    for value in values:
        pairs = parse_qsl(value, keep_blank_values=True)
        raw = next((v for k, v in reversed(pairs) if k == "name"), UNNAMED)
        name, said = typed_name(raw)
        name = name or UNNAMED
        if said:
            notes.append(lr.refusal(SCENARIO, raw, f"in its name, {said}", f"it is kept as “{name}”"))
        if len(out) == MAX_SCENARIOS:
            dropped.append(name)
            continue
        unique, count = name, 2
        while unique in names:
            unique, count = f"{name} ({count})", count + 1
        if unique != name:
            why = "it is the comparison's name for the page as it is now" if name == NOW else "another scenario has it"
            notes.append(lr.refusal(SCENARIO, name, why, f"it is kept as “{unique}”"))
        names.append(unique)
        rest = [(k, v) for k, v in pairs if k != "name"]
        out.append(value if unique == raw else urlencode([("name", unique), *rest]))
    if dropped:
        shown = in_words([quoted(n) for n in dropped])
        notes.append(
            f"**{SCENARIO}**: at most {MAX_SCENARIOS} scenarios are kept beside the page, so {shown} "
            f"{'is' if len(dropped) == 1 else 'are'} left out."
        )
    return out
