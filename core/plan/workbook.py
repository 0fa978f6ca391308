"""The budget as a workbook a controller can audit and adapt: every input a named cell with its unit and source, and
every monthly figure a live formula over those names, so changing a price in the workbook changes every total.

Sheets: Assumptions (one block per scenario, each input a defined name `s<k>_<field>`), Plan <k> (one per scenario:
a summary, the cheapest way per year, and month by month the rate, copies, GPUs, servers, copy-hours, tokens, each
way's monthly and cumulative cost and the realistic $ per 1M tokens, beside the hour-by-hour copies, warm-ups and
served requests the monthly figures add up), and Sources. The formulas are those of core.plan.daily and
core.plan.budget, written with ROUNDUP, MAX, MIN, IF, SUM, AVERAGE, INDEX and MATCH; the capacity of one copy at the
latency target, its GPUs and its prefill share are input cells labelled as the planner's results.

All text a reader could have typed (scenario names above all) is written with write_string, and the workbook turns
no string into a formula or a link, so '=…', '+…', '@…' or 'http…' stay plain text. Each formula carries the engine's
own value as its cached result, so a viewer that does not recalculate still shows the numbers.

XlsxWriter is imported only when a workbook is written: a page that never writes one does not need it (`available`).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import numpy as np

from core.plan import budget as bg
from core.plan import daily as dl
from core.plan import kv_memory as kv
from core.plan import serving as sv
from core.plan.prices import gpu_prices

NO_MAXIMUM = 1_000_000  # the workbook's stand-in for "no maximum copies"
OPTIONS = {"in_memory": True, "strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False}
PLANNER = "planner's result: the search's sizing of one copy at the latency target"
YOURS = "your figure"


@dataclass(frozen=True)
class BudgetInputs:
    """What the workbook needs of one scenario: names, the plan's GPU and engine, the workload, a copy's capacity,
    the day's curve, the fleet, growth and payment; `typed` names the inputs the reader set ('your figure')."""

    name: str
    model: str
    gpu: str
    tp: int
    engine: str
    workload: sv.Workload
    capacity: dl.Capacity
    curve: np.ndarray
    fleet: dl.Fleet
    growth: bg.Growth
    payment: bg.Payment
    shape: str | None = None
    typed: frozenset[str] = field(default_factory=frozenset)


# --------------------------------------------------------------------------------------------------- assumptions
def _payment_rows(inputs: BudgetInputs) -> list[tuple[str, str, float, str, str]]:
    """(key, label, value, unit, source) for every figure of the ways to pay."""
    pay, own = inputs.payment, inputs.payment.owning
    presets = bg.sources(inputs.gpu)

    def src(key: str, value: float) -> str:
        preset = presets.get(key)
        if key in inputs.typed or preset is None or abs(preset.value - value) > 1e-12 * max(1.0, abs(value)):
            return YOURS
        return preset.text

    def row(key: str, label: str, value: float, unit: str) -> tuple[str, str, float, str, str]:
        return key, label, float(value), unit, src(key, value)

    api = pay.api
    api_src = f"{api.provider}'s list price for {api.model} ({api.date}), {api.source}"
    return [
        row("reserved_1y_discount", "Reserved 1-year discount", pay.reserved_1y_discount, "share off on-demand"),
        row("reserved_3y_discount", "Reserved 3-year discount", pay.reserved_3y_discount, "share off on-demand"),
        row("server_price", "Price of one server", own.server_price, "$ per server"),
        ("gpus_per_server", "GPUs per server", float(own.gpus_per_server), "GPUs", "an 8-GPU server (HGX/DGX class)"),
        row("depreciation_years", "Depreciation", own.depreciation_years, "years, straight line, no resale"),
        row("gpu_watts", "Power per GPU", own.gpu_watts, "W at its rated maximum"),
        row("server_watts", "Server power besides its GPUs", own.server_watts, "W per server"),
        row("pue", "PUE", own.pue, "facility power / IT power"),
        row("dollars_per_kwh", "Electricity", own.dollars_per_kwh, "$ per kWh"),
        row("colo_per_kw_month", "Colocation", own.colo_per_kw_month, "$ per kW of IT load a month"),
        row("ops_share", "Operations share", own.ops_share, "share added to depreciation + power + colocation"),
        ("api_input_per_m", "API input price", api.input_per_m, "$ per 1M input tokens",
         YOURS if "api" in inputs.typed else api_src),
        ("api_output_per_m", "API output price", api.output_per_m, "$ per 1M output tokens",
         YOURS if "api" in inputs.typed else api_src),
    ]  # fmt: skip


