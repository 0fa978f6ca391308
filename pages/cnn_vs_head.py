"""CNN vs head (primer §1 and Appendix B): a convolution filter's fixed 3×3 window next to an attention head's.

Widgets -> core.conv (Appendix B's network) and core.transformer (§5's head) -> ui figures -> annotations. Every input
lives in the URL: bound widgets, plus the edited image as a compact 'img' parameter ('00100-00100-…').
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core import conv
from core.transformer import forward, hand_model
from ui.figures import bars, heatmap, heatmap_panels
from ui.glossary import link, tip
from ui.navigation import PAGES
from ui.widgets import chart, download_matrix, download_table, explain, setup_page

SPEC = next(spec for spec in PAGES if spec.script == "pages/cnn_vs_head.py")
PRESETS = conv.presets()
PRIMER_FILTERS = conv.primer_filters()
CUSTOM = conv.custom_filter_name()
DEFAULT_ROWS = [conv.format_kernel_row(row) for row in conv.custom_filter_default()]
IMAGE_KEY = "img"  # query parameter of an edited image; absent while the image is exactly the chosen preset
IMAGE_STATE = "cnn_image"  # the last valid edited image (encoded), kept in the session across page switches
KERNEL_STATE = "cnn_kernel"  # the last valid custom filter
STEPS = ["① Sliding window", "② Feature maps", "③ Read-out", "④ Filter vs head"]
WHY_WINDOW = (
    "A filter is one small, fixed pattern reused at every position: the same nine weights score every window, so a "
    "stroke is recognised wherever it sits, but nothing outside the 3 × 3 window can ever influence the result."
)


# --- the image: preset, pixel edits, URL ---------------------------------------------------------------------------


def _edited_image() -> np.ndarray:
    """The image as last shown: the session's edited image, or the chosen preset."""
    stored = st.session_state.get(IMAGE_STATE)
    return conv.decode_image(stored)[0] if stored else PRESETS[st.session_state["preset"]]


def _store_image(image: np.ndarray) -> None:
    """Keep an edited image in the session and the URL; drop both when the image is exactly the preset again."""
    text = conv.encode_image(image)
    if text == conv.encode_image(PRESETS[st.session_state["preset"]]):
        st.session_state.pop(IMAGE_STATE, None)
        if IMAGE_KEY in st.query_params:
            del st.query_params[IMAGE_KEY]
    else:
        st.session_state[IMAGE_STATE] = text
        st.query_params[IMAGE_KEY] = text


def _preset_changed() -> None:
    """A newly chosen preset replaces any pixel edits."""
    st.session_state.pop(IMAGE_STATE, None)
    if IMAGE_KEY in st.query_params:
        del st.query_params[IMAGE_KEY]


def _pixel_toggled(position: tuple[int, int]) -> None:
    """One ticked or cleared box flips one pixel of the image."""
    _store_image(conv.with_pixel(_edited_image(), position, st.session_state[_pixel_key(position)]))


def shape(grid: np.ndarray) -> str:
    """'5 × 5': a grid's size as the primer writes it."""
    return " × ".join(str(n) for n in np.shape(grid))


def _pixel_key(position: tuple[int, int]) -> str:
    return f"px{position[0]}{position[1]}"


def _resolve_image(preset: str) -> np.ndarray:
    """The image to show: the link's 'img' if it reads, else the session's last valid image, else the preset."""
    text = st.query_params.get(IMAGE_KEY) or st.session_state.get(IMAGE_STATE)
    image = PRESETS[preset]
    if text:
        try:
            image, notes = conv.decode_image(text)
            for note in notes:
                st.warning(f"Image: {note}.", icon=":material/rule:")
        except ValueError as error:
            st.warning(f"The image in the link could not be read: {error}. Showing the last valid image instead.")
            image = _edited_image()
    _store_image(image)
    return image


