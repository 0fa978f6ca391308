"""Appendix B's tiny OCR network: valid convolution, ReLU, 2×2 max-pool (stride 1), flatten, read-out, softmax.

Convolution here is what the primer (and every deep-learning library) calls convolution: the filter slides without
flipping, out[r, c] = Σᵢⱼ image[r+i, c+j] · kernel[i, j]. Every step is returned in a read-only trace so a page can
show it. Image presets, the custom filter's default and the primer's filter-vs-head table live in
`assets/cnn_vs_head.json`; the Appendix B image and filters come from `core.explain.primer`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from core.assets import ASSETS
from core.explain.attention import softmax
from core.explain.primer import conv_example
from core.explain.transformer import forward, hand_model

ASSET = ASSETS / "cnn_vs_head.json"
POOL_SIZE = 2  # Appendix B: 2 × 2 max-pool …
POOL_STRIDE = 1  # … with stride 1, so a 3 × 3 feature map becomes 2 × 2
IMAGE_SEPARATOR = "-"  # "00100-00100-…": one run of 0/1 digits per image row, rows joined by this


def _frozen(values: object) -> np.ndarray:
    array = np.array(values, dtype=np.float64)
    array.setflags(write=False)
    return array


# --- the network's steps -------------------------------------------------------------------------------------------


def conv2d(image: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Valid 2-D convolution (no padding, stride 1): an H × W image and a kh × kw kernel give (H−kh+1) × (W−kw+1)."""
    image, kernel = np.asarray(image, dtype=np.float64), np.asarray(kernel, dtype=np.float64)
    if image.ndim != 2 or kernel.ndim != 2:
        raise ValueError("image and kernel must both be 2-D grids")
    if kernel.shape[0] > image.shape[0] or kernel.shape[1] > image.shape[1]:
        raise ValueError(f"a {kernel.shape} kernel does not fit in a {image.shape} image")
    windows = sliding_window_view(image, kernel.shape)  # (out_h, out_w, kh, kw)
    return np.einsum("rcij,ij->rc", windows, kernel)


def relu(x: np.ndarray) -> np.ndarray:
    """Zero out negatives: keep only the positive evidence that the filter's pattern is present."""
    return np.maximum(np.asarray(x, dtype=np.float64), 0.0)


def max_pool(x: np.ndarray, size: int = POOL_SIZE, stride: int = POOL_STRIDE) -> np.ndarray:
    """Max over each size × size patch, moving by `stride`: a little tolerance to where exactly a pattern sits."""
    x = np.asarray(x, dtype=np.float64)
    if x.shape[0] < size or x.shape[1] < size:
        raise ValueError(f"a {x.shape} map is smaller than the {size} × {size} pooling window")
    return sliding_window_view(x, (size, size))[::stride, ::stride].max(axis=(-2, -1))


def flatten(maps: Sequence[np.ndarray]) -> np.ndarray:
    """The pooled maps, each read row by row, one after the other: the classifier's feature vector."""
    return np.concatenate([np.asarray(m, dtype=np.float64).ravel() for m in maps])


def readout_matrix(n_filters: int, per_filter: int) -> np.ndarray:
    """Appendix B's read-out, features × classes: class c sums the features of filter c (weight 1), ignores the rest."""
    return np.kron(np.eye(n_filters), np.ones((per_filter, 1)))


# --- traces --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FilterTrace:
    """One filter's path through the network: its weights, feature map, ReLU and pooled map."""

    name: str
    kernel: np.ndarray
    conv: np.ndarray
    relu: np.ndarray
    pool: np.ndarray

    @property
    def score_range(self) -> tuple[float, float]:
        """Lowest and highest raw score over all windows (before ReLU)."""
        return float(self.conv.min()), float(self.conv.max())

    @property
    def active_cells(self) -> int:
        """How many windows the filter's pattern is present in (feature-map cells ReLU keeps)."""
        return int(np.count_nonzero(self.relu))

    @property
    def evidence(self) -> float:
        """Sum of the pooled map: this filter's total vote in Appendix B's read-out."""
        return float(self.pool.sum())

    @property
    def stages(self) -> tuple[tuple[str, np.ndarray], ...]:
        """The filter's three maps in the order the network makes them: convolution, ReLU, max-pool."""
        return (("convolution", self.conv), ("ReLU", self.relu), ("max-pool", self.pool))


