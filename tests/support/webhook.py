"""A webhook receiver for the alert tests: every POSTed body's `text`, kept in `Hook.received`."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler

import pytest


class Hook(BaseHTTPRequestHandler):
    received: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        Hook.received.append(json.loads(body)["text"])
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def heard(fragment: str, wait_s: float) -> str:
    """The first webhook message containing `fragment`, waiting up to `wait_s` for the server's automation."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        found = [m for m in Hook.received if fragment in m]
        if found:
            return found[0]
        time.sleep(1)
    pytest.fail(f"no webhook message with {fragment!r} in {wait_s} s; got {Hook.received}")