def _price_source(inputs: BudgetInputs) -> str:
    if "price_per_gpu_hour" in inputs.typed or inputs.gpu not in gpu_prices():
        return YOURS
    gp = gpu_prices()[inputs.gpu]
    if abs(gp.typical - inputs.capacity.price_per_gpu_hour) > 1e-12:
        return YOURS
    return (
        f"typical on-demand price: the median of {len(gp.offers)} public offers ({', '.join(gp.providers)}); "
        "see Sources"
    )


def _rows(inputs: BudgetInputs) -> list[tuple[str, str, float, str, str]]:
    """Every input of a scenario as (key, label, value, unit, source), in the order the Assumptions sheet lists."""
    w, c, f, g = inputs.workload, inputs.capacity, inputs.fleet, inputs.growth
    shape = (
        f"{dl.SHAPES[inputs.shape]}: {dl.shape_info(inputs.shape)['kind']} (see Sources)"
        if inputs.shape in dl.SHAPES and "curve" not in inputs.typed
        else YOURS
    )
    rows = [
        ("peak_rpm", "Peak requests per minute, month 1", w.requests_per_minute, "requests/min", YOURS),
        ("prompt_tokens", "Prompt per request", float(w.prompt_tokens), "tokens", YOURS),
        ("output_tokens", "Answer per request", float(w.output_tokens), "tokens", YOURS),
        ("hours_per_month", "Hours in a month", w.hours_per_month, "hours", "8,760 hours a year / 12"),
        ("growth_pct", "Growth of the request rate", g.monthly_percent, "% a month, compounded", YOURS),
        ("months", "Horizon", float(g.months), "months (the rows of the Plan sheet)", YOURS),
        ("capacity_rps", "Requests one copy carries at the latency target", c.requests_per_s_copy,
         "requests/s per copy", PLANNER),
        ("gpus_per_copy", "GPUs per copy", float(c.gpus_per_copy), "GPUs", PLANNER),
        ("prefill_share", "Prefill (input) share of a copy's time", c.prefill_share, "share", PLANNER),
        ("price_per_gpu_hour", "On-demand price", c.price_per_gpu_hour, "$ per GPU-hour", _price_source(inputs)),
        ("autoscale", "Autoscaling", 1.0 if f.autoscale else 0.0, "1 = autoscale, 0 = fixed fleet sized for the peak",
         YOURS),
        ("min_copies", "Minimum copies (autoscaling)", float(f.min_copies), "copies", YOURS),
        ("max_copies", "Maximum copies (autoscaling)", float(f.max_copies or NO_MAXIMUM),
         f"copies ({NO_MAXIMUM:,} = no maximum)", YOURS),
        ("scale_up_minutes", "Warm-up of a copy added", f.scale_up_minutes, "minutes, billed before its hour", YOURS),
        *_payment_rows(inputs),
    ]  # fmt: skip
    rows += [(f"h{h:02d}", f"Traffic {h:02d}:00-{h + 1:02d}:00", float(v), "share of the peak", shape)
             for h, v in enumerate(inputs.curve)]  # fmt: skip
    return rows