def image_editor() -> np.ndarray:
    """Preset picker and a 5 × 5 grid of tick boxes (ticked = ink); returns the image."""
    names = list(PRESETS)
    preset = st.selectbox(
        "Image preset",
        names,
        index=names.index(conv.default_preset()),
        key="preset",
        bind="query-params",
        on_change=_preset_changed,
        help=f"A {shape(PRESETS[names[0]])} black-and-white image, as in the primer's Appendix B. Tick boxes below "
        "to edit pixels.",
    )
    image = _resolve_image(preset)
    edited = IMAGE_STATE in st.session_state
    st.caption(("Edited from the preset. " if edited else "") + conv.preset_notes()[preset])
    st.markdown("**Pixels** (ticked = ink)")
    for row in range(image.shape[0]):
        with st.container(horizontal=True, gap="small"):
            for column in range(image.shape[1]):
                position = (row, column)
                st.session_state[_pixel_key(position)] = bool(image[position])
                st.checkbox(
                    f"pixel row {row}, column {column}",
                    key=_pixel_key(position),
                    label_visibility="collapsed",
                    on_change=_pixel_toggled,
                    args=(position,),
                )
    return image


# --- the filters ---------------------------------------------------------------------------------------------------


def filter_editor() -> dict[str, np.ndarray]:
    """The primer's two filters, plus the reader's own 3 × 3 filter when switched on; returns them by class name."""
    use_custom = st.toggle(
        "Add my own filter",
        key="custom",
        bind="query-params",
        help=tip("convolution"),
    )
    st.caption(
        f"One row of three weights per line, each between −{conv.kernel_limit():g} and {conv.kernel_limit():g}. "
        "It adds a third class; the default rewards ink on the diagonal."
    )
    rows = [
        st.text_input(
            f"Row {index + 1} of my filter",
            value=DEFAULT_ROWS[index],
            key=f"k{index + 1}",
            bind="query-params",
            disabled=not use_custom,
            placeholder="e.g. -1 2 -1",
        )
        for index in range(len(DEFAULT_ROWS))
    ]
    try:
        kernel = conv.parse_kernel(rows)
        st.session_state[KERNEL_STATE] = kernel
    except ValueError as error:
        kernel = st.session_state.get(KERNEL_STATE, conv.custom_filter_default())
        shown = " / ".join(conv.format_kernel_row(row) for row in kernel)
        st.error(f"My filter: {error}. It keeps its last valid weights ({shown}) until the rows read correctly.")
    return PRIMER_FILTERS | ({CUSTOM: kernel} if use_custom else {})


# --- the four steps ------------------------------------------------------------------------------------------------


def sliding_window(trace: conv.ConvTrace, name: str, step: conv.WindowStep, number: int) -> None:
    """Step 1: the window on the image, the filter, the nine products and their sum landing in the feature map."""
    r, c = step.position
    height, width = step.patch.shape
    fig = heatmap_panels(
        [
            ("image (window in orange)", trace.image),
            (f"{name} filter", trace.filter(name).kernel),
            ("pixel × weight", step.products),
            (f"{name} feature map", trace.filter(name).conv),
        ],
        title=f"Window {number}: the nine products add up to {step.total:g}, written into cell ({r}, {c})",
        outlines=[(r, c, height, width), None, None, (r, c, 1, 1)],
        height=330,
    )
    chart(fig, key="window", alt=f"Sliding window at rows {r}–{step.rows[-1]}, columns {c}–{step.columns[-1]}")
    st.latex(
        r"\text{feature map}[r,c] \;=\; \sum_{i=0}^{2}\sum_{j=0}^{2}\text{image}[r+i,\,c+j]\times\text{filter}[i,j]"
        rf"\qquad\text{{here }}[{r},{c}] = {step.total:g}"
    )
    explain(
        f"The orange box covers image rows {step.rows[0]}–{step.rows[-1]} and columns "
        f"{step.columns[0]}–{step.columns[-1]}. Each pixel under it is multiplied by the {name} filter's weight in "
        f"the same place; the nine products add up to {step.total:g}, the number in cell ({r}, {c}) of the feature "
        "map (outlined). Move the window to fill the other cells.",
        WHY_WINDOW,
    )


