"""Case 4's soak, bounded: a tab holding a large valid paste through many reruns leaves the server's memory within
10% of where it started once the tab is closed (the long version: `python -m bench.paste_soak`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.paste_soak import TARGET, soak
from bench.soak import TTL_S
from tests.e2e.conftest import Server


@pytest.fixture
def soak_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    """A server of its own that drops a closed tab's session after a few seconds instead of two minutes."""
    monkeypatch.setenv("STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL", str(TTL_S))
    running = Server()
    yield running
    running.stop()


def test_case4_memory_returns_after_many_reruns_with_a_large_paste(soak_server, browser):
    start, peak, after, errors = soak(browser, soak_server, reruns=30)
    assert not errors, errors
    assert after <= TARGET * start, f"start {start:.0f} MB, peak {peak:.0f} MB, after {after:.0f} MB"