# --------------------------------------------------------------------------------------------------- the writer
class _Writer:
    """One workbook being written: formats, the Assumptions sheet's next row, the defined names."""

    def __init__(self, buffer: io.BytesIO) -> None:
        import xlsxwriter

        self.wb = xlsxwriter.Workbook(buffer, OPTIONS)
        wb = self.wb
        self.bold = wb.add_format({"bold": True})
        self.head = wb.add_format({"bold": True, "bg_color": "#DDE6F0", "text_wrap": True, "valign": "top"})
        self.input = wb.add_format({"bg_color": "#FFF2CC", "num_format": "General"})
        self.money = wb.add_format({"num_format": "$#,##0"})
        self.cents = wb.add_format({"num_format": "$#,##0.00"})
        self.count = wb.add_format({"num_format": "#,##0"})
        self.real = wb.add_format({"num_format": "#,##0.00"})
        self.wrap = wb.add_format({"text_wrap": True, "valign": "top"})
        self.assumptions = wb.add_worksheet("Assumptions")
        self.arow = 0

    def assumptions_block(self, k: int, name: str, inputs: BudgetInputs) -> None:
        """Scenario k's inputs on the Assumptions sheet, each a defined name s<k>_<key>."""
        ws = self.assumptions
        if k == 1:
            ws.set_column(0, 0, 44)
            ws.set_column(1, 1, 14)
            ws.set_column(2, 2, 34)
            ws.set_column(3, 3, 90)
            ws.set_column(4, 4, 26)
            ws.write_string(0, 0, "Every input of the plans: change a yellow cell and every total follows.", self.bold)
            self.arow = 2
        ws.write_string(self.arow, 0, f"Scenario {k}", self.head)
        ws.write_string(self.arow, 1, name, self.head)  # the reader's name: plain text, never a formula or link
        for col, text in enumerate(("", "", "")):
            ws.write_string(self.arow, 2 + col, text, self.head)
        self.arow += 1
        for col, text in enumerate(("Input", "Value", "Unit", "Source", "Defined name")):
            ws.write_string(self.arow, col, text, self.bold)
        self.arow += 1
        for key, label, value, unit, source in _rows(inputs):
            ws.write_string(self.arow, 0, label)
            ws.write_number(self.arow, 1, value, self.input)
            ws.write_string(self.arow, 2, unit)
            ws.write_string(self.arow, 3, source)
            ws.write_string(self.arow, 4, f"s{k}_{key}")
            self.wb.define_name(f"s{k}_{key}", f"='Assumptions'!{_cell(self.arow, 1, True, True)}")
            self.arow += 1
        self.arow += 1


