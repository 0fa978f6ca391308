"""core/explain/conv.py against Appendix B's printed numbers (exactly) and the invariants of each step (hypothesis)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from core.explain import conv
from core.explain.primer import conv_example

PRINTED_CONV_VERTICAL = [[-3, 6, -3], [-3, 6, -3], [-3, 6, -3]]
PRINTED_RELU_VERTICAL = [[0, 6, 0], [0, 6, 0], [0, 6, 0]]
PRINTED_POOL_VERTICAL = [[6, 6], [6, 6]]
PRINTED_FEATURES = [6, 6, 6, 6, 0, 0, 0, 0]
PRINTED_LOGITS = [24, 0]

small = st.floats(min_value=-10, max_value=10, allow_nan=False, width=32)


def grids(min_side: int = 1, max_side: int = 8):
    return st.tuples(st.integers(min_side, max_side), st.integers(min_side, max_side)).flatmap(
        lambda shape: arrays(np.float64, shape, elements=small)
    )


def reference_conv(image: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Textbook loops, independent of the engine's sliding-window einsum."""
    kh, kw = kernel.shape
    out = np.zeros((image.shape[0] - kh + 1, image.shape[1] - kw + 1))
    for r in range(out.shape[0]):
        for c in range(out.shape[1]):
            total = 0.0
            for i in range(kh):
                for j in range(kw):
                    total += image[r + i, c + j] * kernel[i, j]
            out[r, c] = total
    return out


@pytest.fixture
def appendix_b() -> conv.ConvTrace:
    return conv.classify(conv_example().image, conv.primer_filters())


# --- Appendix B, exactly ---------------------------------------------------------------------------------------------


def test_appendix_b_vertical_filter_exactly(appendix_b):
    vertical = appendix_b.filter("vertical")
    assert vertical.conv.tolist() == PRINTED_CONV_VERTICAL
    assert vertical.relu.tolist() == PRINTED_RELU_VERTICAL
    assert vertical.pool.tolist() == PRINTED_POOL_VERTICAL


def test_appendix_b_horizontal_filter_is_all_zeros(appendix_b):
    horizontal = appendix_b.filter("horizontal")
    for step in (horizontal.conv, horizontal.relu, horizontal.pool):
        assert not step.any()
    assert horizontal.pool.shape == (2, 2)


def test_appendix_b_features_logits_softmax(appendix_b):
    assert appendix_b.classes == ("vertical", "horizontal")
    assert appendix_b.features.tolist() == PRINTED_FEATURES
    assert appendix_b.logits.tolist() == PRINTED_LOGITS
    assert np.round(appendix_b.probs, 2).tolist() == [1.00, 0.00]
    assert appendix_b.probs[0] > appendix_b.probs[1]
    assert appendix_b.winner == 0


def test_appendix_b_two_printed_stops():
    image, kernel = conv_example().image, conv.primer_filters()["vertical"]
    top_left = conv.window(image, kernel, (0, 0))
    assert top_left.patch.tolist() == [[0, 0, 1]] * 3
    assert top_left.products.tolist() == [[0, 0, -1]] * 3
    assert top_left.total == -3
    top_centre = conv.window(image, kernel, (0, 1))
    assert top_centre.patch.tolist() == [[0, 1, 0]] * 3
    assert top_centre.total == 6
    assert list(top_centre.rows) == [0, 1, 2] and list(top_centre.columns) == [1, 2, 3]


def test_nine_window_positions_in_reading_order():
    positions = conv.window_positions((5, 5), (3, 3))
    assert len(positions) == 9
    assert positions[0] == (0, 0) and positions[1] == (0, 1) and positions[3] == (1, 0) and positions[-1] == (2, 2)


def test_feature_labels_and_classes_follow_the_filters(appendix_b):
    assert appendix_b.feature_labels[:2] == ("vertical 1", "vertical 2")
    assert appendix_b.feature_labels[4] == "horizontal 1"
    assert appendix_b.feature_classes == ("vertical",) * 4 + ("horizontal",) * 4


def test_third_filter_gives_twelve_features_and_three_classes():
    filters = conv.primer_filters() | {conv.custom_filter_name(): conv.custom_filter_default()}
    trace = conv.classify(conv.presets()["diagonal"], filters)
    assert trace.features.shape == (12,)
    assert trace.logits.shape == (3,)
    assert trace.classes[-1] == conv.custom_filter_name()
    assert trace.winner == 2  # the default custom filter is the diagonal detector


