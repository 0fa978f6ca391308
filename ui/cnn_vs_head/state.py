"""The 'CNN vs head' page's inputs: the image (preset, pixel edits, the URL's 'img'), the filters and the window stop.

Every input lives in the URL: bound widgets, plus the edited image as a compact 'img' parameter ('00100-00100-…').
Bad input gives a message and keeps the last valid state. The 25 pixel boxes are drawn only while "Edit pixels" is on,
inside a fragment, so the default rerun stays cheap and switching the editor on or off reruns only the editor.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.explain import conv
from ui.elements import link_reader as lr
from ui.elements.glossary import tip
from ui.elements.safe_text import plain

PRESETS = conv.presets()
PRIMER_FILTERS = conv.primer_filters()
CUSTOM = conv.custom_filter_name()
DEFAULT_ROWS = [conv.format_kernel_row(row) for row in conv.custom_filter_default()]
IMAGE_KEY = "img"  # query parameter of an edited image; absent while the image is exactly the chosen preset
IMAGE_STATE = "cnn_image"  # the last valid edited image (encoded), kept in the session across page switches
KERNEL_STATE = "cnn_kernel"  # the last valid custom filter
WINDOW_KEY = "win"  # the window stop, 1 … 9 in reading order
BOXES_SHOW = "cnn_boxes_show"  # the encoded image the pixel boxes' ticks were last set from
PAGE = "cnn"
IMAGE_SHAPE = PRESETS[conv.default_preset()].shape

# The page's four steps (tabs), in reading order; the views draw one each.
STEPS = ("① Sliding window", "② Feature maps", "③ Read-out", "④ Filter vs head")


def read_link() -> None:
    """Check the link's values before any widget reads them; a refused one is named in the page's one notice."""

    def row_check(index: int) -> lr.Param:
        rows = lambda raw: [raw if i == index else row for i, row in enumerate(DEFAULT_ROWS)]  # noqa: E731
        return lr.text(lambda raw: conv.parse_kernel(rows(raw)), limit=80, instead="the row's default is used")

    last = len(conv.window_positions(IMAGE_SHAPE, conv.custom_filter_default().shape))
    params = {
        "preset": lr.choice(list(PRESETS), default=conv.default_preset()),
        IMAGE_KEY: lr.Param(_read_image, instead="the preset is shown"),
        "custom": lr.flag(default=False),
        **{f"k{index + 1}": row_check(index) for index in range(len(DEFAULT_ROWS))},
        "slide": lr.choice([*PRIMER_FILTERS, CUSTOM], default=next(iter(PRIMER_FILTERS))),
        WINDOW_KEY: lr.number(1, last, whole=True, default=1),
        "view": lr.choice(STEPS, default=STEPS[0]),
    }
    lr.read_link(PAGE, params)
    lr.link_notice(PAGE)


def _read_image(raw: str) -> str:
    """The link's image in its 0/1 form; refused when it cannot be read, adjusted (and named) when a digit above 1
    had to be read as ink."""
    checked = lr.text(lambda text: conv.decode_image(text, IMAGE_SHAPE), limit=80).read(raw)
    image, notes = conv.decode_image(checked, IMAGE_SHAPE)
    if notes:
        raise lr.Adjusted(conv.encode_image(image), notes[0], f"used {conv.encode_image(image)}")
    return checked


# --- the image: preset, pixel edits, URL ---------------------------------------------------------------------------


def _edited_image() -> np.ndarray:
    """The image as last shown: the session's edited image, or the chosen preset."""
    stored = st.session_state.get(IMAGE_STATE)
    return conv.decode_image(stored)[0] if stored else PRESETS[st.session_state["preset"]]


def _drop_edits() -> None:
    """Forget the edited image in the session and the URL (a newly chosen preset replaces any pixel edits)."""
    st.session_state.pop(IMAGE_STATE, None)
    if IMAGE_KEY in st.query_params:
        del st.query_params[IMAGE_KEY]


def _store_image(image: np.ndarray) -> None:
    """Keep an edited image in the session and the URL; drop both when the image is exactly the preset again."""
    text = conv.encode_image(image)
    if text == conv.encode_image(PRESETS[st.session_state["preset"]]):
        _drop_edits()
    else:
        st.session_state[IMAGE_STATE] = text
        st.query_params[IMAGE_KEY] = text


def _pixel_key(position: tuple[int, int]) -> str:
    return f"px{position[0]}{position[1]}"


def _pixel_toggled(position: tuple[int, int]) -> None:
    """A click on a box changes that one pixel of the image as it is now (to the box's new tick), so quick clicks on
    several boxes add up; the same click reported twice changes nothing more. The clicked box already shows the new
    value, so the boxes stay in step without being rewritten."""
    image = conv.with_pixel(_edited_image(), position, st.session_state[_pixel_key(position)])
    _store_image(image)
    st.session_state[BOXES_SHOW] = conv.encode_image(image)


def _resolve_image(preset: str) -> np.ndarray:
    """The image to show: the link's 'img' if it reads, else the session's last valid image, else the preset."""
    text = st.query_params.get(IMAGE_KEY) or st.session_state.get(IMAGE_STATE)
    image = PRESETS[preset]
    if text:
        try:
            image, _ = conv.decode_image(text)  # a link's digits above 1 were read, and named, by `read_link`
        except ValueError as error:
            st.warning(
                f"The image in the link could not be read: {plain(error, 160)}. Showing the last valid image instead."
            )
            image = _edited_image()
    _store_image(image)
    return image


