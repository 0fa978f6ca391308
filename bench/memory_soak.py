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
import os
import time
from urllib.parse import urlencode

from bench.load import PeakWatch, rss_mb
from core.plan.fields import field
from tests.e2e.conftest import PageWatch, Server
from ui.elements.navigation import PAGES

KV = next(spec for spec in PAGES if spec.url_path == "kv_cost")
SECTION = "Latency under load"
TARGET = 1.2
TTL_S = 3  # seconds a closed tab's session is kept by the soaked server
SETTLE_S = TTL_S + 7  # the server has dropped a closed tab's session and its widget values


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


def soak(browser: object, server: Server, count: int) -> tuple[float, float, float, list[str]]:
    """Start, peak and final resident memory of the server (MB) around one tab typing `count` values."""
    top = int(field("answer").high)
    visit(browser, server, [top - 1000, top - 1001])  # every module loaded: the start is steady
    time.sleep(SETTLE_S)
    start = rss_mb(server.process.pid)
    peak = PeakWatch(server.process.pid)
    peak.start()
    errors = visit(browser, server, [top - k for k in range(count)])
    time.sleep(SETTLE_S)
    peak.running = False
    return start, max(peak.peak, rss_mb(server.process.pid)), rss_mb(server.process.pid), errors


def main() -> None:
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM_FLAGS, _chromium

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=50, help="answers typed one after another (default 50)")
    count = max(2, parser.parse_args().values)
    os.environ["STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL"] = str(TTL_S)
    server = Server()
    started = time.perf_counter()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_FLAGS)
            start, peak, after, errors = soak(browser, server, count)
            browser.close()
    except Exception as why:  # a bench that cannot measure says so, with the reason
        print(f"target: after ≤ {TARGET:.1f}× start and no error: MISS (could not measure: {why!s:.300})")
        return
    finally:
        server.stop()
    seconds = time.perf_counter() - started
    print(f"{SECTION}: {count} answers typed one after another, from {int(field('answer').high):,} tokens down")
    print(f"server RSS: start {start:.0f} MB, peak {peak:.0f} MB, after {after:.0f} MB ({after / start:.2f}× start)")
    print(f"{seconds:.0f} s in all; errors: {errors or 'none'}")
    verdict = "PASS" if after <= TARGET * start and not errors else "MISS"
    print(f"target: after ≤ {TARGET:.1f}× start and no error: {verdict}")


if __name__ == "__main__":
    main()
