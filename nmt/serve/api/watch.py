"""The server watching its traffic: what feeds `nmt.translate.traffic`'s aggregates and the
`nmt_serve_traffic_*` series, the snapshots of `--stats-dir`, and the opt-in input samples.

`Watch.record` runs on the inference threads with each batch's outputs (source pieces, <unk>
pieces, confidence) and how many sentences the loop guard changed; `Watch.aside` counts the
languages `source: auto` already detected, and detects the language of a sample of the other
requests (`--detect-sample`) and offers the texts to the input sampler (`--sample-inputs`), both
on the text thread, off the event loop. With `--stats-dir`, a task on
the loop writes a snapshot every `--stats-interval` (the file written on a worker thread) and
`stop()` writes the last one at shutdown, after the drain.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Sequence
from concurrent.futures import Executor
from pathlib import Path

from nmt.errors import DataError
from nmt.serve.api.options import ServeConfig
from nmt.serve.dispatch.router import Detected, Router
from nmt.serve.dispatch.served import Served
from nmt.serve.observe.metrics import Metrics
from nmt.serve.observe.samples import InputSampler
from nmt.translate.decoding import Output
from nmt.translate.traffic import Record, Traffic, write_snapshot

log = logging.getLogger("nmt.serve")
DETECT_SEED = 0  # the sample of requests whose language is detected: the same requests in the same order alike
SAMPLE_SEED = 0  # the same for the sampled texts


def _by_direction(values: Sequence[str], engines: Sequence[Served]) -> dict[str, list[str]]:
    """Value i (a text, or its language) grouped under the direction of `engines[i]`."""
    out: dict[str, list[str]] = {}
    for value, engine in zip(values, engines):
        out.setdefault(engine.current.direction, []).append(value)
    return out


class Watch:
    """The traffic aggregates of every served direction, and where they go."""

    def __init__(self, config: ServeConfig, router: Router, metrics: Metrics) -> None:
        self.config, self.router, self.metrics = config, router, metrics
        self.traffic = Traffic({d: e.current.languages[0] for d, e in router.engines.items()})
        for direction in self.traffic.sources:
            metrics.add_direction(direction)
        self._detect_rng = random.Random(DETECT_SEED)
        self.sampler = None if not config.sample_inputs or config.sample_dir is None else InputSampler(
            config.sample_dir, config.sample_inputs, int(config.sample_max_mb * 1_000_000), config.sample_max_days,
            SAMPLE_SEED)
        if config.stats_dir is not None:
            try:
                Path(config.stats_dir).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise DataError(f"--stats-dir {config.stats_dir}: cannot create it ({exc.strerror or exc})") from None
        self._task: asyncio.Task | None = None

    # --- the counts ------------------------------------------------------------------------------

    def record(self, direction: str, outputs: Sequence[Output], guarded: int) -> None:
        """On an inference thread: a decoded batch of `direction`."""
        records = [Record(o.pieces, o.unknown, o.confidence) for o in outputs]
        self.traffic.add(direction, records, guarded)
        self.metrics.observe_traffic(direction, records, guarded)

    def detected(self, direction: str, languages: Sequence[str]) -> None:
        """Texts sent to `direction` detected as `languages` (any thread)."""
        self.traffic.detected(direction, languages)
        self.metrics.observe_languages(direction, languages, self.traffic.sources[direction])

    def aside(self, pool: Executor, texts: Sequence[str], engines: Sequence[Served],
              found: Sequence[Detected] | None) -> asyncio.Future | None:
        """On the loop, for an admitted request (text i for `engines[i]`): the languages `source:
        auto` detected (`found`) counted by direction; otherwise, when the request is in the
        --detect-sample, its texts' language detected and counted on `pool` (the text thread), where
        its texts are also offered to --sample-inputs. The future of that work; None when none."""
        if found is not None:
            for direction, languages in _by_direction([d.language for d in found], engines).items():
                self.detected(direction, languages)
        rate = self.config.detect_sample
        detect = found is None and rate > 0 and self._detect_rng.random() < rate
        if not detect and self.sampler is None:
            return None
        return asyncio.get_running_loop().run_in_executor(pool, self._aside, list(texts), list(engines), detect)

    def _aside(self, texts: list[str], engines: list[Served], detect: bool) -> None:
        try:
            for direction, mine in _by_direction(texts, engines).items():
                if detect:
                    self.detected(direction, [self.router.detect(t).language for t in mine])
                if self.sampler is not None:
                    written, full = self.sampler.offer(direction, mine)
                    self.metrics.sampled.labels("written").inc(written)
                    self.metrics.sampled.labels("full").inc(full)
        except Exception:  # counting must never fail a request
            log.exception("traffic: detecting or sampling a request's texts failed")

    # --- the snapshots ---------------------------------------------------------------------------

    def start(self) -> None:
        """On the loop: with --stats-dir, a snapshot every --stats-interval from now on."""
        if self.config.stats_dir is not None:
            self._task = asyncio.ensure_future(self._every())

    async def _every(self) -> None:
        while True:
            await asyncio.sleep(self.config.stats_interval_s)
            await self.snapshot()

    async def snapshot(self) -> Path | None:
        """On the loop: the counts since the previous snapshot written to --stats-dir (on a worker
        thread); its path, None without --stats-dir or when it could not be written (logged)."""
        if self.config.stats_dir is None:
            return None
        taken = self.traffic.take()
        try:
            return await asyncio.get_running_loop().run_in_executor(
                None, write_snapshot, self.config.stats_dir, taken, self.config.stats_keep)
        except OSError as exc:
            log.error("traffic snapshot not written to --stats-dir %s: %s", self.config.stats_dir, exc)
            return None

    async def stop(self) -> None:
        """On the loop, at shutdown (the batcher stopped): no more periodic snapshots; the last one."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.snapshot()