# Columns of a Plan sheet's monthly table.
COLS = [
    "Month",
    "Peak requests/min",
    "Copies the peak needs, unrounded",
    "Copies for the peak",
    "Fewest copies an hour",
    "Most copies an hour",
    "Copies at the busiest hour",
    "GPUs",
    "Servers owned",
    "Copy-hours a day",
    "Copy-hours a month",
    "Requests served a day",
    "Requests a month (average rate)",
    "Input tokens a month",
    "Output tokens a month",
    *(f"{label}, $ a month" for label in bg.WAYS.values()),
    *(f"{label}, $ to date" for label in bg.WAYS.values()),
    "Realistic $ per 1M input tokens (on-demand)",
    "Realistic $ per 1M output tokens (on-demand)",
    "IT load, kW",
]
C = {name: i for i, name in enumerate(COLS)}
MONTHLY0 = C[f"{bg.WAYS['on-demand']}, $ a month"]
CUMUL0 = C[f"{bg.WAYS['on-demand']}, $ to date"]
HOUR0 = len(COLS) + 1  # the copies each hour
NOTE = (
    "Copies each hour (one array formula a month): the copies the peak needs times the hour's share, rounded up, "
    "kept between the month's fewest and most (autoscaling: its minimum and maximum; a fixed fleet: the peak's "
    "copies all day). Copy-hours add each copy added since the hour before (23:00 before 00:00) times the warm-up. "
    "Requests served: hour by hour the smaller of the rate and what the copies carry, (a + b - |a - b|) / 2."
)
HEADER = 24  # the monthly table's header row (0-based); months below it
RULES = (
    "Month m's peak rate = the peak × (1 + growth)^(m - 1); every day of the month follows the traffic shape.",
    "Copies each hour = the hour's rate over one copy's capacity, rounded up; autoscaling keeps them between its "
    "minimum and maximum, a fixed fleet runs the peak's copies all day.",
    "Copy-hours a day = the copies of every hour + each copy added since the hour before × the warm-up (billed).",
    "On-demand = copy-hours a month × GPUs per copy × the price per GPU-hour.",
    "Reserved = the busiest hour's GPUs × hours × price × (1 - discount), used or not; a term is a commitment for its "
    "whole 1 or 3 years, and months of it past the horizon are not counted here.",
    "Own = (servers × server price / (depreciation years × 12) + IT kW × PUE × $/kWh × hours + IT kW × colocation) × "
    "(1 + operations share); IT kW = (GPUs × GPU watts + servers × server watts) / 1000, GPUs at their rated power "
    "all month; servers are only ever added, never sold.",
    "API = the month's tokens at the average rate (the day's mean, not its peak) × the API's prices.",
    "Realistic $ per 1M tokens = a day's on-demand bill × the prefill share (input) or the rest (output) over the "
    "day's served tokens; the best case bills the peak rate every hour.",
    "Break-even = month 1's cost of the cheapest self-hosted way over the horizon / the API's price per token.",
)


def _cell(row: int, col: int, row_abs: bool = False, col_abs: bool = False) -> str:
    from xlsxwriter.utility import xl_rowcol_to_cell

    return xl_rowcol_to_cell(row, col, row_abs, col_abs)


