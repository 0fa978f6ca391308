"""The workbook's live formulas, recomputed by an independent formula engine (the `formulas` package), give the
engine's own totals for 20 seeded random scenarios; a price typed into the workbook changes every total that
depends on it; a reader's text is stored as plain text, never a formula or a link."""

from __future__ import annotations

import io
import re
import time
import zipfile
from dataclasses import replace

import numpy as np
import pytest

from core.plan import budget as bg
from core.plan import daily as dl
from core.plan import search as se
from core.plan import serving as sv
from core.plan import workbook as wbk
from core.plan.model_config import presets

formulas = pytest.importorskip("formulas")
openpyxl = pytest.importorskip("openpyxl")

MODELS = ("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen2.5-7b", "gemma-2-9b")
REL = 1e-4  # 0.01%
SCENARIOS = 20
SUMMARY_TOP = 8
# Half the scenarios run 12 months: `formulas` compiles about 30 cells a month at some 3 ms each, and 20 scenarios of
# uniformly drawn horizons took 67 s on a shared 2-core machine; these odds keep the test near a minute.
HORIZON_ODDS = (0.6, 0.2, 0.2)  # the summary's first way-to-pay row (1-based): see workbook._summary


def random_scenario(rng: np.random.Generator, k: int):
    """A plannable scenario with every input drawn at random: model, workload, curve, fleet, growth, prices."""
    while True:
        model = MODELS[rng.integers(len(MODELS))]
        config = presets()[model]
        load = sv.Workload(
            requests_per_minute=float(rng.uniform(10, 1500)),
            prompt_tokens=int(rng.integers(100, 3000)),
            output_tokens=int(rng.integers(50, 800)),
            ttft_s=float(rng.uniform(1.5, 5)),
            min_tokens_per_s=float(rng.uniform(8, 30)),
        )
        plan = se.search(config, load).plan
        if plan is not None:
            break
    if rng.random() < 0.5:
        shape = list(dl.SHAPES)[rng.integers(len(dl.SHAPES))]
        curve = dl.shape(shape)
    else:
        shape, curve = None, rng.uniform(0, 1, 24)
        curve[rng.integers(24)] = 1.0
        curve = curve / curve.max()
    autoscale = bool(rng.random() < 0.6)
    low = int(rng.integers(0, 3))
    top = None if rng.random() < 0.5 else low + int(rng.integers(1, 4))
    fleet = dl.Fleet(autoscale, low if autoscale else 1, top if autoscale else None, float(rng.uniform(0, 30)))
    growth = bg.Growth(float(rng.uniform(-8, 20)), int(rng.choice(bg.HORIZONS, p=HORIZON_ODDS)))
    pay = bg.default_payment(plan.gpu.id, config, model, load)
    own = pay.owning
    scale = lambda: float(rng.uniform(0.5, 2.0))  # noqa: E731
    pay = bg.Payment(
        reserved_1y_discount=float(rng.uniform(0, 0.6)),
        reserved_3y_discount=float(rng.uniform(0, 0.8)),
        owning=replace(
            own, server_price=own.server_price * scale(), pue=1 + (own.pue - 1) * scale(),
            dollars_per_kwh=own.dollars_per_kwh * scale(), ops_share=own.ops_share * scale(),
        ),
        api=replace(pay.api, input_per_m=pay.api.input_per_m * scale(), output_per_m=pay.api.output_per_m * scale()),
    )  # fmt: skip
    cap = replace(dl.Capacity.of(plan, load), price_per_gpu_hour=plan.price * scale())
    b = bg.budget(config, model, load, plan, curve, fleet, growth, pay, capacity=cap)
    name = f"Scenario {k}"
    inputs = wbk.BudgetInputs(name, config.name, plan.gpu.id, plan.tp, "vllm", load, cap, curve, fleet, growth, pay,
                              shape)  # fmt: skip
    return name, inputs, b