def image_picker() -> np.ndarray:
    """Preset picker; returns the image: the link's or the session's edited image, else the preset."""
    names = list(PRESETS)
    preset = st.selectbox(
        "Image preset",
        names,
        index=names.index(conv.default_preset()),
        key="preset",
        bind="query-params",
        on_change=_drop_edits,
        help=f"A {conv.grid_size(PRESETS[names[0]])} black-and-white image, as in the primer's Appendix B. Switch on "
        "“Edit pixels” to tick pixels on or off.",
    )
    image = _resolve_image(preset)
    edited = IMAGE_STATE in st.session_state
    st.caption(("Edited from the preset. " if edited else "") + conv.preset_notes()[preset])
    return image


def pixel_editor(image: np.ndarray) -> None:
    """The "Edit pixels" switch and, while it is on, a 5 × 5 grid of tick boxes (ticked = ink)."""
    _pixel_grid(conv.encode_image(image))


@st.fragment
def _pixel_grid(shown: str) -> None:
    """The "Edit pixels" switch and, while it is on, one tick box per pixel of the image shown (`shown`, encoded).

    A fragment: the switch reruns only this editor. A ticked box changes the image, so the whole page reruns.
    """
    if conv.encode_image(_edited_image()) != shown:  # a box was just ticked in a rerun of this fragment alone
        st.rerun()
    if not st.toggle("Edit pixels", key="edit_pixels", help="Show the image as tick boxes: ticked = ink."):
        return
    image = conv.decode_image(shown)[0]
    positions = list(np.ndindex(*image.shape))
    unset = any(_pixel_key(position) not in st.session_state for position in positions)  # e.g. after another page
    if unset or st.session_state.get(BOXES_SHOW) != shown:  # the image changed by other means (preset, link)
        for position in positions:
            st.session_state[_pixel_key(position)] = bool(image[position])
        st.session_state[BOXES_SHOW] = shown
    for row in range(image.shape[0]):
        with st.container(horizontal=True, gap="small"):
            for column in range(image.shape[1]):
                position = (row, column)
                st.checkbox(
                    f"pixel row {row}, column {column}",
                    key=_pixel_key(position),
                    label_visibility="collapsed",
                    on_change=_pixel_toggled,
                    args=(position,),
                )


# --- the filters ---------------------------------------------------------------------------------------------------


def filter_editor() -> dict[str, np.ndarray]:
    """The primer's two filters, plus the reader's own 3 × 3 filter when switched on; returns them by class name.

    The filter's rows are drawn only while it is on; their text is kept (session and URL) while they are hidden.
    """
    limit = conv.kernel_limit()
    if not st.toggle("Add my own filter", key="custom", bind="query-params", help=tip("convolution")):
        st.caption(f"Type a {len(DEFAULT_ROWS)} × {len(DEFAULT_ROWS)} filter of your own: it adds a third class.")
        return dict(PRIMER_FILTERS)
    st.caption(
        f"One row of three weights per line, each between −{limit:g} and {limit:g}. It adds a third class; the "
        "default rewards ink on the diagonal."
    )
    rows = [
        st.text_input(
            f"Row {index + 1} of my filter",
            value=DEFAULT_ROWS[index],
            key=f"k{index + 1}",
            bind="query-params",
            persist_state="session",
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
        st.error(
            f"My filter: {plain(error, 160)}. It keeps its last valid weights ({shown}) until the rows read correctly."
        )
    return PRIMER_FILTERS | {CUSTOM: kernel}


# --- the sliding window --------------------------------------------------------------------------------------------


def _step_window(by: int, last: int) -> None:
    """The arrows beside the slider: move the window one stop back or on, staying within 1 … last."""
    st.session_state[WINDOW_KEY] = min(max(st.session_state[WINDOW_KEY] + by, 1), last)


def window_picker(image: np.ndarray, filters: dict[str, np.ndarray]) -> tuple[str, conv.WindowStep, int]:
    """Which filter slides and where its window stops (slider with arrows); returns the filter, the stop, its number."""
    name = st.radio(
        "Filter that slides", list(filters), key="slide", bind="query-params", horizontal=True, help=tip("convolution")
    )
    positions = conv.window_positions(image.shape, filters[name].shape)
    last = len(positions)
    back, slider, on = st.columns([1, 6, 1], gap="small", vertical_alignment="bottom")
    with slider:
        number = st.select_slider(
            f"Window position (of {last}, in reading order)",
            options=range(1, last + 1),
            key=WINDOW_KEY,
            bind="query-params",
            help=f"The {conv.grid_size(filters[name])} window stops at {last} places on the "
            f"{conv.grid_size(image)} image, in reading order; each stop fills one cell of the feature map.",
        )
    for column, by, icon, tip_text in (
        (back, -1, "chevron_left", "Previous stop"),
        (on, 1, "chevron_right", "Next stop"),
    ):
        column.button(
            "",
            icon=f":material/{icon}:",
            key=f"win{by:+d}",
            help=tip_text,
            on_click=_step_window,
            args=(by, last),
            disabled=number == (1 if by < 0 else last),
        )
    return name, conv.window(image, filters[name], positions[number - 1]), number
