"""Headless Chromium (Debian's `chromium` package) driven over the DevTools protocol, as a person uses a page:
type, click, read, screenshot. bench/js_consumer.py times the in-browser translator with it; the tests' own
wrapper (tests/support/browser.py) adds skipping when no browser is installed.

`Browser(profile, executable)` starts it on a free port of 127.0.0.1 with a private profile and stops it by
its process id; `Page.evaluate` runs JavaScript, `Page.click` sends real mouse events to an element's centre,
`Page.type` inserts text as a keyboard would. `static_site(folder)` serves a folder as a plain static host
does (the in-browser translator has no server code). Both children die with the process that started them.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path
from typing import Any

import httpx

from tools.gpu.children import die_with_parent

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


class PageError(AssertionError):
    """The browser or the page did not do what was asked (an AssertionError, so a test reports it as one)."""


def check(ok: object, message: str) -> None:
    if not ok:
        raise PageError(message)


def find_chromium() -> str | None:
    """NMT_CHROMIUM, else the first of chromium, chromium-browser, google-chrome on PATH; None when none is."""
    return os.environ.get("NMT_CHROMIUM") or next(
        (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@contextmanager
def static_site(folder: Path) -> Iterator[str]:
    """`folder` served by `python -m http.server` on a free port of 127.0.0.1; its base URL, once it listens."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(folder)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
    try:
        deadline = time.monotonic() + 30
        while True:
            check(proc.poll() is None, f"the static file server of {folder} exited")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                check(time.monotonic() < deadline, f"the static file server of {folder} did not listen within 30 s")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


class Page:
    """One tab, over its DevTools websocket."""

    def __init__(self, ws_url: str) -> None:
        from websockets.sync.client import connect

        self.ws = connect(ws_url, max_size=None, open_timeout=30)
        self.ids = count(1)

    def call(self, method: str, timeout_s: float = 30, **params: Any) -> dict[str, Any]:
        n = next(self.ids)
        self.ws.send(json.dumps({"id": n, "method": method, "params": params}))
        deadline = time.monotonic() + timeout_s
        while True:  # events arrive between the answers; skip them
            message = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            if message.get("id") == n:
                check("error" not in message, f"{method}: {message.get('error')}")
                return message["result"]

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        check("exceptionDetails" not in result, str(result.get("exceptionDetails")))
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float = 60) -> Any:
        """Until `expression` is truthy; its value."""
        deadline = time.monotonic() + timeout_s
        while not (value := self.evaluate(expression)):
            check(time.monotonic() < deadline, f"not true within {timeout_s} s: {expression}")
            time.sleep(0.05)
        return value

    def goto(self, url: str) -> None:
        """Navigate and wait for the page to load; a failed navigation (nothing listening) fails at once."""
        result = self.call("Page.navigate", url=url)
        check("errorText" not in result, f"{url}: {result.get('errorText')}")
        self.wait_for(f"location.href.startsWith({json.dumps(url)}) && document.readyState === 'complete'")

    def click(self, selector: str) -> None:
        box = self.evaluate(f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
                            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def type(self, selector: str, text: str) -> None:
        """Focus the field, select what it holds, and type `text` over it."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).select()")
        self.call("Input.insertText", text=text)

    def screenshot(self, path: Path) -> Path:
        """A PNG of the viewport at `path`, written whole (a temporary file renamed into place)."""
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))
        tmp.replace(path)
        return path


class Browser:
    """Headless Chromium with remote debugging on a free port of 127.0.0.1."""

    def __init__(self, profile: Path, executable: str) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen([executable, *FLAGS, f"--user-data-dir={profile}",
                                      f"--remote-debugging-port={self.port}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
        try:
            self.page = self._connect()
        except BaseException:  # a browser that did not come up is stopped, not left behind
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise

    def _connect(self) -> Page:
        deadline = time.monotonic() + 60
        while True:
            check(self.proc.poll() is None, "chromium exited")
            try:
                targets = httpx.get(f"http://127.0.0.1:{self.port}/json/list", timeout=5).json()
                pages = [t for t in targets if t.get("type") == "page"]
                if pages:
                    page = Page(pages[0]["webSocketDebuggerUrl"])
                    page.call("Page.enable")
                    return page
            except httpx.TransportError:
                pass
            check(time.monotonic() < deadline, "chromium's DevTools endpoint did not come up")
            time.sleep(0.1)

    def close(self) -> None:
        try:
            self.page.ws.close()
        except Exception:  # the browser may be gone already
            pass
        stop(self.proc)
