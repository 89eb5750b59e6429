"""Connections that never finish a request head are closed (slowloris).

uvicorn has no timeout on receiving a request's line and headers: its keep-alive timer runs only
between requests and every received byte resets it, and a connection that sends nothing is never
timed out at all, so a few hundred held sockets fill `--max-connections` and every other client
gets 503 for as long as they are held. ASGI middleware cannot help: it runs after the head has
been parsed. `HeadDeadlineProtocol` is uvicorn's h11 protocol with one more timer: from the
moment a connection opens, and again after each response, the next request's head must arrive
complete within `--header-timeout` seconds, else the connection is closed. The body has its own
limit (`--body-timeout`, 408); an idle kept-alive connection is closed after `--idle-timeout`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)


class HeadDeadlineProtocol(H11Protocol):
    """H11Protocol whose request heads must arrive within `head_timeout_s` (set by `with_deadline`)."""

    head_timeout_s: float = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._head_deadline: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:  # a whole head arrived: its body has --body-timeout
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm()  # the next request's head, on a kept-alive connection

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_deadline = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _disarm(self) -> None:
        if (deadline := getattr(self, "_head_deadline", None)) is not None:
            deadline.cancel()
            self._head_deadline = None

    def _head_timed_out(self) -> None:
        self._head_deadline = None
        if self.transport.is_closing():
            return
        log.info("closed a connection from %s: no complete request head within --header-timeout (%g s)",
                 "{}:{:d}".format(*self.client) if self.client else "?", self.head_timeout_s)
        self.transport.close()


def with_deadline(head_timeout_s: float) -> type[HeadDeadlineProtocol]:
    """The protocol class uvicorn.Config(http=...) takes, with this head deadline."""
    attrs: dict[str, Any] = {"head_timeout_s": head_timeout_s}
    return type("HeadDeadlineProtocol", (HeadDeadlineProtocol,), attrs)
