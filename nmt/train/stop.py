"""Stopping a training run cleanly: SIGTERM or Ctrl-C end it after the current update."""

from __future__ import annotations

import logging
import signal
from typing import Any, Self

log = logging.getLogger(__name__)


class GracefulStop:
    """SIGTERM / first Ctrl-C set a flag the loop checks after each update; a second Ctrl-C aborts."""

    def __init__(self) -> None:
        self.requested = False
        self._old: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.requested = True
        log.warning("received %s: finishing this update, then checkpointing", signal.Signals(signum).name)

    def __enter__(self) -> Self:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
