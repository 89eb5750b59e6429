"""The middleware that times every request into the server's metrics, and its access log."""

from __future__ import annotations

import logging
import time
from collections.abc import Collection

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nmt.serve.observe.metrics import Metrics

log = logging.getLogger("nmt.serve")


class Timing:
    """Pure ASGI middleware: the request-duration histogram (route, status) and the optional
    access log line (method, path without the query string, which may hold an api key)."""

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: Collection[str], access_log: bool) -> None:
        self.app, self.metrics, self.routes, self.access_log = app, metrics, frozenset(routes), access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.monotonic(), [500]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            took = time.monotonic() - started
            route = scope["path"] if scope["path"] in self.routes else "other"
            self.metrics.request_seconds.labels(route, str(status[0])).observe(took)
            if self.access_log:
                log.info("%s %s %d %.1f ms", scope["method"], scope["path"], status[0], took * 1000)
