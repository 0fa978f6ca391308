"""Many readers at once: N concurrent browser sessions, each opening a page by a shared link and making 5 changes.

Run: .venv/bin/python -m bench.load [--sessions 25]. Starts its own `streamlit run app.py` on 127.0.0.1 and drives it
with Debian's Chromium (one browser, one context per session). Prints the sessions that saw an error (an exception
box, a page or console error, or a step that timed out) and the server's resident memory before, at its peak and
after. Target: no session with an app or console error (PASS/MISS); the memory is a figure to watch.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

from playwright.async_api import async_playwright

from tests.e2e.conftest import BASE_PATH_PROBE, CHROMIUM_FLAGS, SCRIPT_STATE, Server, _chromium
from ui.elements.navigation import PAGES

STEP_TIMEOUT_MS = 60_000  # every wait is bounded: a session that stalls longer counts as an error
SPEC = {spec.script: spec for spec in PAGES}

# Per page: a shared link (its own parameters) and five changes a reader makes, each a label to click.
SCENARIOS = (
    (
        "pages/cnn_vs_head.py",
        {"preset": "T", "win": "5"},
        ["Edit pixels", "pixel row 4, column 0", "pixel row 4, column 4", "pixel row 3, column 1", "Add my own filter"],
    ),
    (
        "pages/kv_cost.py",
        {"model": "llama-3.1-8b", "context": "65536"},
        ["Memory per GPU", "Users vs context", "Cost vs batch", "KV vs context", "Memory per GPU"],
    ),
    ("pages/ablation_lab.py", {"heads": "L2H1"}, ["layer 1, head 2", "layer 2, head 2", "layer 1, head 2"] * 2),
    ("pages/two_layer_trace.py", {"trace_prompt": "<BOS> the cat"}, ["is", "big", "Remove last", "Remove last", "on"]),
    (
        "pages/how_it_learned.py",
        {"learned_step": "118"},
        ["Play the training", "Pause", "② Eight siblings", "③ The rule it could not learn", "① Replay"],
    ),
    ("pages/qkv_walkthrough.py", {"qkv_section": "Read-out"}, ["Scale by √d_k", "Causal mask"] * 2 + ["Scale by √d_k"]),
)


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class PeakWatch(threading.Thread):
    """Samples a process's resident memory every 0.2 s and keeps the peak."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.running = pid, rss_mb(pid), True

    def run(self) -> None:
        while self.running:
            self.peak = max(self.peak, rss_mb(self.pid))
            time.sleep(0.2)


async def settle(page: object) -> None:
    """Wait until the app has finished the rerun the last action asked for (bounded)."""
    with contextlib.suppress(Exception):
        await page.wait_for_function(f"() => {SCRIPT_STATE} !== 'notRunning'", timeout=500)
    await page.wait_for_function(f"() => {SCRIPT_STATE} === 'notRunning'", timeout=STEP_TIMEOUT_MS)


async def click(page: object, label: str) -> None:
    """Click the control a reader would: a tick box or switch by its label, a tab, else a button, pill or option."""
    target = page.get_by_label(label, exact=True)
    tab = page.get_by_role("tab", name=label, exact=True)
    if await target.count():
        await page.locator("label").filter(has=target.first).first.click(timeout=STEP_TIMEOUT_MS)
    elif await tab.count():
        await tab.first.click(timeout=STEP_TIMEOUT_MS)
    else:
        await page.get_by_text(label, exact=True).first.click(timeout=STEP_TIMEOUT_MS)
    await settle(page)


async def session(browser: object, url: str, script: str, changes: list[str]) -> list[str]:
    """One reader: open the link, make the changes; returns what went wrong (empty = a clean session)."""
    errors: list[str] = []
    done = 0
    context = await browser.new_context(viewport={"width": 1440, "height": 900})
    page = await context.new_page()
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on(
        "console",
        lambda m: (
            errors.append(f"console: {m.text}")
            if m.type == "error" and not BASE_PATH_PROBE.search(m.location.get("url", ""))
            else None
        ),
    )
    try:
        await page.goto(url, wait_until="domcontentloaded", timeout=STEP_TIMEOUT_MS)
        await page.get_by_text(SPEC[script].landmark, exact=False).first.wait_for(timeout=STEP_TIMEOUT_MS)
        await settle(page)
        for label in changes:
            await click(page, label)
            done += 1
        if await page.locator('[data-testid="stException"]').count():
            errors.append("an exception box is on the page")
    except Exception as error:  # any failure of a session is what this bench counts
        errors.append(
            f"{type(error).__name__} after {done} of {len(changes)} changes: {str(error).splitlines()[0][:90]}"
        )
    finally:
        await context.close()
    return errors


async def run(server: Server, sessions: int) -> list[tuple[int, str, list[str]]]:
    """All sessions at once, spread over the pages' scenarios."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_FLAGS)
        jobs = []
        for index in range(sessions):
            script, link, changes = SCENARIOS[index % len(SCENARIOS)]
            url = server.url(f"{SPEC[script].url_path}?{urlencode(link)}")
            jobs.append(session(browser, url, script, changes))
        results = await asyncio.gather(*jobs)
        await browser.close()
    return [(i, SCENARIOS[i % len(SCENARIOS)][0], errors) for i, errors in enumerate(results)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=25, help="concurrent browser sessions (default 25)")
    sessions = max(1, parser.parse_args().sessions)
    server = Server()  # 127.0.0.1 only, on a free port
    try:
        time.sleep(1)
        before = rss_mb(server.process.pid)
        watch = PeakWatch(server.process.pid)
        watch.start()
        start = time.perf_counter()
        results = asyncio.run(run(server, sessions))
        seconds = time.perf_counter() - start
        time.sleep(5)  # let the server drop the closed sessions
        watch.running = False
        after = rss_mb(server.process.pid)
    finally:
        server.stop()
    failed = [(index, script, errors) for index, script, errors in results if errors]
    app_errors = [f for f in failed if any(not e.startswith("TimeoutError") for e in f[2])]
    print(f"{sessions} concurrent sessions, 5 changes each, {seconds:.0f} s")
    print(
        f"sessions with errors: {len(failed)} of {sessions} ({len(app_errors)} with an app or console error, the rest"
    )
    print(
        f"  only a step that waited more than {STEP_TIMEOUT_MS / 1000:.0f} s: a browser or server too busy to answer)"
    )
    for index, script, errors in failed:
        print(f"  session {index} ({script}): {'; '.join(errors[:3])}")
    print(f"server RSS: before {before:.0f} MB, peak {max(watch.peak, after):.0f} MB, after {after:.0f} MB")
    print(f"target: no session with an app or console error: {'MISS' if app_errors else 'PASS'}")


if __name__ == "__main__":
    main()
