"""Server-side run time of every page script (Streamlit AppTest, warm) next to an empty page, as a ratio.

Run: .venv/bin/python -m bench.pages [rounds]. Every page and the empty page run once per round, in a shuffled order.
Targets: median ≤ 100 ms and ≤ 4× the empty page.

A server compiles each page once and keeps its bytecode for every later run (the Runtime's one ScriptCache); AppTest
makes a new cache, so a new compile, on every run. The bench hands every run the same cache, as the server does, and
prints the compile it leaves out beside each page.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from streamlit import logger as streamlit_logger
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest, local_script_runner

from ui.elements.navigation import GLOSSARY, HOME, PAGES, ROOT

EMPTY_PAGE = 'import streamlit as st\nst.write("empty page")\n'
TARGET_MS = 100.0
TARGET_RATIO = 4.0


SERVER_CACHE = ScriptCache()


def serve_from_one_cache() -> None:
    """Make every AppTest run read its page's bytecode from one cache, as a warm server's runs do."""
    local_script_runner.ScriptCache = lambda: SERVER_CACHE


def compile_ms(script: Path, repeats: int = 20) -> float:
    """What one run of an AppTest pays to compile the page (a new cache each time), in milliseconds."""
    start = time.perf_counter()
    for _ in range(repeats):
        ScriptCache().get_bytecode(str(script))
    return (time.perf_counter() - start) * 1000 / repeats


def warm_app(script: Path) -> AppTest:
    """An AppTest of a script after two runs (imports and caches loaded)."""
    app = AppTest.from_file(str(script), default_timeout=60)
    app.run()
    app.run()
    return app


def run_ms(app: AppTest) -> float:
    """Wall time of one AppTest.run(), in milliseconds; a page that raises stops the bench."""
    start = time.perf_counter()
    app.run()
    elapsed = (time.perf_counter() - start) * 1000
    if app.exception:
        raise RuntimeError(f"raised: {app.exception[0].message}")
    return elapsed


def main(repeats: int = 20) -> None:
    sys.path.insert(0, str(ROOT))
    streamlit_logger.set_log_level("error")  # AppTest's "missing ScriptRunContext" chatter
    specs = [HOME, *PAGES, GLOSSARY]
    serve_from_one_cache()
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder) / "empty.py"
        empty.write_text(EMPTY_PAGE)
        # The overview links to pages by paths relative to the entry point, so it runs through app.py.
        apps = {None: warm_app(empty)} | {s: warm_app(ROOT / "app.py" if s is HOME else s.path) for s in specs}
        times: dict[object, list[float]] = {key: [] for key in apps}
        for _ in range(repeats):  # interleaved rounds: load from other processes falls on every page alike
            for key in random.sample(list(apps), len(apps)):
                times[key].append(run_ms(apps[key]))
        compiles = {None: compile_ms(empty)} | {spec: compile_ms(spec.path) for spec in specs}
    baseline = statistics.median(times[None])
    print(
        f"targets: median ≤ {TARGET_MS:.0f} ms and ≤ {TARGET_RATIO:.0f}× the empty page ({repeats} interleaved rounds)"
    )
    print(f"{'page':<28}{'median ms':>10}{'× empty':>9}  verdict  (compile per AppTest run, left out)")
    print(f"{'(empty page)':<28}{baseline:>10.1f}{1.0:>9.1f}        {compiles[None]:.2f} ms")
    for spec in specs:
        ms = statistics.median(times[spec])
        passed = ms <= TARGET_MS and ms / baseline <= TARGET_RATIO
        verdict = "PASS" if passed else "MISS"
        print(f"{spec.title:<28}{ms:>10.1f}{ms / baseline:>9.1f}  {verdict}     {compiles[spec]:.2f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
