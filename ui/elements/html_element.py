"""App-built HTML handed to st.html as it is, without the rescans st.html makes of text it did not build itself."""

from __future__ import annotations

import streamlit as st


class _Built(str):
    """HTML the app built itself: a body with `_repr_html_` skips st.html's dedent of the whole text and its look for
    a file of that name (about 0.1 ms per 4 kB, on every rerun)."""

    def _repr_html_(self) -> str:
        return str(self)


def draw_html(body: str, *, scripts: bool = False) -> None:
    """Draw HTML the app built (every reader-derived part already escaped); `scripts` lets its script tags run."""
    st.html(_Built(body), unsafe_allow_javascript=scripts)
