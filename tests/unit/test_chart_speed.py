"""What keeps reruns cheap: a figure is turned into plotly's JSON once, charts are updated in place by one element
that keeps Streamlit's look, and Streamlit's forced collection after every run is off (it held the interpreter for
tens of milliseconds while a click's last messages waited)."""

from __future__ import annotations

import json
import tomllib

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from ui.elements import chart_element
from ui.elements.navigation import ROOT

REFERENCE = json.loads((ROOT / "tests" / "data" / "streamlit_heatmap_template.json").read_text(encoding="utf-8"))


def heatmap(seed: int, **layout: object) -> go.Figure:
    z = np.random.default_rng(seed).random((3, 4))
    return go.Figure(go.Heatmap(z=z, text=np.round(z, 2), texttemplate="%{text}"), layout={"title": "t", **layout})


def test_a_figure_is_themed_once_and_each_figure_keeps_its_own_form():
    first, second = heatmap(1), heatmap(2)
    assert chart_element.themed_spec(first) is chart_element.themed_spec(first)
    assert chart_element.themed_spec(second) != chart_element.themed_spec(first)


def test_the_kept_forms_are_bounded_and_an_evicted_figure_is_themed_afresh():
    figures = [heatmap(seed) for seed in range(chart_element.KEPT + 20)]
    first = chart_element.themed_spec(figures[0])
    for fig in figures:
        chart_element.themed_spec(fig)
    assert len(chart_element._themed) <= chart_element.KEPT
    assert chart_element.themed_spec(figures[0]) == first


def test_the_data_and_layout_sent_are_the_figures_own():
    fig = heatmap(3, height=321)
    sent = json.loads(chart_element.themed_spec(fig))
    plain = json.loads(pio.to_json(fig, validate=False))
    assert sent["data"] == plain["data"]
    assert {k: v for k, v in sent["layout"].items() if k != "template"} == {
        k: v for k, v in plain["layout"].items() if k != "template"
    }


def test_a_default_template_figure_gets_the_template_streamlits_own_element_drew():
    sent = json.loads(chart_element.themed_spec(heatmap(4)))
    assert sent["layout"]["template"] == REFERENCE["template"]
    assert "#000001" not in json.dumps(sent)  # no placeholder colour of Streamlit's template is left to the browser


def test_a_figure_without_template_gets_the_theme_layout_under_its_own_choices():
    fig = heatmap(5, template="none")
    fig.update_layout(template_layout_font_size=9, template_layout_xaxis_ticks="outside")
    template = json.loads(chart_element.themed_spec(fig))["layout"]["template"]["layout"]
    assert template["font"]["size"] == chart_element.THEME["layout"]["font"]["size"]  # the theme wins, as in Streamlit
    assert template["xaxis"]["ticks"] == "outside"  # what the theme does not set is kept
    assert template["paper_bgcolor"] == "#ffffff"


def test_the_theme_follows_the_apps_streamlit_theme():
    theme = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["theme"]
    layout = chart_element.THEME["layout"]
    assert layout["title"]["font"]["color"] == theme["textColor"]
    assert layout["paper_bgcolor"] == layout["plot_bgcolor"] == theme["backgroundColor"]
    assert layout["title"]["font"]["size"] == theme["baseFontSize"]


def test_no_forced_garbage_collection_after_each_run():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False