def feature_maps(trace: conv.ConvTrace) -> None:
    """Step 2: each filter's feature map, after ReLU, after 2 × 2 max-pooling."""
    st.latex(
        r"\operatorname{ReLU}(x)=\max(0,x)\qquad"
        r"\text{pool}[r,c]=\max_{i,j\in\{0,1\}}\operatorname{ReLU}(\text{map})[r+i,\,c+j]"
    )
    for step in trace.filters:
        low, high = step.score_range
        fig = heatmap_panels(
            [("convolution", step.conv), ("ReLU: negatives → 0", step.relu), ("2 × 2 max-pool", step.pool)],
            title=f"{step.name.capitalize()} filter: feature map → ReLU → pooled map",
            height=290,
        )
        chart(fig, key=f"maps-{step.name}", alt=f"{step.name} filter's feature map, after ReLU and after pooling")
        if step.active_cells:
            what = (
                f"The {step.name} filter's scores range from {low:g} to {high:g}. ReLU keeps "
                f"the {step.active_cells} positive cell(s) of 9, pooling keeps the strongest value of each 2 × 2 "
                f"patch: {conv.format_kernel_row(step.pool.ravel())}, a total vote of {step.evidence:g}."
            )
        elif low == high == 0:
            what = (
                f"Every window scores 0: there is no ink under the {step.name} filter anywhere. ReLU and pooling "
                "keep the zeros, so this filter casts no vote."
            )
        else:
            what = (
                f"No window matches the {step.name} filter (scores from {low:g} to {high:g}): "
                "ReLU turns every cell to 0 and the pooled map is all zeros, so this filter casts no vote."
            )
        explain(
            what,
            "ReLU keeps only positive evidence that the pattern is there; pooling adds a little tolerance to where "
            "exactly it sits, so a stroke shifted by one pixel still gives the same answer.",
        )


def readout(trace: conv.ConvTrace) -> None:
    """Step 3: the flattened features, the read-out's logits and the softmax probabilities."""
    n = trace.features.size
    fig = bars(
        trace.feature_labels,
        trace.features,
        title=f"The {n} flattened features (four pooled cells per filter)",
        value_format="g",
        highlight=[cls == trace.classes[trace.winner] for cls in trace.feature_classes]
        if trace.winner is not None
        else None,
        height=300,
    )
    chart(fig, key="features", alt="Bar chart of the flattened features")
    explain(
        f"The pooled maps laid end to end: {conv.format_kernel_row(trace.features)}.",
        "This short list of numbers is everything the classifier sees of the image: the picture has become a point "
        "in a small feature space, as a Transformer turns words into vectors.",
    )
    download_matrix(trace.features[None, :], ["features"], trace.feature_labels, name="the features", key="features")
    st.latex(
        r"\text{logit}_c=\sum_{k\,\in\,\text{filter }c}\text{feature}_k\qquad "
        r"p_c=\frac{e^{\text{logit}_c}}{\sum_j e^{\text{logit}_j}}"
    )
    labels = [f"{cls}<br>logit {logit:g}" for cls, logit in zip(trace.classes, trace.logits, strict=True)]
    fig = bars(
        labels,
        trace.probs,
        title="Softmax read-out: probability of each class",
        value_format=".2f",
        y_range=(0.0, 1.15),
        highlight=[index == trace.winner for index in range(len(trace.classes))],
        y_title="probability",
        height=320,
    )
    chart(fig, key="softmax", alt="Bar chart of the class probabilities")
    split = " / ".join(f"{cls} {p:.2f}" for cls, p in zip(trace.classes, trace.probs, strict=True))
    logits = ", ".join(f"{logit:g}" for logit in trace.logits)
    if trace.winner is not None:
        what = (
            f"Each class adds up its own filter's features: logits {logits}. Softmax turns them into {split}: "
            f"the network says “{trace.classes[trace.winner]}”."
        )
    elif trace.evidence == 0:
        what = (
            f"No filter found its pattern anywhere: all {n} features are 0, every logit is 0, and softmax splits "
            f"evenly ({split}). No evidence either way."
        )
    else:
        what = f"The top logits tie ({logits}), so softmax cannot pick a class ({split}): the evidence is balanced."
    explain(
        what,
        f"The same {link('softmax')} read-out turns a language model's final vector into next-word probabilities: "
        "a crisp answer when one score dominates, an honest split when the evidence is balanced.",
    )


@st.cache_data
def head_row() -> tuple[tuple[str, ...], np.ndarray]:
    """§5's attention head on 'the cat sat': the prompt and the attention row of its last word, from the engine."""
    model = hand_model()
    trace = forward(model, model.token_ids)
    return model.prompt, np.array(trace["blocks.0.attn.hook_pattern"][0, -1, :])


