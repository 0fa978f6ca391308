"""The config paste box under a long session: many reruns with a large valid paste, then the server's memory.

Run: .venv/bin/python -m bench.paste_soak [--reruns 300]. Starts its own `streamlit run app.py` on 127.0.0.1, opens the
cost page in Debian's Chromium, pastes a valid config.json padded to just under the box's 1,000,000 characters, steps
the context up and down `--reruns` times while the box holds it (each run re-sends the pasted text with every widget's
value), uses it (which empties the box), steps the context `--reruns` times more on the model it made,
closes the tab and waits for the server to drop the session (its server drops a closed tab's session after `TTL_S`
seconds instead of Streamlit's 120, through STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL). Prints the server's
resident memory at the start (after a first visit that pastes the same config unpadded and steps the context, so every
module is loaded and every cache the visit fills is full), at its peak and after. Target: after ≤ 1.10 × start
(PASS/MISS).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from urllib.parse import urlencode

from bench.soak import measure, report, soaked
from core.plan.model_config import MAX_CONFIG_BYTES
from tests.e2e.conftest import PageWatch, Server
from ui.elements.navigation import PAGES

ROOT = Path(__file__).resolve().parents[1]
KV = next(spec for spec in PAGES if spec.url_path == "kv_cost")
CONFIG = json.loads((ROOT / "tests" / "data" / "good_configs" / "qwen2_7b_text.json").read_text())
TARGET = 1.10


def large_paste(large: bool = True) -> str:
    """A valid config.json, padded with a note to 1,000 characters under the box's limit when `large`."""
    padding = MAX_CONFIG_BYTES - 1000 - len(json.dumps(CONFIG | {"notes": ""})) if large else 0
    return json.dumps(CONFIG | {"notes": "x" * padding})


def visit(browser: object, server: Server, reruns: int, large: bool) -> list[str]:
    """One tab on the cost page: paste and use the config (padded when `large`), then `reruns` context steps; returns
    the page's errors."""
    watch = PageWatch(browser)
    try:
        watch.open(server.url(f"{KV.url_path}?{urlencode({'context': 32768})}"), KV.landmark)
        watch.page.get_by_text("Your own model", exact=False).first.click()
        watch.settle()
        box = watch.page.get_by_label("…or paste its contents", exact=False)
        box.fill(large_paste(large))
        box.press("Control+Enter")  # commits the text area's value
        watch.settle()
        steps = [
            watch.page.get_by_test_id("stNumberInputStepUp").first,
            watch.page.get_by_test_id("stNumberInputStepDown").first,
        ]
        for index in range(reruns):  # the browser re-sends the pasted text with every run while the box holds it
            steps[index % 2].click()
            watch.settle()
        watch.page.get_by_role("button", name="Use pasted config").click()
        watch.settle()
        if "qwen2" not in watch.page.get_by_role("heading", level=3).first.inner_text():
            return ["the pasted config was not used"]
        for index in range(reruns):  # and the model it made, with the box emptied
            steps[index % 2].click()
            watch.settle()
        shown = watch.exceptions_on_screen()
        return watch.errors + ([f"{shown} exception boxes"] if shown else [])
    finally:
        watch.close()


def soak(browser: object, server: Server, reruns: int) -> tuple[float, float, float, list[str]]:
    """Start, peak and final resident memory of the server (MB) around one soaked tab, and the tab's errors."""
    return measure(
        server, lambda: visit(browser, server, 2, large=False), lambda: visit(browser, server, reruns, large=True)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=300, help="context steps with the paste held (default 300)")
    reruns = max(1, parser.parse_args().reruns)
    figures = soaked(lambda browser, server: soak(browser, server, reruns))
    if figures is not None:
        held = f"{reruns} reruns with a {len(large_paste()):,}-character valid paste held in the session"
        report(held, figures, TARGET)


if __name__ == "__main__":
    main()
