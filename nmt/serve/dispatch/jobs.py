"""What the batcher's queue holds (`nmt.serve.dispatch.batcher`): a request's `Job`, and one `Item` per
sentence of it, each naming the package that translates it."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from nmt.serve.dispatch.served import Served
from nmt.translate.decoding import Output


@dataclass(eq=False)
class Job:
    """One request's sentences: their translations as they come, and the future the request awaits."""

    future: asyncio.Future  # per sentence in order, its Output (translations best first, confidence); or a Refused
    results: list[Output | None]
    left: int  # sentences not yet translated
    n: int = 1  # translations wanted per sentence: 1 + the alternatives asked for
    generation: int = 0  # the newest model generation that decoded any of its sentences
    closed: bool = False  # the request is gone: its sentences still queued are dropped
    started: bool = False  # a batch has taken one of its sentences: the rest wait on the request's own work

    def close(self) -> None:
        self.closed = True


@dataclass(eq=False, slots=True)
class Item:
    job: Job
    index: int  # place in its request
    text: str
    engine: Served  # the package (direction) that translates it; a batch is one engine's
    queued_at: float = field(default_factory=time.monotonic)
