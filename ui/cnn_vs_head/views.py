"""The 'CNN vs head' page's views (primer §1 and Appendix B): the image, the four steps, the read-out box.

Each view draws from one `core.explain.conv` trace and writes its annotation from the same numbers. Figures are built
once per distinct content (functools caches keyed by small tuples, never arrays) and shared read-only: plotly's
construction and validation are most of a chart's cost. `template="none"`: Streamlit applies its theme in the browser.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from PIL import Image

from core.explain import conv
from core.explain.primer import conv_example
from ui.elements.figures import bars, heatmap, heatmap_panels
from ui.elements.flowchart import flowchart
from ui.elements.glossary import link, tip
from ui.elements.widgets import chart, download_matrix, download_table, explain

if TYPE_CHECKING:
    import pandas as pd

KERNEL = next(iter(conv_example().filters.values()))  # the primer's filters, all of one size
POOL = conv.grid_size(np.empty((conv.POOL_SIZE, conv.POOL_SIZE)))
STAGE_TITLES = {"convolution": "convolution", "ReLU": "ReLU: negatives → 0", "max-pool": f"{POOL} max-pool"}
WHY_WINDOW = (
    f"A filter is one small, fixed pattern reused at every position: the same {KERNEL.size} weights score every "
    "window, so a stroke is recognised wherever it sits, but nothing outside the "
    f"{conv.grid_size(KERNEL)} window can ever influence the result."
)
Box = tuple[int, int, int, int]  # (row, column, rows, columns) of a block of cells to outline


def _grid(values: np.ndarray) -> tuple[tuple[float, ...], ...]:
    """A small grid as nested tuples: a cheap, exact cache key."""
    return tuple(map(tuple, np.asarray(values, dtype=np.float64).tolist()))


@lru_cache(maxsize=512)  # 512 × ~10 kB
def _panels(
    panels: tuple[tuple[str, tuple[tuple[float, ...], ...]], ...],
    title: str,
    outlines: tuple[Box | None, ...] | None,
    height: int,
    per_row: int | None = None,
) -> go.Figure:
    fig = heatmap_panels(
        [(name, np.array(grid)) for name, grid in panels],
        title=title,
        outlines=outlines,
        height=height,
        per_row=per_row,
    )
    return fig.update_layout(template="none")


def panels_figure(
    panels: Sequence[tuple[str, np.ndarray]],
    *,
    title: str,
    outlines: Sequence[Box | None] | None = None,
    height: int,
    per_row: int | None = None,
) -> go.Figure:
    """`ui.elements.figures.heatmap_panels`, built once per distinct content (the cached figure is never mutated)."""
    key = tuple((name, _grid(grid)) for name, grid in panels)
    return _panels(key, title, tuple(outlines) if outlines else None, height, per_row)


def cached_trace(image: np.ndarray, filters: dict[str, np.ndarray]) -> conv.ConvTrace:
    """Appendix B's network on this image and these filters, computed once per distinct input."""
    return _trace(conv.encode_image(image), tuple((name, _grid(kernel)) for name, kernel in filters.items()))


@lru_cache(maxsize=256)  # 256 × ~2 kB
def _trace(image: str, filters: tuple[tuple[str, tuple[tuple[float, ...], ...]], ...]) -> conv.ConvTrace:
    return conv.classify(conv.decode_image(image)[0], {name: np.array(kernel) for name, kernel in filters})


# --- always on screen ----------------------------------------------------------------------------------------------


INK, BLANK, LINE = (5, 48, 97), (247, 247, 247), (200, 200, 200)  # the heatmaps' RdBu ends for 1 and 0; grid lines
PIXEL = 22  # screen pixels per image pixel


@lru_cache(maxsize=128)  # 128 × ~0.5 kB
def _picture(image: str) -> str:
    """The encoded image as a PNG data URL: one PIXEL-wide square per pixel, ink dark blue, thin grey grid lines.

    Encoded once per image; a data URL goes to the browser as it is (an array or bytes would be re-encoded each run).
    """
    ink = conv.decode_image(image)[0].astype(bool)
    squares = np.kron(ink, np.ones((PIXEL, PIXEL), dtype=bool))
    picture = np.where(squares[..., None], np.array(INK, np.uint8), np.array(BLANK, np.uint8))
    picture[::PIXEL, :] = picture[:, ::PIXEL] = LINE
    picture[-1, :] = picture[:, -1] = LINE
    buffer = io.BytesIO()
    Image.fromarray(picture).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def image_view(image: np.ndarray) -> None:
    """The image itself, always in view (a small picture, not a chart), whether or not the pixel editor is open."""
    text = conv.encode_image(image)
    rows = ", ".join(text.split(conv.IMAGE_SEPARATOR))
    st.image(_picture(text), alt=f"The {conv.grid_size(image)} image, rows top to bottom (1 = ink): {rows}")


