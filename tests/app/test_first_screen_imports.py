"""Every page's first screen loads only what it shows: in a fresh interpreter, opening a page at its default state
imports neither torch (the app never does; Community Cloud stays light) nor pandas and pyarrow (a third of a second
of a cold start, needed only by tables drawn later)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ui.elements.navigation import GLOSSARY, PAGES, ROOT

OPEN_AND_LIST = """
import json, sys
sys.path.insert(0, {root!r})
from streamlit import logger
logger.set_log_level("critical")
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({script!r}, default_timeout=60)
at.run()
loaded = [name for name in ("torch", "pandas", "pyarrow") if name in sys.modules]
print(json.dumps({{"raised": bool(at.exception), "loaded": loaded}}))
"""


@pytest.mark.parametrize("script", ["app.py", *(spec.script for spec in (*PAGES, GLOSSARY))])
def test_a_first_screen_imports_no_torch_pandas_or_pyarrow(script):
    code = OPEN_AND_LIST.format(root=str(ROOT), script=str(ROOT / script))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"raised": False, "loaded": []}, (report, done.stderr[-2000:])
