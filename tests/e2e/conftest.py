"""Browser-test harness: `streamlit run app.py` on a free port, driven by Playwright in Debian's Chromium.

Outside CI a missing Chromium skips these tests with a reason; in CI (CI=true) it fails them, so they never skip there.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from ui.elements.navigation import HOME, PageSpec

SCRIPT_STATE = "document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state')"
BASE_PATH_PROBE = re.compile(r"^http://127\.0\.0\.1:\d+/[\w-]+/_stcore/(health|host-config)$")

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path:
        return path
    message = "Debian's chromium is not installed (apt-get install -y chromium)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}: browser tests must run in CI")
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """A running `streamlit run app.py`; `url(path)` builds addresses on it."""

    def __init__(self) -> None:
        self.port = _free_port()
        command = [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.port",
            str(self.port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ]
        logs = ARTIFACTS / "server-logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.log = (logs / f"{self.port}.log").open("w")
        self.process = subprocess.Popen(command, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url("_stcore/health"), timeout=2) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("streamlit did not become healthy within 60 s")

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    executable = _chromium()
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def cold_server() -> Iterator[Server]:
    """A freshly started server per test: the first request it sees is the test's own."""
    ARTIFACTS.mkdir(exist_ok=True)
    server = Server()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """One server shared by a module's tests (warm after the first page)."""
    ARTIFACTS.mkdir(exist_ok=True)
    running = Server()
    yield running
    running.stop()


# Counts the messages the server sends (one per element drawn, plus a few per run), so a test can tell a fragment's
# rerun, which sends only the fragment's elements, from a whole page's.
COUNT_MESSAGES = """
(() => {
  const Socket = window.WebSocket;
  window.__messagesIn = 0;
  window.WebSocket = function (...args) {
    const socket = new Socket(...args);
    socket.addEventListener("message", () => { window.__messagesIn += 1; });
    return socket;
  };
  window.WebSocket.prototype = Socket.prototype;
  Object.assign(window.WebSocket, Socket);
})();
"""

DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}  # an iPhone 12-14's CSS viewport


class PageWatch:
    """A browser page that records console errors and uncaught page errors while a test drives it."""

    def __init__(self, browser: object, viewport: dict[str, int] = DESKTOP) -> None:
        self.context = browser.new_context(
            viewport=viewport, accept_downloads=True, has_touch=viewport is PHONE, is_mobile=viewport is PHONE
        )
        self.context.add_init_script(COUNT_MESSAGES)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _console(self, message: object) -> None:
        url = message.location.get("url", "")
        # Streamlit's front end finds the server's base path by probing <deep-link>/_stcore/health and host-config
        # before the root; the 404s of that probe are expected and harmless, every other error counts.
        if message.type == "error" and not BASE_PATH_PROBE.search(url):
            self.errors.append(f"{message.text} [{url}]")

    def open(self, url: str, landmark: str, timeout: float = 60_000) -> None:
        """Go to url and wait until the page shows its landmark text and Streamlit has finished running."""
        self.page.goto(url, wait_until="domcontentloaded", timeout=timeout)
        self.page.get_by_text(landmark, exact=False).first.wait_for(timeout=timeout)
        self.settle(timeout)

    def settle(self, timeout: float = 60_000) -> None:
        """Wait until the script has finished the rerun the last action asked for.

        The app root reports its script state; a rerun may take a moment to start on a busy machine, so first give
        it up to half a second to leave 'notRunning', then wait for it to come back.
        """
        with contextlib.suppress(PlaywrightTimeout):  # nothing was rerun, or it finished already
            self.page.wait_for_function(f"() => {SCRIPT_STATE} !== 'notRunning'", timeout=500)
        self.page.wait_for_function(f"() => {SCRIPT_STATE} === 'notRunning'", timeout=timeout)
        self.page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=timeout)

    def navigate(self, spec: PageSpec) -> None:
        """Go to a page through the sidebar, as a reader does, and wait until it has finished drawing."""
        self.page.get_by_test_id("stSidebarNav").get_by_role("link", name=spec.title).click()
        self.page.get_by_role("heading", name=spec.landmark).first.wait_for()
        self.settle()

    def screenshot(self, name: str) -> Path:
        """The whole page: Streamlit scrolls inside its main block, so the window grows to its height for the shot."""
        path = ARTIFACTS / f"{name}.png"
        size = self.page.viewport_size
        height = self.page.evaluate(
            "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight ?? document.body.scrollHeight"
        )
        self.page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(height, 12_000))})
        self.page.wait_for_timeout(300)  # plotly redraws charts for the new size
        self.page.screenshot(path=str(path), full_page=True)
        self.page.set_viewport_size(size)
        return path

    def messages_so_far(self) -> int:
        """How many messages the server has sent since the page was opened."""
        return self.page.evaluate("() => window.__messagesIn")

    def messages_for(self, action: Callable[[], None]) -> int:
        """How many messages the server sent for what `action` did (counted once its rerun has finished)."""
        before = self.messages_so_far()
        action()
        self.settle()
        self.page.wait_for_timeout(300)  # the run's last messages
        return self.messages_so_far() - before

    def exceptions_on_screen(self) -> int:
        return self.page.locator('[data-testid="stException"]').count()

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def warm(server: Server, watch: PageWatch) -> Server:
    """The shared server after the overview has been served once (app.py has built the navigation)."""
    watch.open(server.url(HOME.url_path), HOME.landmark)
    return server


@pytest.fixture
def watch(browser: object) -> Iterator[PageWatch]:
    page = PageWatch(browser)
    yield page
    page.close()


@pytest.fixture
def phone(browser: object) -> Iterator[PageWatch]:
    """A page in a phone-sized touch viewport (390 × 844)."""
    page = PageWatch(browser, PHONE)
    yield page
    page.close()
