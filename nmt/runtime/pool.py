"""Decoders side by side: W processes, each with its own ONNX Runtime sessions, fed from one queue.

On a small model and small batches, two decoders with one thread each serve more sentences per
core than one decoder whose matrix products are split over two threads (CTranslate2's
`inter_threads`). Processes, not threads: the numpy search holds the GIL between session runs,
and two threads over shared sessions measured slower than two processes (greedy fp32
875 against 934 sentences/s on 2 cores). Each process loads the package once (`OnnxTranslator`,
files verified) and decodes whole batches of source ids; `map` hands the batches out as
processes come free and yields the outputs in input order, so the text side (tokenization,
length-sorted batching, detokenization) stays in the caller and the output equals one decoder's.
Torch-free.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

Opener = Callable[..., Any]  # OnnxTranslator.from_dir: (package, **options) -> a translator with decode_batch
_translator: Any = None  # the worker process's translator (`_start`)


def _start(opener: Opener, package: str, options: dict[str, Any]) -> None:
    global _translator
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's: it shuts the pool down
    _translator = opener(Path(package), **options)


def _decode(sources: list[list[int]], n: int | None) -> list[Any]:
    assert _translator is not None, "decoder process not started"
    return _translator.decode_batch(sources) if n is None else _translator.decode_batch_n(sources, n)


def _pid(hold_s: float) -> int:
    import os
    import time

    time.sleep(hold_s)  # long enough that every process takes one
    return os.getpid()


class DecoderPool:
    """`workers` decoder processes, each with the translator `opener(package, **options)` makes
    (`OnnxTranslator.from_dir` and its options: threads per process, int8, decoding settings)."""

    def __init__(self, opener: Opener, package: Path, workers: int, options: dict[str, Any]) -> None:
        if workers < 2:
            raise ValueError(f"a decoder pool needs 2 or more workers, got {workers}")
        self.workers = workers
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_start, initargs=(opener, str(package), options))
        log.info("%d decoder processes, %s thread(s) each", workers, options.get("threads") or "default")

    def map(self, batches: list[list[list[int]]], n: int | None = None) -> Iterator[list[Any]]:
        """Every batch decoded (the output ids; with `n`, up to n scored hypotheses per source), in input
        order, by whichever process is free."""
        return self._pool.map(_decode, batches, [n] * len(batches))

    def pids(self) -> set[int]:
        """The decoder processes' ids (for tests and logs): 2 x workers tasks that each hold a
        process for 0.2 s, so every process answers."""
        return set(self._pool.map(_pid, [0.2] * (2 * self.workers)))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