def recompute(data: bytes, tmp_path, inputs: dict | None = None):
    """Every cell of the workbook as the `formulas` package computes it: a reader by (sheet, cell)."""
    path = tmp_path / "plan.xlsx"
    path.write_bytes(data)
    model = formulas.ExcelModel().loads(str(path)).finish()
    solution = model.calculate(inputs=inputs or {})

    def value(sheet: str, cell: str):
        v = solution[f"'[plan.xlsx]{sheet.upper()}'!{cell}"].value[0, 0]
        return v if isinstance(v, str) else float(v)

    return value


def expected(b: bg.Budget) -> dict[str, float | str]:
    """The engine's figures the workbook's summary shows, by the summary's cell."""
    out: dict[str, float | str] = {}
    for i, way in enumerate(bg.WAYS):
        r = SUMMARY_TOP + 1 + i
        out[f"B{r}"], out[f"C{r}"], out[f"D{r}"] = b.total(way), b.monthly[way][0], b.monthly[way][-1]
    r = SUMMARY_TOP + 7
    out[f"B{r}"] = bg.WAYS[b.cheapest]
    out[f"B{r + 1}"], out[f"B{r + 2}"] = b.realistic_per_m_input, b.realistic_per_m_output
    out[f"B{r + 3}"], out[f"B{r + 4}"] = b.best_per_m_output, b.break_even_tokens_per_month
    for y, way in enumerate(b.cheapest_by_year):
        out[f"L{SUMMARY_TOP + 1 + y}"] = bg.WAYS[way]
    return out


def test_twenty_random_scenarios_recompute_to_the_engines_totals(tmp_path):
    rng = np.random.default_rng(27)
    scenarios = [random_scenario(rng, k) for k in range(SCENARIOS)]
    started, checked = time.perf_counter(), 0
    for chunk in range(0, SCENARIOS, 4):  # up to 4 scenarios a workbook, as the page keeps
        group = scenarios[chunk : chunk + 4]
        value = recompute(wbk.workbook_bytes(group), tmp_path)
        for k, (_name, _inputs, b) in enumerate(group, start=1):
            for cell, want in expected(b).items():
                got = value(f"Plan {k}", cell)
                if isinstance(want, str):
                    assert got == want, (chunk + k, cell)
                else:
                    assert got == pytest.approx(float(want), rel=REL), (chunk + k, cell)
                checked += 1
    print(f"\n{SCENARIOS} scenarios, {checked} figures recomputed in {time.perf_counter() - started:.1f} s")
    assert {s[2].months for s in scenarios} == set(bg.HORIZONS)
    assert any(s[1].fleet.autoscale for s in scenarios) and not all(s[1].fleet.autoscale for s in scenarios)


def _named_cell(data: bytes, name: str) -> str:
    book = openpyxl.load_workbook(io.BytesIO(data))
    target = next(iter(book.defined_names[name].destinations))
    return target[1].replace("$", "")


def test_a_price_typed_into_the_workbook_changes_every_total_that_uses_it(tmp_path):
    config, load = presets()["llama-3.1-8b"], sv.Workload(600, 1000, 250)
    plan = se.search(config, load, gpus=["h100-sxm"]).plan
    pay = bg.default_payment(plan.gpu.id, config, "llama-3.1-8b", load)
    growth, fleet, curve = bg.Growth(5.0, 12), dl.Fleet(autoscale=True), dl.shape("office-hours")
    b = bg.budget(config, "llama-3.1-8b", load, plan, curve, fleet, growth, pay)
    inputs = wbk.BudgetInputs("Base", config.name, plan.gpu.id, plan.tp, "vllm", load, dl.Capacity.of(plan, load),
                              curve, fleet, growth, pay, "office-hours")  # fmt: skip
    data = wbk.workbook_bytes([("Base", inputs, b)])
    price_cell = _named_cell(data, "s1_price_per_gpu_hour")
    kwh_cell = _named_cell(data, "s1_dollars_per_kwh")
    doubled = recompute(
        data, tmp_path,
        {f"'[plan.xlsx]ASSUMPTIONS'!{price_cell}": 2 * plan.price,
         f"'[plan.xlsx]ASSUMPTIONS'!{kwh_cell}": 2 * pay.owning.dollars_per_kwh},
    )  # fmt: skip
    rows = {way: SUMMARY_TOP + 1 + i for i, way in enumerate(bg.WAYS)}
    for way in ("on-demand", "reserved-1y", "reserved-3y"):
        assert doubled("Plan 1", f"B{rows[way]}") == pytest.approx(2 * b.total(way), rel=1e-9)
    assert doubled("Plan 1", f"B{rows['api']}") == pytest.approx(b.total("api"), rel=1e-9)
    assert doubled("Plan 1", f"B{rows['own']}") > b.total("own") * 1.01
    assert doubled("Plan 1", f"B{SUMMARY_TOP + 9}") == pytest.approx(2 * b.realistic_per_m_output, rel=1e-9)


