"""A small table drawn as plain HTML, for a first screen: no Arrow table on the server (building one imports pandas,
a third of a second of a cold start) and no data-grid code in the browser (about 1.3 MB of script to load before the
page settles). Every cell is escaped, so a name from an uploaded config shows as written. The first column stays in
view while the table scrolls sideways on a narrow screen. A table's CSV download is a button inside the same element
holding the CSV (a few hundred bytes), saved by the script every page installs: no widget and no element of its own
on every rerun. The CSS and that script live in ui/elements/browser.py.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from ui.elements import html_element
from ui.elements.inert import csv_cell

Cell = str | int | float | None
Rows = Sequence[Sequence[Cell]]


def cell_text(value: Cell) -> str:
    """A cell as shown: whole numbers and decimals with thousands separators, a missing value as a dash."""
    if value is None:
        return "—"
    return f"{value:,}" if _is_number(value) else str(value)


def _is_number(value: Cell) -> bool:
    """True for an int or a float (not a bool): the cells shown right-aligned with thousands separators."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def table_html(
    columns: Sequence[str],
    rows: Rows,
    *,
    label: str,
    formats: Mapping[str, Callable[[Cell], str]] | None = None,
    footnote: str = "",
    heading: str = "",
    download: tuple[str, str] | None = None,
) -> str:
    """The table's HTML: a keyboard-scrollable region named `label`, header cells for the columns and for each row's
    first cell, numbers and their column's heading right-aligned; `formats` overrides how a column's values are shown
    (e.g. money); `footnote`, escaped, as a caption-style line under the table; `heading`, escaped, as a section
    heading above it; `download` = (name, file stem), a "Download name (CSV)" button under it that saves the raw
    values (`csv_bytes`) as stem.csv."""
    formats = formats or {}
    numeric_columns = {name for row in rows for name, value in zip(columns, row, strict=True) if _is_number(value)}
    head = "".join(
        f'<th scope="col"{" class=num" if name in numeric_columns else ""}>{html.escape(name)}</th>' for name in columns
    )
    body = []
    for row in rows:
        cells = []
        for index, (name, value) in enumerate(zip(columns, row, strict=True)):
            text = html.escape(formats.get(name, cell_text)(value))
            numeric = _is_number(value)
            tag, scope = ("th", ' scope="row"') if index == 0 else ("td", "")
            cells.append(f"<{tag}{scope}{' class=num' if numeric else ''}>{text}</{tag}>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    name = html.escape(label, quote=True)
    below = f'<p class="table-footnote">{html.escape(footnote)}</p>' if footnote else ""
    above = f"<h3>{html.escape(heading)}</h3>" if heading else ""
    if download:
        shown_name, stem = download
        below += (
            f'<button type="button" class="table-download" data-file="{html.escape(stem, quote=True)}.csv" '
            f'data-csv="{html.escape(csv_bytes(columns, rows).decode("utf-8"), quote=True)}">'
            f"Download {html.escape(shown_name)} (CSV)</button>"
        )
    return (
        f'{above}<div class="static-table" role="region" aria-label="{name}" tabindex="0">'
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>{below}"
    )


def static_table(
    columns: Sequence[str],
    rows: Rows,
    *,
    label: str,
    formats: Mapping[str, Callable[[Cell], str]] | None = None,
    footnote: str = "",
    heading: str = "",
    download: tuple[str, str] | None = None,
) -> None:
    """Draw the table with its heading, footnote and CSV download as one element (see `table_html`)."""
    shown = tuple((formats or {}).items())
    kept = _kept_html(tuple(columns), tuple(map(tuple, rows)), label, shown, footnote, heading, download)
    html_element.draw_html(kept)


@lru_cache(maxsize=64)  # 64 × ~5 kB
def _kept_html(
    columns: tuple[str, ...],
    rows: tuple[tuple[Cell, ...], ...],
    label: str,
    formats: tuple[tuple[str, Callable[[Cell], str]], ...],
    footnote: str,
    heading: str,
    download: tuple[str, str] | None,
) -> str:
    """`table_html` made once per content: a rerun that changes nothing in a table (another control moved) redraws
    it from the string already built."""
    return table_html(
        columns, rows, label=label, formats=dict(formats), footnote=footnote, heading=heading, download=download
    )


def csv_bytes(columns: Sequence[str], rows: Rows) -> bytes:
    """The table as CSV with its raw values (numbers unformatted, missing values empty, text a spreadsheet would run as
    a formula made inert), for a download."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(name) for name in columns])
    writer.writerows([["" if value is None else csv_cell(value) for value in row] for row in rows])
    return out.getvalue().encode("utf-8")