def test_blank_image_is_no_evidence_either_way():
    trace = conv.classify(conv.presets()["blank"], conv.primer_filters())
    assert trace.evidence == 0 and not trace.features.any()
    assert trace.logits.tolist() == [0, 0]
    assert trace.probs.tolist() == [0.5, 0.5]
    assert trace.winner is None


@pytest.mark.parametrize("column", [1, 2, 3])
def test_pooling_keeps_the_answer_when_the_stroke_moves(column):
    image = np.zeros((5, 5))
    image[:, column] = 1
    trace = conv.classify(image, conv.primer_filters())
    assert trace.winner == 0 and trace.probs[0] > 0.99


def test_trace_arrays_are_read_only(appendix_b):
    with pytest.raises(ValueError):
        appendix_b.features[0] = 1
    with pytest.raises(ValueError):
        appendix_b.filters[0].conv[0, 0] = 1


# --- properties of each step -----------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(image=grids(3, 8), kernel=grids(1, 3))
def test_conv_matches_textbook_loops_and_has_valid_shape(image, kernel):
    out = conv.conv2d(image, kernel)
    assert out.shape == (image.shape[0] - kernel.shape[0] + 1, image.shape[1] - kernel.shape[1] + 1)
    np.testing.assert_allclose(out, reference_conv(image, kernel), rtol=1e-12, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(image=grids(3, 7), kernel=grids(1, 3), data=st.data())
def test_window_sum_is_the_feature_map_cell(image, kernel, data):
    positions = conv.window_positions(image.shape, kernel.shape)
    position = data.draw(st.sampled_from(positions))
    step = conv.window(image, kernel, position)
    assert step.products.shape == kernel.shape
    assert step.total == pytest.approx(conv.conv2d(image, kernel)[position], abs=1e-9)


def test_kernel_larger_than_image_is_refused():
    with pytest.raises(ValueError):
        conv.conv2d(np.zeros((2, 5)), np.zeros((3, 3)))
    with pytest.raises(ValueError):
        conv.window(np.zeros((5, 5)), np.zeros((3, 3)), (3, 0))


@given(x=grids())
def test_relu_is_non_negative_idempotent_and_keeps_positives(x):
    y = conv.relu(x)
    assert (y >= 0).all()
    assert np.array_equal(conv.relu(y), y)
    assert np.array_equal(y[x > 0], x[x > 0])


@given(x=grids(2, 8))
def test_max_pool_covers_every_cell_and_picks_one_of_them(x):
    pooled = conv.max_pool(x)
    assert pooled.shape == (x.shape[0] - 1, x.shape[1] - 1)
    for r in range(pooled.shape[0]):
        for c in range(pooled.shape[1]):
            patch = x[r : r + 2, c : c + 2]
            assert (pooled[r, c] >= patch).all()
            assert pooled[r, c] in patch


def test_max_pool_refuses_a_map_smaller_than_its_window():
    with pytest.raises(ValueError):
        conv.max_pool(np.zeros((1, 4)))


@given(n_filters=st.integers(1, 4), per_filter=st.integers(1, 5), data=st.data())
def test_readout_class_sums_its_own_filter_features(n_filters, per_filter, data):
    features = data.draw(arrays(np.float64, n_filters * per_filter, elements=small))
    logits = features @ conv.readout_matrix(n_filters, per_filter)
    for c in range(n_filters):
        assert logits[c] == pytest.approx(features[c * per_filter : (c + 1) * per_filter].sum())


@settings(max_examples=40, deadline=None)
@given(image=arrays(np.float64, (5, 5), elements=st.sampled_from([0.0, 1.0])))
def test_any_binary_image_gives_a_probability_distribution(image):
    trace = conv.classify(image, conv.primer_filters())
    assert trace.probs.sum() == pytest.approx(1.0)
    assert (trace.features >= 0).all()


def test_receptive_field_is_the_filter_on_its_window_and_zero_elsewhere():
    kernel = conv.primer_filters()["vertical"]
    field = conv.receptive_field((5, 5), kernel, (1, 2))
    assert np.array_equal(field[1:4, 2:5], kernel)
    outside = np.ones((5, 5), dtype=bool)
    outside[1:4, 2:5] = False
    assert not field[outside].any()


def test_head_field_is_the_primers_last_attention_row():
    """§5 prints the last row of the pattern for 'the cat sat' as 0.296, 0.286, 0.418."""
    prompt, row = conv.head_field()
    assert prompt == ("the", "cat", "sat")
    assert np.round(row, 3).tolist() == [0.296, 0.286, 0.418]
    assert row.sum() == pytest.approx(1.0) and not row.flags.writeable


def test_filter_stages_are_the_maps_in_network_order(appendix_b):
    step = appendix_b.filter("vertical")
    assert [name for name, _ in step.stages] == ["convolution", "ReLU", "max-pool"]
    assert all(grid is attr for (_, grid), attr in zip(step.stages, (step.conv, step.relu, step.pool), strict=True))


def test_grid_size_reads_as_the_primer_writes_it():
    assert conv.grid_size(np.zeros((5, 5))) == "5 × 5" and conv.grid_size(np.zeros((2, 3))) == "2 × 3"


# --- presets, URL encoding, the reader's filter ----------------------------------------------------------------------


def test_presets_are_five_by_five_binary_with_the_appendix_b_image_first():
    presets = conv.presets()
    assert set(presets) == {"vertical stroke", "horizontal stroke", "T", "L", "plus", "diagonal", "blank"}
    assert conv.default_preset() == next(iter(presets)) == "vertical stroke"
    assert np.array_equal(presets["vertical stroke"], conv_example().image)
    for image in presets.values():
        assert image.shape == (5, 5) and set(np.unique(image)) <= {0.0, 1.0}
    assert set(conv.preset_notes()) == set(presets)


@given(image=arrays(np.float64, (5, 5), elements=st.sampled_from([0.0, 1.0])))
def test_image_encoding_round_trips(image):
    text = conv.encode_image(image)
    assert len(text) == 29
    decoded, notes = conv.decode_image(text)
    assert np.array_equal(decoded, image) and notes == []


def test_decode_clamps_digits_above_one_with_a_note():
    image, notes = conv.decode_image("00900-00100-00100-00100-00100")
    assert np.array_equal(image, conv_example().image)
    assert len(notes) == 1 and "set to 1" in notes[0]


@pytest.mark.parametrize("text", ["", "0010-00100-00100-00100-00100", "00100-00100", "0a100-00100-00100-00100-00100"])
def test_decode_refuses_unreadable_images(text):
    with pytest.raises(ValueError, match="image"):
        conv.decode_image(text)


def test_with_pixel_copies():
    image = conv.presets()["blank"]
    inked = conv.with_pixel(image, (1, 3), True)
    assert inked[1, 3] == 1 and inked.sum() == 1 and not image.any()


def test_parse_kernel_reads_spaces_and_commas():
    kernel = conv.parse_kernel(["-1 2 -1", "-1, 2, -1", " -1,2 ,-1 "])
    assert np.array_equal(kernel, conv.primer_filters()["vertical"])
    rows = [conv.format_kernel_row(row) for row in conv.custom_filter_default()]
    assert np.array_equal(conv.parse_kernel(rows), conv.custom_filter_default())


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["1 2", "1 2 3", "1 2 3"], "needs 3 numbers"),
        (["1 2 3", "", "1 2 3"], "needs 3 numbers"),
        (["1 x 3", "1 2 3", "1 2 3"], "not a number"),
        (["abc", "1 2 3", "1 2 3"], "'abc' is not a number"),
        (["1 2 3", "1 nan 3", "1 2 3"], "outside"),
        (["1 2 3", "1 2 inf", "1 2 3"], "outside"),
        (["1e300 2 3", "1 2 3", "1 2 3"], "outside"),
        (["1 2 3", "1 2 3", "1 2 -10.5"], "outside"),
    ],
)
def test_parse_kernel_refuses_bad_rows_with_a_plain_message(rows, message):
    with pytest.raises(ValueError, match=message):
        conv.parse_kernel(rows)


def test_custom_filter_default_is_within_its_limit():
    assert np.abs(conv.custom_filter_default()).max() <= conv.kernel_limit()


def test_comparison_table_is_the_primers():
    columns, rows = conv.comparison_table()
    assert columns[1:] == ["Convolutional filter (CNN)", "Attention head (Transformer)"]
    assert [row[0] for row in rows][:2] == ["What it stores", "Receptive field"]
    assert len(rows) == 6 and all(len(row) == 3 for row in rows)
