"""Text that leaves the page is made inert: CSV cells a spreadsheet would run as formulas, JSON inside <script>."""

from __future__ import annotations

import csv
import io
import json
import re

import pandas as pd
import plotly.graph_objects as go
import pytest

from ui.elements.briefing import Briefing, Chart, document
from ui.elements.chart_element import element_html
from ui.elements.inert import FORMULA_START, csv_cell, frame_csv, script_json
from ui.elements.static_table import csv_bytes, table_html

FORMULAS = ("=1+2", "+cmd", "-2+3+cmd", "@SUM(A1)", "\tx", "\rx")
BREAKOUT = "</script><script>alert(1)</script>\u2028\u2029&"


@pytest.mark.parametrize("text", FORMULAS)
def test_case8_every_csv_writer_makes_a_formula_inert(text):
    assert csv_cell(text) == "'" + text and csv_cell(-3) == -3 and csv_cell("a-b") == "a-b"
    frame = pd.DataFrame({text: [text, "ok"], "n": [-1.5, 2.0]}, index=[text, "b"])
    written = [csv_bytes([text, "n"], [[text, -1.5]]), frame_csv(frame, index=True), frame_csv(frame, index=False)]
    for data in written:
        cells = [cell for row in csv.reader(io.StringIO(data.decode(), newline="")) for cell in row]
        assert "'" + text in data.decode() and "-1.5" in cells  # numbers stay numbers
        assert not [cell for cell in cells if cell.startswith(FORMULA_START) and cell != "-1.5"], cells


def test_case8_static_table_download_is_inert_inside_its_button():
    body = table_html(["model"], [["-2+3+cmd"]], label="t", download=("x", "x"))
    assert "&#x27;-2+3+cmd" in body or "'-2+3+cmd" in body.replace("&#x27;", "'")


def test_case8_json_in_script_elements_cannot_end_the_element():
    assert json.loads(script_json(BREAKOUT)) == BREAKOUT
    assert not re.search(r"[<>&\u2028\u2029]", script_json(BREAKOUT))
    fig = go.Figure(go.Scatter(x=[1], y=[1], name=BREAKOUT), layout={"title": {"text": BREAKOUT}})
    chart = element_html(fig, key="k", alt="a", config={})
    assert "alert(1)" in chart and chart.count("</script>") == 2 and "\u2028" not in chart
    briefing = document(
        Briefing(title="t", lead="l", link="https://x/", app_url="https://x/", charts=(Chart(fig, "a"),))
    )
    scripts = briefing.split("<script>")[-1]
    assert "alert(1)" in scripts and scripts.count("</script>") == 1 and "\u2028" not in scripts
