"""What the server's routes share: the config, the packages (`Router`), the batcher, the metrics,
the keys, the traffic watch; readiness and draining; reloading one package or all.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nmt.errors import NmtError
from nmt.serve.api.filestore import FileStore
from nmt.serve.api.limits import KeyCheck
from nmt.serve.api.options import ServeConfig
from nmt.serve.api.watch import Watch
from nmt.serve.dispatch.batcher import Batcher
from nmt.serve.dispatch.jobs import Job
from nmt.serve.dispatch.refusals import Draining, Refused
from nmt.serve.dispatch.router import Router
from nmt.serve.dispatch.served import ReloadBusy
from nmt.serve.observe.metrics import Metrics
from nmt.text.sentences import Splitters
from nmt.translate.glossary import Glossary

log = logging.getLogger("nmt.serve")


def settle_heap() -> None:
    """What was loaded (sessions, vocabularies, caches) collected once and frozen out of the cycle
    collector's full passes: a full pass that a large document's objects set off while it is parsed then
    walks the request's objects only, holding the GIL (and every other request, /livez's too) that much
    less. Called once the models are loaded (`nmt.serve.api.server.serve`) and after each reload."""
    gc.collect()
    gc.freeze()


@dataclass
class ServeState:
    """Everything the routes share. `ready`: warmed up and not draining; `in_flight`: admitted
    translate requests not yet answered (the drain waits for them); `given_up`: set once the drain's
    deadline passed, what the admitted requests not yet queued get instead (`check_admitted`)."""

    config: ServeConfig
    router: Router
    batcher: Batcher
    metrics: Metrics
    keys: KeyCheck
    watch: Watch  # what each direction is asked: /metrics, --stats-dir, --sample-inputs
    files: FileStore  # translated files waiting for /download_file
    glossaries: dict[str, Glossary] = field(default_factory=dict)  # --glossary, by direction
    text_pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, "nmt-text"))
    # tag pairs put back by alignment (model passes): apart from the text thread, so a long HTML page
    # never holds up the sentence splitting of the requests behind it
    align_pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, "nmt-align"))
    # uploaded documents read and written apart from the text thread too, so a large file never holds
    # up the plain requests behind it (each reader is linear in its input and bounded: nmt.translate.markup.formats)
    doc_pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, "nmt-docs"))
    ready: bool = False
    draining: bool = False
    in_flight: int = 0
    jobs: set[Job] = field(default_factory=set)  # the admitted requests' jobs, until answered
    given_up: Refused | None = None
    split: Splitters = field(default_factory=Splitters)  # on the text threads: texts cut into sentences

    @contextmanager
    def admitted(self) -> Iterator[None]:
        """On the loop, around a translate request from its arrival to its answer: refused (503) when it
        arrives during a drain, else counted in `in_flight`, so the drain waits for it however long it is
        still read, parsed or cut into sentences (the batcher takes its sentences: `check_admitted`)."""
        if self.draining:
            raise Draining("the server is shutting down; send the request to another instance", retry_after=1)
        self.in_flight += 1
        self.metrics.in_flight.set(self.in_flight)
        try:
            yield
        finally:
            self.in_flight -= 1
            self.metrics.in_flight.set(self.in_flight)

    def check_admitted(self) -> None:
        """Before an admitted request's sentences are queued (the batcher takes them, draining or not):
        once the drain's deadline passed (`fail_admitted`), raise its error instead."""
        if self.given_up is not None:
            raise self.given_up

    def fail_admitted(self, error: Refused) -> int:
        """On the loop: every admitted request not yet translated gets `error` now (its queued
        sentences are dropped), and those whose sentences are not queued yet get it when they would
        be (`check_admitted`); returns how many had sentences queued."""
        self.given_up, failed = error, 0
        for job in list(self.jobs):
            if not job.future.done():
                job.close()
                job.future.set_exception(error)
                failed += 1
        return failed

    def publish_models(self) -> None:
        """Every served model's description in /metrics (`nmt_serve_model_info`)."""
        for model in self.router.models():
            self.metrics.set_model(model.describe())

    def begin_drain(self) -> None:
        """Refuse new work and say not ready; what was admitted goes on."""
        if not self.draining:
            log.info("draining: %d requests in flight, %d sentences queued", self.in_flight, len(self.batcher.queue))
        self.draining = self.batcher.draining = True
        self.ready = False

    async def reload(self, path: Path | None) -> list[dict[str, Any]]:
        """Load and switch to `path` (the package of its card's direction), or every served folder
        again (None), off the loop; `NmtError` if refused (the packages not yet switched keep serving)."""
        loop = asyncio.get_running_loop()
        described = []
        try:
            for engine in self.router.reload_targets(path):
                model = await loop.run_in_executor(None, engine.reload, path)
                described.append(model.describe())
                self.metrics.set_model(described[-1])
        except ReloadBusy:
            raise
        except NmtError as exc:
            self.metrics.reloads.labels("refused").inc()
            log.error("reload refused, still serving %s: %s", ", ".join(str(m.path) for m in self.router.models()), exc)
            raise
        self.metrics.reloads.labels("ok").inc()
        await loop.run_in_executor(None, settle_heap)
        return described