def _plan_sheet(w: _Writer, k: int, name: str, inputs: BudgetInputs, b: bg.Budget) -> None:
    """Scenario k's Plan sheet: a summary, the cheapest way per year and the monthly table, all formulas."""
    ws = w.wb.add_worksheet(f"Plan {k}")
    n = f"s{k}_"
    first, last = HEADER + 1, HEADER + b.months
    ws.set_column(0, HOUR0 + 24, 14)
    ws.set_column(0, 0, 44)
    ws.write_string(0, 0, f"Scenario {k}", w.bold)
    ws.write_string(0, 1, name, w.bold)
    gpu = kv.gpus()[inputs.gpu].name if inputs.gpu in kv.gpus() else inputs.gpu
    facts = [("Model", inputs.model), ("GPU", gpu), ("GPUs per copy", str(inputs.tp))]
    facts += [("Engine", inputs.engine), ("Fleet", "autoscaling" if inputs.fleet.autoscale else "fixed, for the peak")]
    for i, (label, text) in enumerate(facts):
        ws.write_string(1 + i, 0, label)
        ws.write_string(1 + i, 1, text)
    # --- the monthly table
    for col, label in enumerate(COLS):
        ws.write_string(HEADER, col, label, w.head)
    ws.write_string(HEADER - 1, HOUR0 - 1, "Traffic share of the peak", w.bold)
    for h in range(24):
        ws.write_string(HEADER, HOUR0 + h, f"Copies {h:02d}:00", w.head)
        ws.write_formula(HEADER - 1, HOUR0 + h, f"={n}h{h:02d}", w.real, float(inputs.curve[h]))
    ws.write_string(HEADER - 2, HOUR0, NOTE)
    shares = f"{_cell(HEADER - 1, HOUR0, True, True)}:{_cell(HEADER - 1, HOUR0 + 23, True, True)}"
    cap = inputs.capacity
    for m in range(b.months):
        r = first + m
        d = b.days[m]
        copies = np.asarray(d.hourly_copies, dtype=np.float64)
        peak = f"{_cell(r, C['Peak requests/min'])}"
        hour_copies = f"{_cell(r, HOUR0)}:{_cell(r, HOUR0 + 23)}"
        f = {}
        f["Month"] = (None, m + 1)
        f["Peak requests/min"] = (f"={n}peak_rpm*(1+{n}growth_pct/100)^({_cell(r, 0)}-1)", b.rpm_by_month[m])
        peak_copies = max(1, int(dl.copies_for(b.rpm_by_month[m], cap)))
        unrounded = _cell(r, C["Copies the peak needs, unrounded"])
        fixed = _cell(r, C["Copies for the peak"])
        x = b.rpm_by_month[m] / 60.0 / cap.requests_per_s_copy
        f["Copies the peak needs, unrounded"] = (f"={peak}/60/{n}capacity_rps", x)
        f["Copies for the peak"] = (f"=MAX(1,ROUNDUP({unrounded}-1E-9,0))", peak_copies)
        lo = inputs.fleet.min_copies if inputs.fleet.autoscale else peak_copies
        hi = (inputs.fleet.max_copies or NO_MAXIMUM) if inputs.fleet.autoscale else peak_copies
        f["Fewest copies an hour"] = (f"=IF({n}autoscale=1,{n}min_copies,{fixed})", lo)
        f["Most copies an hour"] = (f"=IF({n}autoscale=1,{n}max_copies,{fixed})", hi)
        f["Copies at the busiest hour"] = (f"=MAX({hour_copies})", b.copies_by_month[m])
        f["GPUs"] = (f"={_cell(r, C['Copies at the busiest hour'])}*{n}gpus_per_copy", b.gpus_by_month[m])
        need = f"ROUNDUP({_cell(r, C['GPUs'])}/{n}gpus_per_server-1E-9,0)"
        before = _cell(r - 1, C["Servers owned"])
        f["Servers owned"] = (f"={need}" if m == 0 else f"=MAX({before},{need})", b.servers_by_month[m])
        now, before = f"{_cell(r, HOUR0 + 1)}:{_cell(r, HOUR0 + 23)}", f"{_cell(r, HOUR0)}:{_cell(r, HOUR0 + 22)}"
        warm = f"SUMPRODUCT(({now}>{before})*({now}-{before}))+MAX(0,{_cell(r, HOUR0)}-{_cell(r, HOUR0 + 23)})"
        f["Copy-hours a day"] = (f"=SUM({hour_copies})+({warm})*{n}scale_up_minutes/60", d.copy_hours)
        per_day = _cell(r, C["Copy-hours a day"])
        f["Copy-hours a month"] = (f"={per_day}*{n}hours_per_month/24", b.copy_hours_by_month[m])
        rate, carry = f"{peak}*{shares}", f"{hour_copies}*{n}capacity_rps*60"
        f["Requests served a day"] = (f"=SUMPRODUCT(({rate}+{carry}-ABS({rate}-{carry}))/2)*60", d.served_requests)
        requests = b.input_tokens_by_month[m] / cap.prompt_tokens
        f["Requests a month (average rate)"] = (f"={peak}*AVERAGE({shares})*60*{n}hours_per_month", requests)
        req = _cell(r, C["Requests a month (average rate)"])
        f["Input tokens a month"] = (f"={req}*{n}prompt_tokens", b.input_tokens_by_month[m])
        f["Output tokens a month"] = (f"={req}*{n}output_tokens", b.output_tokens_by_month[m])
        gpus, servers, kw = (_cell(r, C[x]) for x in ("GPUs", "Servers owned", "IT load, kW"))
        price = f"{n}price_per_gpu_hour"
        costs = {
            "on-demand": f"={_cell(r, C['Copy-hours a month'])}*{n}gpus_per_copy*{price}",
            "reserved-1y": f"={gpus}*{n}hours_per_month*{price}*(1-{n}reserved_1y_discount)",
            "reserved-3y": f"={gpus}*{n}hours_per_month*{price}*(1-{n}reserved_3y_discount)",
            "own": (
                f"=({servers}*{n}server_price/({n}depreciation_years*12)+{kw}*{n}pue*{n}dollars_per_kwh*"
                f"{n}hours_per_month+{kw}*{n}colo_per_kw_month)*(1+{n}ops_share)"
            ),
            "api": (
                f"=({_cell(r, C['Input tokens a month'])}*{n}api_input_per_m+"
                f"{_cell(r, C['Output tokens a month'])}*{n}api_output_per_m)/1000000"
            ),
        }
        for i, way in enumerate(bg.WAYS):
            f[COLS[MONTHLY0 + i]] = (costs[way], b.monthly[way][m])
            mine = _cell(r, MONTHLY0 + i)
            to_date = f"={mine}" if m == 0 else f"={_cell(r - 1, CUMUL0 + i)}+{mine}"
            f[COLS[CUMUL0 + i]] = (to_date, b.cumulative[way][m])
        day_cost = f"{per_day}*{n}gpus_per_copy*{price}"
        served_day = _cell(r, C["Requests served a day"])
        f[COLS[C["Realistic $ per 1M input tokens (on-demand)"]]] = (
            f"=1000000*{day_cost}*{n}prefill_share/({served_day}*{n}prompt_tokens)",
            d.realistic_per_m_input,
        )
        f[COLS[C["Realistic $ per 1M output tokens (on-demand)"]]] = (
            f"=1000000*{day_cost}*(1-{n}prefill_share)/({served_day}*{n}output_tokens)",
            d.realistic_per_m_output,
        )
        kw_value = (b.gpus_by_month[m] * inputs.payment.owning.gpu_watts + b.servers_by_month[m] *
                    inputs.payment.owning.server_watts) / 1000.0  # fmt: skip
        f["IT load, kW"] = (f"=({gpus}*{n}gpu_watts+{servers}*{n}server_watts)/1000", kw_value)
        for label, (formula, value) in f.items():
            col = C[label]
            fmt = w.money if MONTHLY0 <= col < CUMUL0 + 5 else w.cents if "$ per 1M" in label else w.real
            if formula is None:
                ws.write_number(r, col, float(value))
            else:
                ws.write_formula(r, col, formula, fmt, float(value))
        lo_cell = _cell(r, C["Fewest copies an hour"], col_abs=True)
        hi_cell = _cell(r, C["Most copies an hour"], col_abs=True)
        x_cell = _cell(r, C["Copies the peak needs, unrounded"], col_abs=True)
        rounded = f"ROUNDUP({x_cell}*{shares}-1E-9,0)"
        need = f"IF({x_cell}*{shares}>0,IF({rounded}<1,1,{rounded}),0)"  # any traffic needs a copy, none needs none
        formula = f"{{=IF({need}<{lo_cell},{lo_cell},IF({need}>{hi_cell},{hi_cell},{need}))}}"
        ws.write_array_formula(r, HOUR0, r, HOUR0 + 23, formula, w.count, float(copies[0]))
        for h in range(1, 24):  # the array's other cells hold only their cached values, as Excel stores them
            ws.write_number(r, HOUR0 + h, float(copies[h]), w.count)
    _summary(w, ws, k, b, first, last)