@pytest.mark.parametrize("name", ['=HYPERLINK("http://x")', "+1", "-1", "@SUM(A1)", "<b>x</b>", "[a](b)", "http://x"])
def test_a_scenario_name_is_stored_as_plain_text(name):
    config, load = presets()["llama-3.1-8b"], sv.Workload(60, 1000, 250)
    plan = se.search(config, load, gpus=["l4"]).plan
    pay = bg.default_payment(plan.gpu.id, config, "llama-3.1-8b", load)
    curve, fleet, growth = dl.shape("24-7"), dl.Fleet(), bg.Growth()
    b = bg.budget(config, "llama-3.1-8b", load, plan, curve, fleet, growth, pay)
    inputs = wbk.BudgetInputs(name, config.name, plan.gpu.id, plan.tp, name, load, dl.Capacity.of(plan, load), curve,
                              fleet, growth, pay, "24-7")  # fmt: skip
    data = wbk.workbook_bytes([(name, inputs, b)])
    book = openpyxl.load_workbook(io.BytesIO(data))
    found = [c for ws in book.worksheets for row in ws.iter_rows() for c in row if c.value == name]
    assert len(found) >= 3 and all(c.data_type == "s" for c in found)
    assert all(c.hyperlink is None for ws in book.worksheets for row in ws.iter_rows() for c in row)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        xml = "".join(z.read(n).decode("utf-8") for n in z.namelist() if n.startswith("xl/worksheets/sheet"))
        cells = re.findall(r"<f>(.*?)</f>", xml)
        assert cells and not any("HYPERLINK" in f or "SUM(A1)" in f for f in cells)
        assert not any(n.startswith("xl/worksheets/_rels") for n in z.namelist())


def test_a_workbook_needs_a_scenario():
    with pytest.raises(ValueError, match="at least one scenario"):
        wbk.workbook_bytes([])


def test_a_peak_typed_into_the_workbook_recomputes_the_copies_hour_by_hour(tmp_path):
    config, load = presets()["llama-3.1-8b"], sv.Workload(600, 1000, 250)
    plan = se.search(config, load, gpus=["l4"]).plan
    pay = bg.default_payment(plan.gpu.id, config, "llama-3.1-8b", load)
    growth, fleet, curve = bg.Growth(3.0, 12), dl.Fleet(autoscale=True, max_copies=40), dl.shape("office-hours")
    cap = dl.Capacity.of(plan, load)
    inputs = wbk.BudgetInputs("Base", config.name, plan.gpu.id, plan.tp, "vllm", load, cap, curve, fleet, growth, pay,
                              "office-hours")  # fmt: skip
    b = bg.budget(config, "llama-3.1-8b", load, plan, curve, fleet, growth, pay, capacity=cap)
    data = wbk.workbook_bytes([("Base", inputs, b)])
    peak = _named_cell(data, "s1_peak_rpm")
    tripled = recompute(data, tmp_path, {f"'[plan.xlsx]ASSUMPTIONS'!{peak}": 3 * load.requests_per_minute})
    big = replace(load, requests_per_minute=3 * load.requests_per_minute)
    want = bg.budget(config, "llama-3.1-8b", big, plan, curve, fleet, growth, pay, capacity=cap)
    assert want.copies_by_month[0] > b.copies_by_month[0]
    for cell, value in expected(want).items():
        got = tripled("Plan 1", cell)
        assert got == value if isinstance(value, str) else got == pytest.approx(value, rel=REL), cell
