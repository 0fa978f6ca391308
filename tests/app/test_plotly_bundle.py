"""The plotly.js the chart element loads (static/plotly-primer.min.js) is the plotly package's plotly.js version with
only the trace types the recipe in js/plotly-bundle lists, and every chart the pages draw uses one of those types."""

from __future__ import annotations

import json
import re
import tomllib

from plotly.offline import get_plotlyjs_version

from tests.app.helpers import chart_specs, run_page
from ui.ablation_lab import state as lab
from ui.cnn_vs_head import state as cnn
from ui.elements import chart_element
from ui.elements.navigation import ROOT
from ui.how_it_learned.state import SECTIONS as LEARNED_SECTIONS
from ui.kv_cost import settings as kv_settings
from ui.qkv_walkthrough import state as qkv
from ui.two_layer_trace import views as trace

RECIPE = ROOT / "js" / "plotly-bundle"
SERVED = chart_element.PLOTLY_JS.read_text(encoding="utf-8")
# How plotly.js registers a trace type in its minified source.
REGISTERED = set(re.findall(r'moduleType:"trace",name:"(\w+)"', SERVED))


def test_the_bundle_is_the_plotly_packages_version_built_with_the_recipes_traces():
    pinned = json.loads((RECIPE / "package.json").read_text(encoding="utf-8"))["devDependencies"]["plotly.js"]
    listed = re.search(r"const TRACES = \[(.*?)\];", (RECIPE / "build.js").read_text(encoding="utf-8")).group(1)
    header = re.match(r"/\*\*\n\* plotly\.js v([\d.]+), primer bundle \(traces: ([\w, ]+)\)", SERVED)
    assert header.group(1) == pinned == get_plotlyjs_version()
    assert set(header.group(2).split(", ")) == set(re.findall(r"'(\w+)'", listed)) == REGISTERED


def test_the_bundle_is_served_from_static_where_the_element_loads_it():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["enableStaticServing"] is True
    assert chart_element.PLOTLY_JS.parent == ROOT / "static"
    assert f"app/static/{chart_element.PLOTLY_JS.name}" in chart_element.JS


# Every page at each of its tabs and steps (only the open one's charts are drawn); app.py opens the overview.
OPEN = [
    ("app.py", {}),
    *(("pages/qkv_walkthrough.py", {"qkv_section": section}) for section in qkv.SECTIONS[1:]),
    *(("pages/qkv_walkthrough.py", {"qkv_step": step}) for step in qkv.STEPS),
    *(("pages/cnn_vs_head.py", {"view": view}) for view in cnn.STEPS),
    *(("pages/two_layer_trace.py", {"trace_view": view}) for view in trace.VIEWS),
    *(("pages/how_it_learned.py", {"learned_section": section}) for section in LEARNED_SECTIONS),
    *(("pages/ablation_lab.py", {"view": view}) for view in lab.TABS),
    *(("pages/kv_cost.py", {"view": view}) for view in kv_settings.VIEWS),
]


def test_every_chart_in_every_view_uses_a_trace_type_in_the_bundle_and_the_bundle_holds_no_unused_one():
    drawn = set()
    for script, query in OPEN:
        used = {
            trace.get("type", "scatter")
            for spec in chart_specs(run_page(str(ROOT / script), **query))
            for trace in spec["data"]
        }
        assert used <= REGISTERED, (
            f"{script} {query} draws {sorted(used - REGISTERED)}: add it to js/plotly-bundle/build.js"
        )
        drawn |= used
    assert drawn == REGISTERED
