"""Decoders side by side: W processes, each with its own ONNX Runtime sessions, fed from one queue.

On a small model and small batches, two decoders with one thread each serve more sentences per
core than one decoder whose matrix products are split over two threads (CTranslate2's
`inter_threads`). Processes, not threads: the numpy search holds the GIL between session runs,
and two threads over shared sessions measured slower than two processes (greedy fp32
875 against 934 sentences/s on 2 cores). Each process loads the package once (`OnnxTranslator`,
files verified) and decodes whole batches of source ids; `map` hands the batches out as
processes come free and yields the outputs in input order, so the text side (tokenization,
length-sorted batching, detokenization) stays in the caller and the output equals one decoder's.
Each call carries the caller's decoding settings (`Settings`): a copy of the translator made with
other settings (the loop guard's greedy retry: `replace(translator, beam_size=1)`) shares the pool,
and its batches must be searched its way, not the way the processes were opened. The processes may
start lazily, the first time a call brings `start_at` sentences (`workers=0`, auto); the copies
share that too. Torch-free.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

log = logging.getLogger(__name__)

Opener = Callable[..., Any]  # OnnxTranslator.from_dir: (package, **options) -> a translator with decode_batch
_translator: Any = None  # the worker process's translator (`_start`)


class Settings(NamedTuple):
    """The search a batch is decoded with: the calling translator's, sent with every call."""

    beam_size: int  # 1: greedy
    alpha: float  # GNMT length penalty
    max_extra: int  # output may be this many symbols longer than the input


def _start(opener: Opener, package: str, options: dict[str, Any]) -> None:
    global _translator
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's: it shuts the pool down
    _translator = opener(Path(package), **options)


def _decode(sources: list[list[int]], n: int | None, settings: Settings) -> list[Any]:
    assert _translator is not None, "decoder process not started"
    translator = _translator
    if Settings(translator.beam_size, translator.alpha, translator.max_extra) != settings:
        translator = replace(translator, **settings._asdict())
    return translator.decode_batch(sources) if n is None else translator.decode_batch_n(sources, n)


def _pid(hold_s: float) -> int:
    import os
    import time

    time.sleep(hold_s)  # long enough that every process takes one
    return os.getpid()


class DecoderPool:
    """`workers` decoder processes, each with the translator `opener(package, **options)` makes
    (`OnnxTranslator.from_dir` and its options: threads per process, int8); started at once, or
    (`start_at` > 0) the first time a call brings that many sentences."""

    def __init__(self, opener: Opener, package: Path, workers: int, options: dict[str, Any],
                 start_at: int = 0) -> None:
        if workers < 2:
            raise ValueError(f"a decoder pool needs 2 or more workers, got {workers}")
        self.workers = workers
        self.start_at = start_at
        self._start = (opener, str(package), options)
        self._pool: ProcessPoolExecutor | None = None
        if start_at <= 0:
            self._open()

    @property
    def started(self) -> bool:
        return self._pool is not None

    def takes(self, sentences: int) -> bool:
        """Whether a call of `sentences` sentences is decoded here: always once started, else from `start_at` on."""
        return self._pool is not None or sentences >= self.start_at

    def map(self, batches: list[list[list[int]]], settings: Settings, n: int | None = None) -> Iterator[list[Any]]:
        """Every batch decoded with `settings` (the output ids; with `n`, up to n scored hypotheses per
        source), in input order, by whichever process is free; the processes start here if they have not."""
        pool = self._open()
        return pool.map(_decode, batches, [n] * len(batches), [settings] * len(batches))

    def pids(self) -> set[int]:
        """The decoder processes' ids (for tests and logs): 2 x workers tasks that each hold a
        process for 0.2 s, so every process answers."""
        return set(self._open().map(_pid, [0.2] * (2 * self.workers)))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _open(self) -> ProcessPoolExecutor:
        if self._pool is None:
            opener, package, options = self._start
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_start, initargs=(opener, package, options))
            log.info("%d decoder processes, %s thread(s) each", self.workers, options.get("threads") or "default")
        return self._pool
