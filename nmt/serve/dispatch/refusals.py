"""Why the batcher did not translate a request's sentences: domain errors, no HTTP in them.

The batcher raises these (or hands them to a request's future); the app maps each kind to a
status and a reason counted in `/metrics` (`nmt.serve.api.routes.REFUSALS`).
"""

from __future__ import annotations


class Refused(Exception):
    """Why the batcher did not translate a request's sentences (the app maps each kind to a status)."""

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.message, self.retry_after = message, retry_after


class QueueFull(Refused):
    """The request's sentences do not fit in the queue now: retry later."""


class Draining(Refused):
    """The server is shutting down (or stopped) before translating them."""


class Stale(Refused):
    """They waited longer than the queue timeout: the server is overloaded."""


class BatchFailed(Refused):
    """The batch they were decoded in raised."""


class TooManySentences(Refused):
    """The request has more sentences than one request may (it could never fit the queue)."""


class NotServed(Refused):
    """The request names a language or a pair no loaded package translates (the router)."""
