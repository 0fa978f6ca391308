"""What the memory soaks share: a server whose closed tabs' sessions are dropped after TTL_S seconds, a browser on it,
and the server's resident memory before, at the peak of and after one soaked visit."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from bench.load import PeakWatch, rss_mb
from tests.e2e.conftest import Server

TTL_S = 3  # seconds a closed tab's session is kept by the soaked server
SETTLE_S = TTL_S + 7  # the server has dropped a closed tab's session and its widget values


def measure(server: Server, warm: Callable[[], object], soaked: Callable[[], list[str]]):
    """Start, peak and final resident memory of the server (MB) around `soaked` (a visit returning its errors), the
    start taken after `warm` (the same visit, small: every module loaded, every cache it fills full)."""
    warm()
    time.sleep(SETTLE_S)
    start = rss_mb(server.process.pid)
    peak = PeakWatch(server.process.pid)
    peak.start()
    errors = soaked()
    time.sleep(SETTLE_S)
    peak.running = False
    after = rss_mb(server.process.pid)
    return start, max(peak.peak, after), after, errors


def soaked(body: Callable[[object, Server], tuple[float, float, float, list[str]]]):
    """Run `body(browser, server)` on a fresh soak server and Debian's Chromium; None (with the reason printed as a
    MISS) when it could not measure."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM_FLAGS, _chromium

    os.environ["STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL"] = str(TTL_S)
    server = Server()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_FLAGS)
            figures = body(browser, server)
            browser.close()
            return figures
    except Exception as why:  # a bench that cannot measure says so, with the reason
        print(f"MISS (could not measure: {why!s:.300})")
        return None
    finally:
        server.stop()


def report(what: str, figures: tuple[float, float, float, list[str]], target: float) -> None:
    """The soak's figures and its verdict: after ≤ target × start and no error on the page (PASS/MISS)."""
    start, peak, after, errors = figures
    print(what)
    print(f"server RSS: start {start:.0f} MB, peak {peak:.0f} MB, after {after:.0f} MB ({after / start:.2f}× start)")
    print(f"errors: {errors or 'none'}")
    verdict = "PASS" if after <= target * start and not errors else "MISS"
    print(f"target: after ≤ {target:.2f}× start and no error: {verdict}")
