"""Sharded, streaming work for the data stages: read one shard at a time, run shards in order on a pool.

A split file is read in shards of `SHARD_LINES` lines (the last one shorter), so memory holds
a few shards, never a whole split. `ordered_map` runs jobs (any picklable worker class: the
tokenize stage's `nmt.data.tokencache.ShardWorker`, vocab's and binarize's) in a process pool,
inline for one worker, or on a Dask cluster, a bounded number in flight, results in submission
order: the output is byte-identical whatever the worker count. Pool processes end with the stage.

A bad line is reported with its absolute line number in the file, in the words of
`nmt.files.lines.split_lines`.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from nmt.errors import ConfigError, DataError
from nmt.files.cores import available_cores
from nmt.files.killpoints import kill_point
from nmt.files.lines import open_raw, split_lines

log = logging.getLogger(__name__)

# Lines per shard: the unit of reading, of work for one pool task and of caching. 20,000
# sentences are about 1.5 MB of text and 2-3 MB of tokens; a few shards per worker are in
# memory at a time. Smaller shards re-tokenize less of a grown corpus and balance better,
# larger ones make fewer cache files. Changing it changes which entries are hit, never the output.
SHARD_LINES = 20_000
IN_FLIGHT_PER_WORKER = 2  # shards submitted but not yet written, per worker: bounds the memory
DASK_ENV = "NMT_DASK_SCHEDULER"  # a scheduler address: shards go to that Dask cluster instead of the local pool
DASK_CONNECT_S = 30  # seconds to reach the scheduler

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class ShardJob:
    """One shard of a split file: its raw bytes and where it starts."""

    path: str  # the file, as errors name it
    lang: str
    first_line: int  # absolute number of the shard's first line, from 1
    rows: int  # input lines in the shard
    data: bytes


def read_shards(path: Path, lang: str, shard_lines: int) -> Iterator[ShardJob]:
    """The shards of `path` (plain or gzip), read lazily; `DataError` as `nmt.files.lines.open_raw` words it."""
    first = 1
    with open_raw(path) as fh:
        while lines := list(itertools.islice(fh, shard_lines)):
            yield ShardJob(str(path), lang, first, len(lines), b"".join(lines))
            first += len(lines)


def decode_shard(job: ShardJob) -> list[str]:
    """The shard's lines as text; a bad line's `DataError` names its absolute line number."""
    try:
        return split_lines(job.data, job.path)
    except DataError as exc:
        head = f"{job.path}:"
        number, sep, rest = str(exc).removeprefix(head).partition(": ")
        if not (str(exc).startswith(head) and sep and number.isdigit()):
            raise
        raise DataError(f"{head}{int(number) + job.first_line - 1}: {rest}") from None


_worker: Callable[[ShardJob], Any] | None = None  # the pool process's worker (`_init_pool`)


def _init_pool(factory: Callable[..., Callable[[ShardJob], Any]], args: tuple, parent: int) -> None:
    """A pool process ignores Ctrl-C (the main process's: it cancels the pool) and ends with `parent` (the stage)
    however that ends (SIGKILL, OOM): else it lives on under PID 1, holding the stage's stdout open for ever. Linux:
    the kernel's parent-death signal (prctl 1; sent when the thread iterating `ordered_map` ends); else a poll."""
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    prctl = getattr(ctypes.CDLL(None), "prctl", None) if os.name == "posix" else None
    if not (prctl and prctl(1, signal.SIGKILL, 0, 0, 0) == 0):
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    _worker = factory(*args)


def _watch_parent(parent: int, every_s: float = 0.5) -> None:
    """Without the parent-death signal: end this process once its parent is gone."""
    while os.getppid() == parent:
        time.sleep(every_s)
    os._exit(1)


def _run_pooled(job: ShardJob) -> Any:
    assert _worker is not None, "pool process not initialised"
    return _worker(job)


def resolve_workers(value: object) -> int:
    """`--workers` as a process count: a whole number >= 0, 0 meaning every available core."""
    try:
        workers = int(str(value))
    except ValueError:
        workers = -1
    if workers < 0:
        raise ConfigError(f"--workers {value}: expected a whole number of processes >= 0 (0: every available core)")
    return workers or available_cores()


class _Done:
    """A finished result with a future's `result()`: the inline (one worker) path."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value


def _run_on_dask(job: ShardJob, factory: Callable[..., Callable[[ShardJob], Any]], args: tuple) -> Any:
    """A shard on a Dask worker: one `factory(*args)` per worker process, kept between tasks
    (spaCy or the vocabularies load once per worker)."""
    key = (f"{factory.__module__}.{factory.__qualname__}", repr(args))
    worker = _dask_workers.get(key) or _dask_workers.setdefault(key, factory(*args))
    return worker(job)


_dask_workers: dict[tuple[str, str], Callable[[ShardJob], Any]] = {}


def dask_scheduler() -> str | None:
    """The Dask scheduler the data stages submit their shards to (env `NMT_DASK_SCHEDULER`,
    e.g. tcp://10.0.0.5:8786), or None: the local pool."""
    return os.environ.get(DASK_ENV) or None


def ordered_map(items: Iterable[T], factory: Callable[..., Callable[[ShardJob], R]], args: tuple,
                workers: int) -> Iterator[tuple[T, R | None]]:
    """(item, result) for every item in order: a `ShardJob` goes through a worker made by
    `factory(*args)` (a picklable class; one per process), anything else (a marker) passes through
    with None. With `NMT_DASK_SCHEDULER` set, jobs go to that Dask cluster (`IN_FLIGHT_PER_WORKER`
    per worker thread in flight; `workers` is ignored). Otherwise `workers` > 1 runs jobs in a pool
    of spawned processes with at most `IN_FLIGHT_PER_WORKER` shards per worker in flight; 1 runs
    them here."""
    address = dask_scheduler()
    if address is not None:
        yield from _on_dask(items, address, factory, args)
        return
    if workers <= 1:
        worker = factory(*args)
        yield from _in_order(items, lambda job: _Done(worker(job)), window=1)
        return
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_pool, initargs=(factory, args, os.getpid()))
    try:
        yield from _in_order(items, lambda job: pool.submit(_run_pooled, job), window=IN_FLIGHT_PER_WORKER * workers)
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _on_dask(items: Iterable[T], address: str, factory: Callable[..., Callable[[ShardJob], R]],
             args: tuple) -> Iterator[tuple[T, R | None]]:
    try:
        from distributed import Client
    except ImportError:
        raise DataError(f"{DASK_ENV}={address}, but dask.distributed is not installed: "
                        'pip install "nmt[dask]", or unset the variable to use the local pool') from None
    try:
        client = Client(address, timeout=DASK_CONNECT_S)
    except OSError as exc:
        raise DataError(f"{DASK_ENV}={address}: cannot reach the Dask scheduler ({exc}); start it "
                        "(`dask scheduler`) or unset the variable to use the local pool") from None
    with client:
        threads = max(1, sum(client.nthreads().values()))
        log.info("shards on the Dask cluster at %s (%d worker threads)", address, threads)
        yield from _in_order(items, lambda job: client.submit(_run_on_dask, job, factory, args, pure=False),
                             window=IN_FLIGHT_PER_WORKER * threads)


def _in_order(items: Iterable[T], submit: Callable[[ShardJob], Any],
              window: int) -> Iterator[tuple[T, Any]]:
    pending: deque[tuple[T, Future | _Done | None]] = deque()
    for item in items:
        pending.append((item, submit(item) if isinstance(item, ShardJob) else None))
        while sum(f is not None for _, f in pending) >= window or (pending and pending[0][1] is None):
            item0, future = pending.popleft()
            yield item0, None if future is None else future.result()
            kill_point("shard-done")  # the stage has used a result, the pool holds more in flight
    while pending:
        item0, future = pending.popleft()
        yield item0, None if future is None else future.result()
        kill_point("shard-done")
