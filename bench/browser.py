"""How fast the dashboard feels in Chromium, next to trivial one-widget, one-chart Streamlit pages.

Run: .venv/bin/python -m bench.browser [rounds] [--click | --cold]. Two figures, each a median over interleaved rounds
(app page, then its trivial counterpart, in a shuffled order each round) and a ratio against the trivial page:

- click → changed chart painted: on a warm server, from the input event of each page's main control (its timeStamp,
  read in the page) to the first paint after a chart's SVG changed. Target ≤ 1.5× the trivial page with the same
  kind of widget. One control at a time: only its page and the trivial page are open while it is measured.
- cold deep link → first chart painted: a freshly started server and a freshly launched browser, from navigation
  start to the first paint of a plotly chart; on the pages without charts (overview, glossary), of the page's
  heading, against the trivial page's heading. Target ≤ 1.3× the trivial page.

The trivial pages are served from a scratch folder holding a copy of the app's `.streamlit/config.toml`, so theme,
runner and server settings are the same. Medians of interleaved rounds are the figures to trust on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from playwright.sync_api import Page, sync_playwright

from tests.e2e.conftest import CHROMIUM_FLAGS, SCRIPT_STATE
from ui.elements.navigation import GLOSSARY, HOME, PAGES, ROOT, PageSpec

COLLATERAL_TAB = "⑤ Collateral vs targeted"
CLICK_TARGET = 1.5
COLD_TARGET = 1.3
CHROMIUM = "/usr/bin/chromium"

# One widget and one heatmap fed by it; `kind` (from the address) picks the same kind of widget as the app's control.
TRIVIAL_PAGE = """\
import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="trivial", layout="wide")
st.title("Trivial page")
kind = st.query_params.get("kind", "select_slider")
if kind == "select_slider":
    value = st.select_slider("Value", options=range(1, 17), key="w")
elif kind == "radio":
    value = st.radio("Value", range(1, 17), key="w")
elif kind == "pills":
    value = len(st.pills("Value", ["a", "b", "c", "d"], selection_mode="multi", key="w") or [])
else:
    value = st.number_input("Value", 1, 10_000_000, 32768, 1024, key="w")
