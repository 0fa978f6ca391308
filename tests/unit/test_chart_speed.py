"""What keeps reruns cheap: a figure is turned into plotly's JSON once, and Streamlit's forced collection after every
run is off (it held the interpreter for tens of milliseconds while a click's last messages waited)."""

from __future__ import annotations

import tomllib

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools

from ui import widgets
from ui.navigation import ROOT


def sent(figure: object) -> str:
    """The spec `st.plotly_chart` sends for a figure, by the same two calls it makes."""
    return pio.to_json(plotly.tools.return_figure_from_figure_or_data(figure, validate_figure=True), validate=False)


def heatmap(seed: int) -> go.Figure:
    z = np.random.default_rng(seed).random((3, 4))
    return go.Figure(go.Heatmap(z=z, text=np.round(z, 2), texttemplate="%{text}"), layout={"title": {"text": "t"}})


def test_the_serialised_form_sends_exactly_what_the_figure_sends():
    fig = heatmap(1)
    assert sent(widgets.serialised(fig)) == sent(fig)
    assert sent(widgets.serialised(fig)) == sent(fig)  # again, from the kept form


def test_a_figure_is_serialised_once_and_each_figure_keeps_its_own_form():
    first, second = heatmap(2), heatmap(3)
    assert widgets.serialised(first) is widgets.serialised(first)
    assert widgets.serialised(second) is not widgets.serialised(first)
    assert sent(widgets.serialised(second)) == sent(second) != sent(first)


def test_the_kept_forms_are_bounded():
    figures = [heatmap(seed) for seed in range(widgets.SERIALISED_KEPT + 20)]
    for fig in figures:
        widgets.serialised(fig)
    assert len(widgets._serialised) <= widgets.SERIALISED_KEPT
    assert sent(widgets.serialised(figures[0])) == sent(figures[0])  # an evicted figure is serialised afresh


def test_no_forced_garbage_collection_after_each_run():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False
