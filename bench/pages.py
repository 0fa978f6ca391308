"""Server-side run time of every page script (Streamlit AppTest, warm) next to an empty page, as a ratio.

Run: .venv/bin/python -m bench.pages [repeats]. Targets: median ≤ 100 ms and ≤ 4× the empty page.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from streamlit import logger as streamlit_logger
from streamlit.testing.v1 import AppTest

from ui.navigation import GLOSSARY, HOME, PAGES, ROOT

EMPTY_PAGE = 'import streamlit as st\nst.write("empty page")\n'
TARGET_MS = 100.0
TARGET_RATIO = 4.0


def median_run_ms(script: Path, repeats: int) -> float:
    """Median wall time of AppTest.run() for a script after two warm-up runs (imports and caches loaded)."""
    app = AppTest.from_file(str(script), default_timeout=60)
    app.run()
    app.run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        app.run()
        times.append((time.perf_counter() - start) * 1000)
        if app.exception:
            raise RuntimeError(f"{script.name} raised: {app.exception[0].message}")
    return statistics.median(times)


def main(repeats: int = 20) -> None:
    sys.path.insert(0, str(ROOT))
    streamlit_logger.set_log_level("error")  # AppTest's "missing ScriptRunContext" chatter
    with tempfile.TemporaryDirectory() as folder:
        empty = Path(folder) / "empty.py"
        empty.write_text(EMPTY_PAGE)
        baseline = median_run_ms(empty, repeats)
    print(f"targets: median ≤ {TARGET_MS:.0f} ms and ≤ {TARGET_RATIO:.0f}× the empty page")
    print(f"{'page':<28}{'median ms':>10}{'× empty':>9}  verdict")
    print(f"{'(empty page)':<28}{baseline:>10.1f}{1.0:>9.1f}")
    for spec in [HOME, *PAGES, GLOSSARY]:
        # The overview links to pages by paths relative to the entry point, so it runs through app.py.
        ms = median_run_ms(ROOT / "app.py" if spec is HOME else spec.path, repeats)
        passed = ms <= TARGET_MS and ms / baseline <= TARGET_RATIO
        print(f"{spec.title:<28}{ms:>10.1f}{ms / baseline:>9.1f}  {'PASS' if passed else 'MISS'}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