def _summary(w: _Writer, ws, k: int, b: bg.Budget, first: int, last: int) -> None:
    """The summary above the monthly table: totals, month 1 and the last month per way, the cheapest way over the
    horizon and per year, realistic and best-case $ per 1M tokens, and the API break-even volume."""
    n = f"s{k}_"
    hosted = f"{_cell(last, CUMUL0)}:{_cell(last, CUMUL0 + 3)}"
    month1 = f"{_cell(first, MONTHLY0)}:{_cell(first, MONTHLY0 + 3)}"
    top = 7
    for col, text in enumerate(("Way to pay", "Total over the horizon", "Month 1", f"Month {b.months}")):
        ws.write_string(top, col, text, w.head)
    for i, way in enumerate(bg.WAYS):
        r = top + 1 + i
        ws.write_string(r, 0, bg.WAYS[way])
        ws.write_formula(r, 1, f"={_cell(last, CUMUL0 + i)}", w.money, b.total(way))
        ws.write_formula(r, 2, f"={_cell(first, MONTHLY0 + i)}", w.money, float(b.monthly[way][0]))
        ws.write_formula(r, 3, f"={_cell(last, MONTHLY0 + i)}", w.money, float(b.monthly[way][-1]))
    r = top + 7
    ws.write_string(r, 0, "Cheapest over the horizon", w.bold)
    names = f"{_cell(top + 1, 0)}:{_cell(top + 5, 0)}"
    sums = f"{_cell(top + 1, 1)}:{_cell(top + 5, 1)}"
    ws.write_formula(r, 1, f"=INDEX({names},MATCH(MIN({sums}),{sums},0))", None, bg.WAYS[b.cheapest])
    api_per_token = f"(({n}prompt_tokens*{n}api_input_per_m+{n}output_tokens*{n}api_output_per_m)/1000000/" \
        f"({n}prompt_tokens+{n}output_tokens))"  # fmt: skip
    rows = [
        ("Realistic $ per 1M input tokens, month 1 (on-demand)", f"={_cell(first, COLS.index(COLS[-3]))}",
         b.realistic_per_m_input, w.cents),
        ("Realistic $ per 1M output tokens, month 1 (on-demand)", f"={_cell(first, COLS.index(COLS[-2]))}",
         b.realistic_per_m_output, w.cents),
        ("Best case $ per 1M output tokens (peak rate every hour)",
         f"=1000000*{_cell(first, C['Copies for the peak'])}*24*{n}gpus_per_copy*{n}price_per_gpu_hour*"
         f"(1-{n}prefill_share)/({_cell(first, 1)}*60*24*{n}output_tokens)", b.best_per_m_output, w.cents),
        ("API break-even: tokens a month at which the API costs month 1 of the cheapest self-hosted way",
         f"=INDEX({month1},MATCH(MIN({hosted}),{hosted},0))/{api_per_token}", b.break_even_tokens_per_month,
         w.count),
    ]  # fmt: skip
    for i, (label, formula, value, fmt) in enumerate(rows):
        ws.write_string(r + 1 + i, 0, label)
        ws.write_formula(r + 1 + i, 1, formula, fmt, float(value))
    # the cheapest way per year, from each year's sums
    col0 = 5
    ws.write_string(top, col0, "Year", w.head)
    for i, way in enumerate(bg.WAYS):
        ws.write_string(top, col0 + 1 + i, bg.WAYS[way], w.head)
    ws.write_string(top, col0 + 6, "Cheapest that year", w.head)
    for y in range(b.months // 12):
        r = top + 1 + y
        ws.write_number(r, col0, y + 1)
        a, z = first + 12 * y, first + 12 * y + 11
        for i, way in enumerate(bg.WAYS):
            value = float(b.monthly[way][12 * y : 12 * y + 12].sum())
            ws.write_formula(r, col0 + 1 + i, f"=SUM({_cell(a, MONTHLY0 + i)}:{_cell(z, MONTHLY0 + i)})", w.money,
                             value)  # fmt: skip
        sums = f"{_cell(r, col0 + 1)}:{_cell(r, col0 + 5)}"
        heads = f"{_cell(top, col0 + 1)}:{_cell(top, col0 + 5)}"
        ws.write_formula(r, col0 + 6, f"=INDEX({heads},MATCH(MIN({sums}),{sums},0))", None,
                         bg.WAYS[b.cheapest_by_year[y]])  # fmt: skip
    ws.freeze_panes(0, 1)  # the labels stay in view; the summary and table scroll


# --------------------------------------------------------------------------------------------------- sources
def _sources_sheet(w: _Writer, scenarios: list[tuple[str, BudgetInputs, bg.Budget]]) -> None:
    """Where every preset comes from, per scenario: the budget presets, the GPU's public offers, the API's price and
    the traffic shape; and the rules the formulas follow."""
    ws = w.wb.add_worksheet("Sources")
    ws.set_column(0, 0, 12)
    ws.set_column(1, 1, 34)
    ws.set_column(2, 2, 14)
    ws.set_column(3, 3, 120)
    row = 0
    ws.write_string(row, 0, "How the plan is computed", w.bold)
    for line in RULES:
        row += 1
        ws.write_string(row, 3, line)
    row += 2
    for col, text in enumerate(("Scenario", "Figure", "Value", "Source")):
        ws.write_string(row, col, text, w.head)
    for k, (name, inputs, _b) in enumerate(scenarios, start=1):
        lines: list[tuple[str, float | None, str]] = []
        for key, s in bg.sources(inputs.gpu).items():
            lines.append((key, s.value, f"[{s.status}] {s.text}"))
        if inputs.gpu in gpu_prices():
            for o in gpu_prices()[inputs.gpu].offers:
                lines.append((f"on-demand offer: {o.provider}", o.price_per_gpu_hour,
                              f"{o.offer}, listed {o.date}, {o.source}"))  # fmt: skip
        api = inputs.payment.api
        lines.append(("API prices", None, f"{api.provider}, {api.model}, list price of {api.date}, {api.source}"))
        for p in bg.reserved_providers():
            cite = f"{p['offer']}: {p['note']} {p['publisher']}, {p['title']} ({p['date']}), {p['url']}"
            lines.append((f"reserved ceiling: {p['provider']}", p["ceiling"], cite))
        if inputs.shape in dl.SHAPES and "curve" not in inputs.typed:
            info = dl.shape_info(inputs.shape)
            lines.append(("traffic shape", None, f"{info['label']} ({info['kind']}): {info['description']} "
                                                 f"{info['reason']}"))  # fmt: skip
        lines.append(("capacity per copy", inputs.capacity.requests_per_s_copy, PLANNER))
        for figure, value, text in lines:
            row += 1
            ws.write_string(row, 0, f"Scenario {k}")
            ws.write_string(row, 1, figure)
            if value is not None:
                ws.write_number(row, 2, float(value))
            ws.write_string(row, 3, text)
        row += 1
        ws.write_string(row, 0, f"Scenario {k}")
        ws.write_string(row, 1, "name")
        ws.write_string(row, 3, name)


def available() -> bool:
    """True when XlsxWriter, which writes the workbook, can be imported."""
    try:
        import xlsxwriter  # noqa: F401
    except ImportError:
        return False
    return True


def workbook_bytes(scenarios: list[tuple[str, BudgetInputs, bg.Budget]]) -> bytes:
    """The xlsx of one or more scenarios (name, inputs, the engine's budget): Assumptions with named inputs, one Plan
    sheet of live formulas per scenario, and Sources. ValueError without a scenario."""
    if not scenarios:
        raise ValueError("a workbook needs at least one scenario")
    buffer = io.BytesIO()
    w = _Writer(buffer)
    for k, (name, inputs, _b) in enumerate(scenarios, start=1):
        w.assumptions_block(k, name, inputs)
    for k, (name, inputs, b) in enumerate(scenarios, start=1):
        _plan_sheet(w, k, name, inputs, b)
    _sources_sheet(w, scenarios)
    w.wb.close()
    return buffer.getvalue()


def column(label: str) -> str:
    """The Plan sheet's column letter of a monthly figure (for readers and tests)."""
    from xlsxwriter.utility import xl_col_to_name

    return xl_col_to_name(C[label])