@dataclass(frozen=True)
class ConvTrace:
    """Every step of Appendix B for one image: per-filter maps, the flat features, the read-out, logits, softmax."""

    image: np.ndarray
    filters: tuple[FilterTrace, ...]
    features: np.ndarray
    readout: np.ndarray  # n_features × n_classes (row-vector convention: logits = features @ readout)
    logits: np.ndarray
    probs: np.ndarray

    @property
    def classes(self) -> tuple[str, ...]:
        """One class per filter, named after it (Appendix B: 'vertical', 'horizontal')."""
        return tuple(f.name for f in self.filters)

    @property
    def feature_labels(self) -> tuple[str, ...]:
        """'vertical 1' … 'vertical 4', 'horizontal 1' …: which filter and which pooled cell each feature is."""
        return tuple(f"{f.name} {k + 1}" for f in self.filters for k in range(f.pool.size))

    @property
    def feature_classes(self) -> tuple[str, ...]:
        """The class (filter) each flattened feature belongs to."""
        return tuple(f.name for f in self.filters for _ in range(f.pool.size))

    @property
    def winner(self) -> int | None:
        """Index of the class with the highest logit, or None when the top logits tie (no evidence either way)."""
        top = np.flatnonzero(self.logits == self.logits.max())
        return int(top[0]) if top.size == 1 else None

    @property
    def evidence(self) -> float:
        """Sum of all features: 0 means no filter found its pattern anywhere."""
        return float(self.features.sum())

    def filter(self, name: str) -> FilterTrace:
        """The trace of the filter with this name."""
        return next(f for f in self.filters if f.name == name)


def classify(image: np.ndarray, filters: Mapping[str, np.ndarray]) -> ConvTrace:
    """Run Appendix B's network: each filter → conv → ReLU → pool; flatten; class c sums filter c's features."""
    steps = []
    for name, kernel in filters.items():
        conv = conv2d(image, kernel)
        rectified = relu(conv)
        steps.append(
            FilterTrace(name, _frozen(kernel), _frozen(conv), _frozen(rectified), _frozen(max_pool(rectified)))
        )
    features = flatten([s.pool for s in steps])
    readout = readout_matrix(len(steps), steps[0].pool.size)
    logits = features @ readout
    return ConvTrace(
        image=_frozen(image),
        filters=tuple(steps),
        features=_frozen(features),
        readout=_frozen(readout),
        logits=_frozen(logits),
        probs=_frozen(softmax(logits)),
    )


@dataclass(frozen=True)
class WindowStep:
    """One stop of the sliding window: where it is, the pixels under it, the products with the filter and their sum."""

    position: tuple[int, int]  # top-left pixel of the window = the feature-map cell it produces
    patch: np.ndarray
    products: np.ndarray
    total: float

    @property
    def rows(self) -> range:
        """Image rows under the window."""
        return range(self.position[0], self.position[0] + self.patch.shape[0])

    @property
    def columns(self) -> range:
        """Image columns under the window."""
        return range(self.position[1], self.position[1] + self.patch.shape[1])


def window_positions(image_shape: tuple[int, int], kernel_shape: tuple[int, int]) -> list[tuple[int, int]]:
    """Every valid stop of the window in reading order: (row, column) of its top-left pixel (9 for 5 × 5 and 3 × 3)."""
    rows, cols = image_shape[0] - kernel_shape[0] + 1, image_shape[1] - kernel_shape[1] + 1
    return [(r, c) for r in range(rows) for c in range(cols)]


def window(image: np.ndarray, kernel: np.ndarray, position: tuple[int, int]) -> WindowStep:
    """The sliding-window detail at one stop: patch, element-wise products, and their sum (= conv2d at that cell)."""
    kernel = np.asarray(kernel, dtype=np.float64)
    if position not in window_positions(np.shape(image), kernel.shape):
        raise ValueError(f"window position {position} is outside the image")
    r, c = position
    patch = np.asarray(image, dtype=np.float64)[r : r + kernel.shape[0], c : c + kernel.shape[1]]
    products = patch * kernel
    return WindowStep(position, _frozen(patch), _frozen(products), float(products.sum()))


def receptive_field(image_shape: tuple[int, int], kernel: np.ndarray, position: tuple[int, int]) -> np.ndarray:
    """The weight each pixel gets in one feature-map cell: the filter over its window, 0 everywhere else.

    It does not depend on the image: that is what "fixed receptive field" means.
    """
    kernel = np.asarray(kernel, dtype=np.float64)
    field = np.zeros(image_shape)
    r, c = position
    field[r : r + kernel.shape[0], c : c + kernel.shape[1]] = kernel
    return _frozen(field)


@cache
def head_field() -> tuple[tuple[str, ...], np.ndarray]:
    """The §5 attention head's receptive field for its last word: the prompt and that word's attention row.

    The counterpart of `receptive_field`: the weights come from query–key matching on the words, not from a fixed box.
    """
    model = hand_model()
    trace = forward(model, model.token_ids)
    return tuple(model.prompt), _frozen(trace["blocks.0.attn.hook_pattern"][0, -1, :])


# --- presets, filters and the page's content -----------------------------------------------------------------------


@cache
def _asset() -> dict:
    with ASSET.open(encoding="utf-8") as handle:
        return json.load(handle)


@cache
def presets() -> dict[str, np.ndarray]:
    """The 5 × 5 binary image presets by name, the Appendix B vertical stroke first (it is the default)."""
    out = {}
    for preset in _asset()["image_presets"]["presets"]:
        if preset.get("from_primer"):
            out[preset["name"]] = conv_example().image
        else:
            out[preset["name"]] = _frozen(decode_image(IMAGE_SEPARATOR.join(preset["rows"]))[0])
    return out


