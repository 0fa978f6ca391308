"""One reader steps a field of the heaviest section through many values: the server's memory before and after.

Run: .venv/bin/python -m bench.memory_soak [--values 50]. Starts its own `streamlit run app.py` on 127.0.0.1, opens the
cost page's Latency under load (every value a new set of simulations: the copies under load and the latency curve) at
the answer field's maximum, then types `--values` answers one after another (100,000, 99,999, … tokens: the longest
requests the page takes), waiting for each run to finish, closes the tab and waits for the server to drop the session.
Prints the server's resident memory at the start (after a first visit that opens the same section at two values, so
every module is loaded), at its peak and after. Target: after ≤ 1.2 × start, and no error on the page (PASS/MISS).
"""

from __future__ import annotations

import argparse
import time
from urllib.parse import urlencode

from bench.soak import measure, report, soaked
from core.plan.fields import field
from tests.e2e.conftest import PageWatch, Server
from ui.elements.navigation import PAGES

KV = next(spec for spec in PAGES if spec.url_path == "kv_cost")
SECTION = "Latency under load"
TARGET = 1.2


def visit(browser: object, server: Server, values: list[int]) -> list[str]:
    """One tab on Latency under load, the answer field typed through `values`; returns the page's errors."""
    watch = PageWatch(browser)
    try:
        query = urlencode({"kv_section": SECTION, "answer": values[0]})
        watch.open(server.url(f"{KV.url_path}?{query}"), KV.landmark, timeout=120_000)
        box = watch.page.get_by_role("spinbutton", name=field("answer").label).first
        for value in values[1:]:
            box.fill(str(value))
            box.press("Enter")
            watch.settle(timeout=120_000)
        shown = watch.exceptions_on_screen()
        return watch.errors + ([f"{shown} exception boxes"] if shown else [])
    finally:
        watch.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=50, help="answers typed one after another (default 50)")
    count = max(2, parser.parse_args().values)
    top = int(field("answer").high)
    started = time.perf_counter()
    figures = soaked(
        lambda browser, server: measure(
            server,
            lambda: visit(browser, server, [top - 1000, top - 1001]),
            lambda: visit(browser, server, [top - k for k in range(count)]),
        )
    )
    if figures is not None:
        seconds = time.perf_counter() - started
        report(
            f"{SECTION}: {count} answers typed one after another from {top:,} tokens down, {seconds:.0f} s",
            figures,
            TARGET,
        )


if __name__ == "__main__":
    main()