def readout_box(trace: conv.ConvTrace) -> None:
    """The network's answer, always in view: the softmax probability of each class."""
    with st.container(border=True):
        st.markdown("**Read-out** (softmax probability of each class)", help=tip("softmax"))
        st.markdown("  \n".join(f"{cls}: **{p:.2f}**" for cls, p in zip(trace.classes, trace.probs, strict=True)))


# --- ① sliding window ----------------------------------------------------------------------------------------------


def sliding_window(trace: conv.ConvTrace, name: str, step: conv.WindowStep, number: int) -> None:
    """Step 1: the window on the image, the filter, the nine products and their sum landing in the feature map."""
    r, c = step.position
    height, width = step.patch.shape
    fig = panels_figure(
        [
            ("image (window in orange)", trace.image),
            (f"{name} filter", trace.filter(name).kernel),
            ("pixel × weight", step.products),
            (f"{name} feature map", trace.filter(name).conv),
        ],
        title=f"Window {number}: the nine products add up to {step.total:g},<br>written into cell ({r}, {c})",
        outlines=[(r, c, height, width), None, None, (r, c, 1, 1)],
        height=560,
        per_row=2,  # 2 × 2, so each grid stays legible on a phone
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


# --- ② feature maps ------------------------------------------------------------------------------------------------


def maps_frame(step: conv.FilterTrace) -> pd.DataFrame:
    """One filter's maps as the grids the chart draws, stacked: one line per (step, row), one column per map column."""
    import pandas as pd  # only when the maps are shown: the first screen does without it

    width = max(grid.shape[1] for _, grid in step.stages)
    lines = [
        {"step": stage, "row": r, **{f"column {c}": grid[r, c] if c < grid.shape[1] else None for c in range(width)}}
        for stage, grid in step.stages
        for r in range(grid.shape[0])
    ]
    return pd.DataFrame(lines)


def _maps_sentence(step: conv.FilterTrace) -> str:
    low, high = step.score_range
    if step.active_cells:
        return (
            f"The {step.name} filter's scores range from {low:g} to {high:g}. ReLU keeps the {step.active_cells} "
            f"positive cell(s) of {step.conv.size}, pooling keeps the strongest value of each {POOL} patch: "
            f"{conv.format_kernel_row(step.pool.ravel())}, a total vote of {step.evidence:g}."
        )
    if low == high == 0:
        return (
            f"Every window scores 0: there is no ink under the {step.name} filter anywhere. ReLU and pooling keep the "
            "zeros, so this filter casts no vote."
        )
    return (
        f"No window matches the {step.name} filter (scores from {low:g} to {high:g}): ReLU turns every cell to 0 and "
        "the pooled map is all zeros, so this filter casts no vote."
    )


def feature_maps(trace: conv.ConvTrace) -> None:
    """Step 2: each filter's feature map, after ReLU, after 2 × 2 max-pooling, each downloadable as CSV."""
    st.latex(
        r"\operatorname{ReLU}(x)=\max(0,x)\qquad"
        r"\text{pool}[r,c]=\max_{i,j\in\{0,1\}}\operatorname{ReLU}(\text{map})[r+i,\,c+j]"
    )
    for step in trace.filters:
        fig = panels_figure(
            [(STAGE_TITLES[stage], grid) for stage, grid in step.stages],
            title=f"{step.name.capitalize()} filter: feature map → ReLU → pooled map",
            height=290,
        )
        chart(fig, key=f"maps-{step.name}", alt=f"{step.name} filter's feature map, after ReLU and after pooling")
        download_table(maps_frame(step), name=f"the {step.name} filter's maps", key=f"maps-{step.name}")
        explain(
            _maps_sentence(step),
            "ReLU keeps only positive evidence that the pattern is there; pooling adds a little tolerance to where "
            "exactly it sits, so a stroke shifted by one pixel still gives the same answer.",
        )


# --- ③ read-out ----------------------------------------------------------------------------------------------------


@cache
def _ocr_figure() -> go.Figure:
    nodes, edges, _ = conv.ocr_flowchart()
    return flowchart(nodes, edges, title="The primer's OCR network in one picture (§1)")


def ocr_picture(trace: conv.ConvTrace) -> None:
    """The primer's §1 flowchart of a whole OCR network, and how Appendix B's small network instantiates it."""
    nodes, _, source = conv.ocr_flowchart()
    chart(
        _ocr_figure(),
        key="ocr-flowchart",
        alt="Flowchart, top to bottom: " + "; then ".join(node.replace("\n", " ") for node in nodes),
    )
    st.caption(source)
    explain(
        f"Pixels become feature maps, the maps are flattened and a softmax picks the letter. The network on this page "
        f"is a small instance of it: {len(trace.filters)} filters and {len(trace.classes)} classes "
        f"({', '.join(trace.classes)}) instead of 26 letters, its read-out below.",
        "A Transformer keeps the last two boxes, a vector and a softmax over the vocabulary; what it replaces is the "
        "first arrow, the fixed sliding window, by attention that chooses where to look.",
    )


def readout(trace: conv.ConvTrace) -> None:
    """Step 3: the primer's §1 picture, the flattened features, the read-out's logits and the softmax probabilities."""
    ocr_picture(trace)
    n = trace.features.size
    winner = trace.classes[trace.winner] if trace.winner is not None else None
    fig = bars(
        trace.feature_labels,
        trace.features,
        title=f"The {n} flattened features (four pooled cells per filter)",
        value_format="g",
        highlight=[cls == winner for cls in trace.feature_classes] if winner else None,
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
    fig = bars(
        [f"{cls}<br>logit {logit:g}" for cls, logit in zip(trace.classes, trace.logits, strict=True)],
        trace.probs,
        title="Softmax read-out: probability of each class",
        value_format=".2f",
        y_range=(0.0, 1.15),
        highlight=[index == trace.winner for index in range(len(trace.classes))],
        y_title="probability",
        height=320,
    )
    chart(fig, key="softmax", alt="Bar chart of the class probabilities")
    explain(
        _readout_sentence(trace),
        f"The same {link('softmax')} read-out turns a language model's final vector into next-word probabilities: "
        "a crisp answer when one score dominates, an honest split when the evidence is balanced.",
    )


def _readout_sentence(trace: conv.ConvTrace) -> str:
    split = " / ".join(f"{cls} {p:.2f}" for cls, p in zip(trace.classes, trace.probs, strict=True))
    logits = ", ".join(f"{logit:g}" for logit in trace.logits)
    if trace.winner is not None:
        return (
            f"Each class adds up its own filter's features: logits {logits}. Softmax turns them into {split}: "
            f"the network says “{trace.classes[trace.winner]}”."
        )
    if trace.evidence == 0:
        return (
            f"No filter found its pattern anywhere: all {trace.features.size} features are 0, every logit is 0, and "
            f"softmax splits evenly ({split}). No evidence either way."
        )
    return f"The top logits tie ({logits}), so softmax cannot pick a class ({split}): the evidence is balanced."


# --- ④ filter vs head ----------------------------------------------------------------------------------------------


@cache
def _head_figure() -> go.Figure:
    prompt, row = conv.head_field()
    fig = heatmap(row[None, :], x=prompt, y=[prompt[-1]], title=f"“{prompt[-1]}” reads from every word", signed=False)
    return fig.update_layout(margin={"t": 90}, height=220, template="none")


def filter_vs_head(trace: conv.ConvTrace, name: str, step: conv.WindowStep) -> None:
    """Step 4: the filter's fixed receptive field next to the head's content-chosen one, and the primer's table."""
    r, c = step.position
    box = (r, c, *step.patch.shape)
    field = conv.receptive_field(trace.image.shape, trace.filter(name).kernel, step.position)
    left, right = st.columns([3, 2], gap="medium")
    with left:
        fig = panels_figure(
            [("image", trace.image), (f"weight on each pixel for cell ({r}, {c})", field)],
            title=f"A filter sees {step.patch.size} of {trace.image.size} pixels, always the same {step.patch.size}",
            outlines=[box, box],
            height=300,
        )
        chart(
            fig,
            key="field-filter",
            alt=f"The filter's receptive field: its weights over a fixed {conv.grid_size(step.patch)} window",
        )
        explain(
            f"To fill feature-map cell ({r}, {c}) the {name} filter weighs only the pixels in rows "
            f"{step.rows[0]}–{step.rows[-1]}, columns {step.columns[0]}–{step.columns[-1]}; every pixel outside the "
            "box gets weight 0, and that stays true whatever the image shows. Edit the image: the box never moves.",
            WHY_WINDOW,
        )
    with right:
        prompt, row = conv.head_field()
        chart(_head_figure(), key="field-head", alt="The attention head's row for the last word of 'the cat sat'")
        shares = ", ".join(f"{p:.3f} from “{w}”" for w, p in zip(prompt, row, strict=True))
        explain(
            f"Computed live from the §5 weights: when producing its output, “{prompt[-1]}” takes {shares}. Its "
            "window is the whole sentence so far, and the split comes from query–key matching on the words' content: "
            "different words would give a different split.",
            f"An {link('attention-head')} decides where to look at run time, from the content, and can reach a word "
            "any distance back in one step, where the word that matters can be anywhere. The primer puts it as "
            "“the whole reason attention displaced convolution for language”; in practice what attention chiefly "
            "displaced in language were recurrent networks (RNNs, LSTMs), which carry a word forward one step at a "
            "time.",
        )
    columns, rows = conv.comparison_table()
    st.markdown("**Filter vs head, side by side** (the primer's Appendix B)")
    import pandas as pd

    table = pd.DataFrame(rows, columns=columns)
    st.table(table.set_index(columns[0]))
    download_table(table, name="the comparison", key="filter-vs-head")