def default_preset() -> str:
    """The preset a page opens on: Appendix B's vertical stroke."""
    return _asset()["image_presets"]["default"]


def preset_notes() -> dict[str, str]:
    """One plain sentence per preset saying what it shows."""
    return {p["name"]: p["note"] for p in _asset()["image_presets"]["presets"]}


def primer_filters() -> dict[str, np.ndarray]:
    """Appendix B's two filters by class name: the vertical and the horizontal stroke detector."""
    return dict(conv_example().filters)


def custom_filter_name() -> str:
    """Name (and class name) of the reader's own filter."""
    return _asset()["custom_filter"]["name"]


def custom_filter_default() -> np.ndarray:
    """The reader's filter before any edit: a diagonal-stroke detector in the style of the primer's two."""
    return _frozen(_asset()["custom_filter"]["default"])


def kernel_limit() -> float:
    """Largest allowed size of a custom filter weight (either sign)."""
    return float(_asset()["custom_filter"]["limit"])


def comparison_table() -> tuple[list[str], list[list[str]]]:
    """The primer's 'Filter vs head, side by side' table: column headers and rows."""
    table = _asset()["comparison"]
    return list(table["columns"]), [list(row) for row in table["rows"]]


def ocr_flowchart() -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """The primer's §1 OCR flowchart: its boxes, the labels of the arrows between them, and its source."""
    chart = _asset()["ocr_flowchart"]
    return tuple(chart["nodes"]), tuple(chart["edges"]), chart["source"]


# --- reading and writing the reader's inputs -----------------------------------------------------------------------


def with_pixel(image: np.ndarray, position: tuple[int, int], ink: bool) -> np.ndarray:
    """A copy of a binary image with one pixel set to ink (1) or blank (0)."""
    out = np.array(image, dtype=np.float64)
    out[position] = 1.0 if ink else 0.0
    return _frozen(out)


def encode_image(image: np.ndarray) -> str:
    """Compact URL form of a binary image: '00100-00100-00100-00100-00100'."""
    return IMAGE_SEPARATOR.join("".join("1" if v else "0" for v in row) for row in np.asarray(image))


def decode_image(text: str, shape: tuple[int, int] = (5, 5)) -> tuple[np.ndarray, list[str]]:
    """Read an encoded image; digits above 1 are clamped to 1 (ink), with a note saying so.

    Raises ValueError with a plain message when the text is not rows of digits of the expected shape.
    """
    rows = str(text).strip().split(IMAGE_SEPARATOR)
    if len(rows) != shape[0] or any(len(row) != shape[1] for row in rows):
        raise ValueError(
            f"an image needs {shape[0]} rows of {shape[1]} digits separated by '{IMAGE_SEPARATOR}', got '{text}'"
        )
    if not all(re.fullmatch(r"[0-9]+", row) for row in rows):
        raise ValueError(f"an image may only contain the digits 0 (blank) and 1 (ink), got '{text}'")
    digits = np.array([[int(ch) for ch in row] for row in rows], dtype=np.float64)
    clamped = int((digits > 1).sum())
    notes = (
        [f"{clamped} pixel value(s) above 1 were set to 1: a pixel is either ink (1) or blank (0)"] if clamped else []
    )
    return np.minimum(digits, 1.0), notes


def parse_kernel(rows: Sequence[str], limit: float | None = None) -> np.ndarray:
    """Read a square filter typed as one row of numbers per text line ('-1 2 -1' or '-1, 2, -1').

    Raises ValueError with a message a reader can act on: wrong count, not a number, not finite, or beyond ±limit.
    """
    limit = kernel_limit() if limit is None else limit
    size, values = len(rows), []
    for index, row in enumerate(rows, start=1):
        cells = [cell for cell in re.split(r"[\s,;]+", str(row).strip()) if cell]
        for cell in cells:
            try:
                value = float(cell)
            except ValueError:
                raise ValueError(f"row {index} of the filter: '{cell}' is not a number") from None
            if not math.isfinite(value) or abs(value) > limit:
                raise ValueError(
                    f"row {index} of the filter: {cell} is outside the allowed range −{limit:g} … {limit:g}"
                )
            values.append(value)
        if len(cells) != size:
            raise ValueError(f"row {index} of the filter needs {size} numbers, got {len(cells)} ('{row}')")
    return _frozen(np.reshape(values, (size, size)))


def format_kernel_row(row: Sequence[float]) -> str:
    """One filter row as the reader types it: '-1 2 -1'."""
    return " ".join(f"{v:g}" for v in row)


def grid_size(grid: np.ndarray) -> str:
    """A grid's size as the primer writes it: '5 × 5'."""
    return " × ".join(str(n) for n in np.shape(grid))
