"""Fixtures of the app tests: the cost page opened at its defaults, and with its Workload and bill section open."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.kv_cost_page import PAGE, open_section
from ui.kv_cost.settings import CALCULATOR_OPEN_KEY


@pytest.fixture
def at() -> AppTest:
    """The cost page at its defaults with the memory calculator open (it is closed until the reader opens it)."""
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.session_state[CALCULATOR_OPEN_KEY] = True
    app.run()
    assert not app.exception
    return app


@pytest.fixture
def work(at: AppTest) -> AppTest:
    """The default page with the planner's Workload and bill section open."""
    return open_section(at, "Workload and bill")