z = np.random.default_rng(int(value)).random((6, 6))
st.plotly_chart(go.Figure(go.Heatmap(z=z, texttemplate="%{z:.2f}")), key="chart")
"""

# Installed before any page script: records the input event's time and the first paint after a chart's SVG changed
# (a MutationObserver notices the change; a frame later, a task after that frame's paint reads the clock).
INSTRUMENT = """
(() => {
  const bench = (window.__bench = { armed: false, t0: null, t1: null, before: null, firsts: {}, sels: [] });
  const charts = '[data-testid="stMain"] .js-plotly-plot .main-svg';
  const signature = () => [...document.querySelectorAll(charts)].map((e) => e.innerHTML).join('|');
  bench.signature = signature;
  const stamp = (event) => {
    if (bench.armed && bench.t0 === null) bench.t0 = event.timeStamp;
  };
  for (const type of ['pointerdown', 'keydown']) window.addEventListener(type, stamp, true);
  const afterPaint = (done) => requestAnimationFrame(() => setTimeout(() => done(performance.now()), 0));
  new MutationObserver(() => {
    for (const sel of bench.sels) {
      if (!(sel in bench.firsts) && document.querySelector(sel)) {
        bench.firsts[sel] = 0;
        afterPaint((t) => (bench.firsts[sel] = t));
      }
    }
    if (bench.armed && bench.t0 !== null && bench.t1 === null && signature() !== bench.before) {
      bench.t1 = 0;
      afterPaint((t) => (bench.t1 = t));
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
})();
"""


@dataclass(frozen=True)
class Control:
    """A page's main control: where it starts, the trivial widget of the same kind, and one input on it."""

    spec: PageSpec
    name: str
    query: str
    kind: str
    act: Callable[[Page, int], None]  # the round number's parity picks the direction, so the state toggles


def _slider(key: str) -> Callable[[Page, int], None]:
    def act(page: Page, turn: int) -> None:
        thumb = page.locator(f".st-key-{key} input[type='range']").first
        thumb.focus()
        thumb.press("ArrowRight" if turn % 2 == 0 else "ArrowLeft")

    return act


def _radio(key: str, first: int) -> Callable[[Page, int], None]:
    def act(page: Page, turn: int) -> None:
        page.locator(f".st-key-{key} [data-testid='stRadioOption']").nth(first + turn % 2).click()

    return act


def _pill(key: str, index: int) -> Callable[[Page, int], None]:
    def act(page: Page, turn: int) -> None:
        page.locator(f".st-key-{key} button[data-variant='pills']").nth(index).click()

    return act


def _stepper(key: str) -> Callable[[Page, int], None]:
    def act(page: Page, turn: int) -> None:
        which = "stNumberInputStepUp" if turn % 2 == 0 else "stNumberInputStepDown"
        page.locator(f".st-key-{key} [data-testid='{which}']").click()

    return act


def _spec(script: str) -> PageSpec:
    return next(spec for spec in PAGES if spec.script == script)


CONTROLS = (
    Control(_spec("pages/cnn_vs_head.py"), "window slider", "", "select_slider", _slider("win")),
    Control(_spec("pages/qkv_walkthrough.py"), "step", "", "select_slider", _slider("qkv_step")),
    Control(_spec("pages/two_layer_trace.py"), "shape-table step", "", "radio", _radio("trace_step", 2)),
    Control(
        _spec("pages/how_it_learned.py"), "training step", "?learned_step=118", "select_slider", _slider("learned_step")
    ),
    # The collateral tab's chart adds the reader's head subset beside the single heads: the chart the toggle feeds.
    Control(
        _spec("pages/ablation_lab.py"), "head toggle", f"?view={quote(COLLATERAL_TAB)}", "pills", _pill("heads", 1)
    ),
    Control(_spec("pages/kv_cost.py"), "context ±", "?calculator=open", "number", _stepper("context")),
)
TRIVIAL = PageSpec("trivial.py", "trivial page", "", "", "")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve(script: Path) -> Iterator[str]:
    """`streamlit run script` on a free port, from the script's folder (so its .streamlit/config.toml applies)."""
    port = _free_port()
    command = [sys.executable, "-m", "streamlit", "run", script.name, "--server.port", str(port)]
    command += ["--server.address", "127.0.0.1", "--server.headless", "true", "--server.fileWatcherType", "none"]
    process = subprocess.Popen(command, cwd=script.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base + "_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{script.name} did not start") from None
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@contextmanager
def trivial_app() -> Iterator[Path]:
    """A scratch folder with the trivial page and a copy of the app's .streamlit/config.toml."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / ".streamlit").mkdir()
        shutil.copy(ROOT / ".streamlit" / "config.toml", Path(folder) / ".streamlit" / "config.toml")
        script = Path(folder) / "trivial.py"
        script.write_text(TRIVIAL_PAGE)
        yield script


def settle(page: Page) -> None:
    """Wait until the rerun the last input asked for has finished (script state back to notRunning)."""
    with suppress(Exception):
        page.wait_for_function(f"() => {SCRIPT_STATE} !== 'notRunning'", timeout=300)
    page.wait_for_function(f"() => {SCRIPT_STATE} === 'notRunning'", timeout=60_000)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=60_000)


def open_page(browser: object, url: str) -> Page:
    """A fresh context on url, instrumented, with its charts drawn and the script finished."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.add_init_script(INSTRUMENT)
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    page.locator("[data-testid='stMain'] .js-plotly-plot .main-svg").first.wait_for(timeout=60_000)
    settle(page)
    return page


def click_ms(page: Page, act: Callable[[Page, int], None], turn: int) -> float:
    """One input on the control: milliseconds from its event to the paint after a chart changed."""
    page.evaluate("() => Object.assign(window.__bench, {armed: true, t0: null, t1: null, before: __bench.signature()})")
    act(page, turn)
    page.wait_for_function("() => window.__bench.t1 > 0", timeout=60_000)
    t0, t1 = page.evaluate("() => [window.__bench.t0, window.__bench.t1]")
    page.evaluate("() => (window.__bench.armed = false)")
    settle(page)
    page.wait_for_timeout(150)  # let late deltas land before the next input
    return t1 - t0


def cold_ms(playwright: object, server: Path, path: str, selectors: list[str]) -> list[float]:
    """Fresh server, fresh browser: milliseconds from navigation start to the first paint of each selector."""
    with serve(server) as base:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            context.add_init_script(INSTRUMENT.replace("sels: []", f"sels: {json.dumps(selectors)}"))
            page = context.new_page()
            page.goto(base + path, wait_until="commit", timeout=60_000)
            done = "() => window.__bench && window.__bench.sels.every((s) => window.__bench.firsts[s] > 0)"
            page.wait_for_function(done, timeout=60_000)
            return page.evaluate("() => window.__bench.sels.map((s) => window.__bench.firsts[s])")
        finally:
            browser.close()


def verdict(ratio: float, target: float) -> str:
    return "PASS" if ratio <= target else "MISS"


def report(title: str, target: float, rows: list[tuple[str, list[float], list[float]]]) -> None:
    print(f"\n{title}; target ≤ {target:.1f}× the trivial page (medians of interleaved rounds)")
    print(f"{'page':<42}{'app ms':>9}{'trivial ms':>12}{'ratio':>8}  verdict")
    for label, app, trivial in rows:
        ratio = statistics.median(app) / statistics.median(trivial)
        print(
            f"{label:<42}{statistics.median(app):>9.0f}{statistics.median(trivial):>12.0f}{ratio:>7.2f}×  "
            f"{verdict(ratio, target)}"
        )


def bench_clicks(rounds: int, only: str | None = None) -> None:
    """Warm servers; one control at a time, with only its page and its trivial twin open (other open pages would
    keep the two cores busy with their own work): interleaved inputs on the two, in a shuffled order each round."""
    controls = [c for c in CONTROLS if only in (None, c.spec.url_path)]
    twin_acts = {
        "select_slider": _slider("w"),
        "radio": _radio("w", 2),
        "pills": _pill("w", 2),
        "number": _stepper("w"),
    }
    app_ms: dict[Control, list[float]] = {c: [] for c in controls}
    twin_ms: dict[Control, list[float]] = {c: [] for c in controls}
    with trivial_app() as trivial, serve(ROOT / "app.py") as app, serve(trivial) as reference, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        for control in controls:
            pair = {
                "app": (open_page(browser, f"{app}{control.spec.url_path}{control.query}"), control.act, app_ms),
                "twin": (open_page(browser, f"{reference}?kind={control.kind}"), twin_acts[control.kind], twin_ms),
            }
            for turn in range(2):  # warm-up: caches, plotly's first draw of each chart
                for page, act, _ in pair.values():
                    click_ms(page, act, turn)
            for turn in range(rounds):
                for side in random.sample(list(pair), 2):
                    page, act, times = pair[side]
                    times[control].append(click_ms(page, act, turn))
            for page, _, _ in pair.values():
                page.context.close()
        browser.close()
    rows = [(f"{c.spec.title}: {c.name}", app_ms[c], twin_ms[c]) for c in controls]
    report(f"Click → changed chart painted, {rounds} rounds", CLICK_TARGET, rows)


def bench_cold(rounds: int) -> None:
    """Every page by a deep link on a fresh server in a fresh browser, interleaved with the trivial page."""
    chart, heading = "[data-testid='stMain'] .js-plotly-plot .main-svg", "[data-testid='stMain'] h1"
    specs = [HOME, *PAGES, GLOSSARY]
    app_ms: dict[PageSpec, list[float]] = {spec: [] for spec in specs}
    twin_ms: dict[str, list[float]] = {chart: [], heading: []}
    with trivial_app() as trivial, sync_playwright() as pw:
        for _ in range(rounds):
            for spec in random.sample([*specs, TRIVIAL], len(specs) + 1):
                if spec is TRIVIAL:
                    for selector, ms in zip((chart, heading), cold_ms(pw, trivial, "", [chart, heading]), strict=True):
                        twin_ms[selector].append(ms)
                else:
                    selector = chart if spec in PAGES else heading
                    app_ms[spec].extend(cold_ms(pw, ROOT / "app.py", spec.url_path, [selector]))
    rows = [
        (
            f"{spec.title}{'' if spec in PAGES else ' (no chart: heading)'}",
            app_ms[spec],
            twin_ms[chart if spec in PAGES else heading],
        )
        for spec in specs
    ]
    report(f"Cold deep link → first chart painted, {rounds} rounds", COLD_TARGET, rows)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=int, default=0, help="rounds (default 15 clicks, 5 cold)")
    parser.add_argument("--click", action="store_true", help="only click → paint")
    parser.add_argument("--cold", action="store_true", help="only cold deep links")
    parser.add_argument("--page", help="only the click bench of this page (its address, e.g. ablation_lab)")
    args = parser.parse_args(argv)
    print(f"load average (1 min) {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if not args.cold:
        bench_clicks(args.rounds or 15, args.page)
    if not args.click:
        bench_cold(args.rounds or 5)


if __name__ == "__main__":
    main(sys.argv[1:])