def filter_vs_head(trace: conv.ConvTrace, name: str, step: conv.WindowStep) -> None:
    """Step 4: the filter's fixed receptive field next to the head's content-chosen one, and the primer's table."""
    r, c = step.position
    height, width = step.patch.shape
    field = conv.receptive_field(trace.image.shape, trace.filter(name).kernel, step.position)
    left, right = st.columns([3, 2], gap="medium")
    with left:
        fig = heatmap_panels(
            [("image", trace.image), (f"weight on each pixel for cell ({r}, {c})", field)],
            title=f"A filter sees {step.patch.size} of {trace.image.size} pixels, always the same {step.patch.size}",
            outlines=[(r, c, height, width), (r, c, height, width)],
            height=300,
        )
        chart(fig, key="field-filter", alt="The filter's receptive field: its weights over a fixed 3 × 3 window")
        explain(
            f"To fill feature-map cell ({r}, {c}) the {name} filter weighs only the pixels in rows "
            f"{step.rows[0]}–{step.rows[-1]}, columns {step.columns[0]}–{step.columns[-1]}; every pixel outside the "
            "box gets weight 0, and that stays true whatever the image shows. Edit the image: the box never moves.",
            WHY_WINDOW,
        )
    with right:
        prompt, row = head_row()
        fig = heatmap(
            row[None, :],
            x=prompt,
            y=[prompt[-1]],
            title=f"“{prompt[-1]}” reads from every word",
            signed=False,
            height=220,
        )
        fig.update_layout(margin={"t": 90})
        chart(fig, key="field-head", alt="The attention head's row for the last word of 'the cat sat'")
        shares = ", ".join(f"{p:.3f} from “{w}”" for w, p in zip(prompt, row, strict=True))
        explain(
            f"Computed live from the §5 weights: when producing its output, “{prompt[-1]}” takes {shares}. Its "
            "window is the whole sentence so far, and the split comes from query–key matching on the words' content: "
            "different words would give a different split.",
            f"An {link('attention-head')} decides where to look at run time, from the content, and can reach a word "
            "any distance back in one step. That is why attention displaced convolution for language, where the word "
            "that matters can be anywhere.",
        )
    columns, rows = conv.comparison_table()
    st.markdown("**Filter vs head, side by side** (the primer's Appendix B)")
    table = pd.DataFrame(rows, columns=columns)
    st.table(table.set_index(columns[0]))
    download_table(table, name="the comparison", key="filter-vs-head")


# --- the page ------------------------------------------------------------------------------------------------------

setup_page(SPEC)
st.markdown(
    f"An image-reading network slides small {link('convolution')} filters over the pixels; an "
    f"{link('attention-head')} lets each word choose which other words to read. Build an image and the filters "
    "below, follow it through the primer's Appendix B network step by step, then put the filter next to a head."
)
controls = st.columns([1.1, 1.2, 1.3], gap="large")
with controls[0]:
    image = image_editor()
with controls[1]:
    filters = filter_editor()
trace = conv.classify(image, filters)
with controls[2]:
    name = st.radio(
        "Filter that slides",
        list(filters),
        key="slide",
        bind="query-params",
        horizontal=True,
        help=tip("convolution"),
    )
    positions = conv.window_positions(image.shape, filters[name].shape)
    number = st.select_slider(
        f"Window position (1–{len(positions)}, in reading order)",
        options=range(1, len(positions) + 1),
        key="win",
        bind="query-params",
        help=f"The {shape(filters[name])} window stops at {len(positions)} places on the {shape(image)} image, in "
        "reading order; each stop fills one cell of the feature map.",
    )
    step = conv.window(image, filters[name], positions[number - 1])
    with st.container(border=True):
        st.markdown("**Read-out** (softmax probability of each class)", help=tip("softmax"))
        st.markdown("  \n".join(f"{cls}: **{p:.2f}**" for cls, p in zip(trace.classes, trace.probs, strict=True)))

tabs = st.tabs(STEPS, key="view", on_change="rerun", bind="query-params")
if tabs[0].open:
    with tabs[0]:
        sliding_window(trace, name, step, number)
if tabs[1].open:
    with tabs[1]:
        feature_maps(trace)
if tabs[2].open:
    with tabs[2]:
        readout(trace)
if tabs[3].open:
    with tabs[3]:
        filter_vs_head(trace, name, step)
