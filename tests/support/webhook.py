"""A webhook receiver for the alert tests: every POSTed body's `text`, kept in `Hook.received`."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler


class Hook(BaseHTTPRequestHandler):
    received: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        Hook.received.append(json.loads(body)["text"])
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass
