"""Fixtures of the server tests: `start` makes servers on the test package with other settings."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.serve import ThreadServer, config


@pytest.fixture
def start(package: Path) -> Iterator[Callable[..., ThreadServer]]:
    """Servers with other settings, each stopped at the end of the test."""
    started: list[ThreadServer] = []

    def make(**overrides) -> ThreadServer:
        started.append(ThreadServer(config(package, **overrides)))
        return started[-1]

    yield make
    for s in started:
        s.close()
