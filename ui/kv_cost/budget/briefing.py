"""The budget in the cost page's briefing: the page's budget (its day, the months ahead, each way to pay) and the
scenarios side by side, as sentences, tables and charts; built from link values read while the page ran."""

from __future__ import annotations

from ui.elements.briefing import Chart
from ui.elements.numbers import dollars
from ui.kv_cost.budget import compare, view
from ui.kv_cost.budget import scenarios as sc
from ui.kv_cost.numbers import money

Table = tuple[str, list[str], list[list[str]]]


def parts(values: list[str]) -> tuple[list[tuple[str, list[str]]], list[Table], list[Chart]]:
    """(sections, tables, charts) of the budget for the page now (`values[0]`) and the kept scenarios."""
    rows, problems = compare.resolved(values)
    now = next((r for r in rows if r.name == compare.NOW), None)
    if now is None:
        return [("Budget by month", problems or ["No budget: the page's scenario cannot be planned."])], [], []
    own = view.compute(now.config, now.model_id, now.load, now.plan, now.made, now.args)
    b, d = own.budget, own.day
    sections = [("Budget by month", [d.sentence, b.sentence, view.years(b), view.break_even(b, now.load)])]
    ways = [[row[0], *(dollars(float(v)) for v in row[1:])] for row in view.rows(b)]
    tables: list[Table] = [("Each way to pay, by month and in all", list(view.columns(b.months)), ways)]
    charts = [
        Chart(own.monthly, f"Monthly cost of each way to pay over {b.months} months; the cheapest in all thickest.")
    ]
    if len(rows) > 1:
        shown = [
            [
                *map(str, row[:4]),
                *(dollars(v) for v in row[4:7]),
                "n/a" if row[7] is None else money(row[7]),
                f"{row[8]:.2f}",
                f"{row[9]:,}",
            ]
            for row in map(sc.row, rows)
        ]
        tables.append(("Scenarios side by side", list(compare.COLUMNS), shown))
        charts.append(Chart(compare.figure(rows), "Monthly cost of each scenario, by its way to pay."))
        sections.append(("Scenarios", [compare.FOOTNOTE, *problems]))
    return sections, tables, charts
