"""The 'CNN vs head' page in Streamlit's AppTest: default = Appendix B, every control changes what it should.

Figures are read through the plotly chart's proto spec (JSON), so the tests check the numbers drawn, not just that a
chart exists.
"""

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.explain import conv
from core.explain.primer import conv_example
from tests.app import helpers
from tests.app.helpers import numbers, shown
from ui.cnn_vs_head.views import maps_frame

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "cnn_vs_head.py")
WINDOW, MAPS, READOUT, VERSUS = "① Sliding window", "② Feature maps", "③ Read-out", "④ Filter vs head"


def open_page(view: str = WINDOW, **query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.query_params["view"] = view
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def chart_specs(at: AppTest) -> list[dict]:
    """The page's data charts (the §1 flowchart, drawn from shapes and labels alone, is tested on its own)."""
    return [spec for spec in helpers.chart_specs(at) if spec["data"]]


def panels(spec: dict) -> list[np.ndarray]:
    return [numbers(trace["z"]) for trace in spec["data"]]


def bar_values(spec: dict) -> list[float]:
    return numbers(spec["data"][0]["y"]).tolist()


def texts(at: AppTest) -> str:
    return "\n".join(element.value for element in at.markdown)


def edit_pixels(at: AppTest) -> AppTest:
    """Switch the pixel editor on: the 25 tick boxes are drawn only while it is on."""
    at.toggle(key="edit_pixels").set_value(True).run()
    return at


def window_figure(at: AppTest) -> dict:
    (spec,) = chart_specs(at)
    return spec


# --- default state: Appendix B ---------------------------------------------------------------------------------------


def test_default_renders_appendix_b_window_with_no_message():
    at = open_page()
    assert at.title[0].value == "CNN filter vs attention head"
    assert not at.error and not at.warning
    image, kernel, products, feature_map = panels(window_figure(at))
    assert np.array_equal(image, conv_example().image)
    assert np.array_equal(kernel, conv_example().filters["vertical"])
    assert products.tolist() == [[0, 0, -1]] * 3
    assert feature_map.tolist() == [[-3, 6, -3]] * 3
    assert "add up to -3" in window_figure(at)["layout"]["title"]["text"]
    assert "vertical: **1.00**" in texts(at) and "horizontal: **0.00**" in texts(at)


def test_feature_maps_tab_shows_appendix_b_exactly():
    at = open_page(MAPS)
    vertical, horizontal = chart_specs(at)
    conv_map, relu_map, pool_map = panels(vertical)
    assert conv_map.tolist() == [[-3, 6, -3]] * 3
    assert relu_map.tolist() == [[0, 6, 0]] * 3
    assert pool_map.tolist() == [[6, 6], [6, 6]]
    assert all(not grid.any() for grid in panels(horizontal))
    assert any(len(latex.value) for latex in at.latex)


def test_feature_maps_download_one_csv_per_filter_with_every_map():
    at = open_page(MAPS, custom="true")
    labels = [button.label for button in at.get("download_button")]
    assert len(labels) == 3 and all("maps (CSV)" in label for label in labels)
    frame = maps_frame(conv.classify(conv_example().image, conv.primer_filters()).filter("vertical"))
    assert frame["step"].tolist() == ["convolution"] * 3 + ["ReLU"] * 3 + ["max-pool"] * 2
    assert frame.iloc[:3, 2:].to_numpy().tolist() == [[-3, 6, -3]] * 3
    assert frame.iloc[3:6, 2:].to_numpy().tolist() == [[0, 6, 0]] * 3
    assert frame.iloc[6:, 2:4].to_numpy().tolist() == [[6, 6], [6, 6]] and frame.iloc[6:, 4].isna().all()


def test_readout_tab_shows_features_logits_softmax():
    at = open_page(READOUT)
    features, softmax = chart_specs(at)
    assert bar_values(features) == [6, 6, 6, 6, 0, 0, 0, 0]
    assert np.round(bar_values(softmax), 2).tolist() == [1.00, 0.00]
    assert [label.split("<br>")[1] for label in softmax["data"][0]["x"]] == ["logit 24", "logit 0"]
    assert "the network says “vertical”" in texts(at)


def test_readout_tab_draws_the_primer_s_section_1_ocr_flowchart():
    at = open_page(READOUT)
    flow = helpers.chart_specs(at)[0]
    texts_drawn = [a["text"] for a in flow["layout"]["annotations"] if a.get("text")]
    assert texts_drawn[:4] == [
        "pixels<br>(grid of ink/blank)",
        "feature maps<br>one grid per filter:<br>edges, strokes, ...",
        "softmax over<br>26 letters",
        "a .02<br>...<br>e .91 ◄ answer<br>...",
    ]
    assert "filters slide<br>shared 3×3 weights<br>local receptive field,<br>reused at every position" in texts_drawn
    assert "flatten +<br>linear layer" in texts_drawn
    assert len([a for a in flow["layout"]["annotations"] if a.get("showarrow")]) == 3
    assert "Flowchart, top to bottom: pixels (grid of ink/blank); then feature maps" in helpers.charts(at)[0]["alt"]
    assert "Section 1" in "\n".join(c.value for c in at.caption)
    assert "2 filters and 2 classes (vertical, horizontal) instead of 26 letters" in texts(at)


def test_filter_vs_head_tab_shows_the_heads_row_and_the_primers_table():
    at = open_page(VERSUS)
    field, head = chart_specs(at)
    assert np.round(panels(head)[0][0], 3).tolist() == [0.296, 0.286, 0.418]
    assert head["data"][0]["x"] == ["the", "cat", "sat"]
    weights = panels(field)[1]
    assert np.array_equal(weights[0:3, 0:3], conv_example().filters["vertical"]) and not weights[3:, :].any()
    table = at.table[0].value
    assert list(table.columns) == ["Convolutional filter (CNN)", "Attention head (Transformer)"]
    assert "Receptive field" in table.index and len(table) == 6


# --- controls change what they should --------------------------------------------------------------------------------


def test_preset_changes_the_image_and_the_answer():
    at = open_page(READOUT)
    at.selectbox(key="preset").set_value("horizontal stroke").run()
    features, softmax = chart_specs(at)
    assert bar_values(features) == [0, 0, 0, 0, 6, 6, 6, 6]
    assert np.round(bar_values(softmax), 2).tolist() == [0.00, 1.00]
    at.query_params["view"] = WINDOW
    at.session_state["view"] = WINDOW
    at.run()
    assert np.array_equal(panels(window_figure(at))[0], conv.presets()["horizontal stroke"])


def test_blank_image_reads_no_evidence_either_way():
    at = open_page(READOUT, preset="blank")
    features, softmax = chart_specs(at)
    assert bar_values(features) == [0] * 8
    assert bar_values(softmax) == [0.5, 0.5]
    assert "No evidence either way" in texts(at)
    assert not at.error and not at.exception


def test_window_position_moves_the_box_and_the_sum():
    at = open_page()
    at.select_slider(key="win").set_value(2).run()
    spec = window_figure(at)
    image_box, cell_box = spec["layout"]["shapes"]
    assert (image_box["x0"], image_box["y0"]) == (0.5, -0.5)  # window's top-left pixel is (row 0, column 1)
    assert (cell_box["x0"], cell_box["y0"]) == (0.5, -0.5)
    assert panels(spec)[2].tolist() == [[0, 2, 0]] * 3
    assert "add up to 6" in spec["layout"]["title"]["text"]
    at.select_slider(key="win").set_value(9).run()
    image_box, _ = window_figure(at)["layout"]["shapes"]
    assert (image_box["x0"], image_box["y0"]) == (1.5, 1.5)


def test_arrows_step_the_window_and_stop_at_the_ends():
    at = open_page()
    assert at.button(key="win-1").disabled
    at.button(key="win+1").click().run()
    assert at.select_slider(key="win").value == 2
    assert (window_figure(at)["layout"]["shapes"][0]["x0"], at.query_params["win"]) == (0.5, "2")
    at.button(key="win-1").click().run()
    assert at.select_slider(key="win").value == 1
    at.select_slider(key="win").set_value(9).run()
    assert at.button(key="win+1").disabled
    at.button(key="win-1").click().run()
    assert at.select_slider(key="win").value == 8


def test_pixel_boxes_are_drawn_only_while_the_editor_is_on():
    at = open_page()
    assert not at.checkbox and at.get("image")  # the image itself is always shown
    edit_pixels(at)
    assert len(at.checkbox) == 25 and [box.value for box in at.checkbox].count(True) == 5
    at.toggle(key="edit_pixels").set_value(False).run()
    assert not at.checkbox


def test_sliding_filter_choice_changes_the_filter_and_map():
    at = open_page()
    at.radio(key="slide").set_value("horizontal").run()
    _, kernel, _, feature_map = panels(window_figure(at))
    assert np.array_equal(kernel, conv_example().filters["horizontal"])
    assert not feature_map.any()


def test_pixel_edit_changes_the_image_and_is_kept_in_the_url():
    at = edit_pixels(open_page())
    at.checkbox(key="px00").check().run()
    image = panels(window_figure(at))[0]
    assert image[0, 0] == 1 and image.sum() == 6
    assert at.query_params["img"] == "10100-00100-00100-00100-00100"
    assert "Edited from the preset" in "\n".join(caption.value for caption in at.caption)
    at.checkbox(key="px00").uncheck().run()
    assert "img" not in at.query_params  # back to the preset exactly: a clean URL


def test_choosing_a_preset_discards_pixel_edits():
    at = edit_pixels(open_page())
    at.checkbox(key="px44").check().run()
    at.selectbox(key="preset").set_value("plus").run()
    assert np.array_equal(panels(window_figure(at))[0], conv.presets()["plus"])
    assert "img" not in at.query_params


def test_custom_filter_adds_a_third_class_and_follows_its_rows():
    at = open_page(READOUT, preset="diagonal")
    at.toggle(key="custom").set_value(True).run()
    features, softmax = chart_specs(at)
    assert len(bar_values(features)) == 12 and len(bar_values(softmax)) == 3
    assert bar_values(softmax)[2] > 0.99  # the default custom filter is the diagonal detector
    for key, row in zip(["k1", "k2", "k3"], ["0 0 0", "0 0 0", "0 0 0"], strict=True):
        at.text_input(key=key).set_value(row)
    at.run()
    features, softmax = chart_specs(at)
    assert bar_values(features)[8:] == [0, 0, 0, 0]
    assert bar_values(softmax)[2] < 0.5


def test_my_filter_rows_show_only_while_it_is_on_and_keep_their_text():
    at = open_page(READOUT, preset="diagonal")
    assert not at.text_input and len(bar_values(chart_specs(at)[1])) == 2
    at.toggle(key="custom").set_value(True).run()
    at.text_input(key="k1").set_value("0 0 0").run()
    at.toggle(key="custom").set_value(False).run()
    assert not at.text_input and len(bar_values(chart_specs(at)[1])) == 2
    at.toggle(key="custom").set_value(True).run()
    assert at.text_input(key="k1").value == "0 0 0"
    linked = open_page(READOUT, preset="diagonal", custom="true", k1="0 0 0")
    assert bar_values(chart_specs(at)[0]) == bar_values(chart_specs(linked)[0])  # the kept row shapes the third class


@pytest.mark.parametrize("bad", ["abc", "1 2", "1e300 0 0", "nan 0 0", ""])
def test_bad_custom_filter_row_gives_a_message_and_keeps_the_last_valid_filter(bad):
    at = open_page(READOUT, preset="diagonal", custom="true")
    before = bar_values(chart_specs(at)[0])
    at.text_input(key="k1").set_value(bad).run()
    assert not at.exception
    assert len(at.error) == 1 and "last valid" in at.error[0].value
    assert bar_values(chart_specs(at)[0]) == before


# --- state from the URL ----------------------------------------------------------------------------------------------


def test_shared_url_restores_every_input():
    at = open_page(
        WINDOW,
        preset="T",
        img="11111-00100-00100-00100-00100",
        custom="true",
        k1="1 1 1",
        slide="custom",
        win="5",
    )
    image, kernel, products, _ = panels(window_figure(at))
    assert image.tolist()[0] == [1, 1, 1, 1, 1]
    assert kernel.tolist() == [[1, 1, 1], [-1, 2, -1], [-1, -1, 2]]
    assert window_figure(at)["layout"]["shapes"][0]["x0"] == 0.5  # stop 5 = top-left pixel (1, 1)
    assert products.shape == (3, 3)


def test_url_image_with_values_above_one_is_clamped_and_named_in_the_one_notice():
    at = open_page(img="00300-00100-00100-00100-00100", win="99")
    assert len(at.warning) == 1  # the clamped digits and the refused window stop: one notice
    notice = shown(at.warning[0].value)
    assert "**img** = “00300-00100-00100-00100-00100”: 1 pixel value(s) above 1 were set to 1" in notice
    assert "used 00100-00100-00100-00100-00100." in notice and "**win** = “99”" in notice
    assert np.array_equal(panels(window_figure(at))[0], conv_example().image)


def test_unreadable_url_image_falls_back_with_a_message():
    at = open_page(img="garbage", preset="L")
    assert any("**img** = “garbage”" in shown(warning.value) for warning in at.warning)
    assert np.array_equal(panels(window_figure(at))[0], conv.presets()["L"])


def test_state_survives_leaving_and_coming_back():
    """Another page's URL carries none of this page's parameters; the session keeps the edited image."""
    at = edit_pixels(open_page())
    at.checkbox(key="px00").check().run()
    at.query_params.clear()
    at.run()
    assert panels(window_figure(at))[0][0, 0] == 1


def test_switching_my_filter_off_while_it_slides_falls_back_to_a_primer_filter():
    at = open_page(custom="true", slide="custom")
    assert at.radio(key="slide").value == "custom"
    at.toggle(key="custom").set_value(False).run()
    assert not at.exception
    assert at.radio(key="slide").value == "vertical"
    assert np.array_equal(panels(window_figure(at))[1], conv_example().filters["vertical"])
