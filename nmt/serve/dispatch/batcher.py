"""Dynamic batching at the sentence level: one bounded queue, inference threads that drain it.

A request's sentences enter the queue together or not at all (`submit` raises `QueueFull` when they
do not all fit now or would wait past `queue_timeout` behind others' work (an idle server takes any
request: a retry would meet the same), `TooManySentences` when they never could, `Draining` while
draining: 503 with Retry-After, 413, 503). Each inference thread takes the oldest sentences, up to
`max_batch`, waiting at most `max_wait` after the first of them was queued for more to arrive; drops
those whose request is gone (client disconnected, timed out, or another batch of it failed); fails
those that waited longer than `queue_timeout` before their request's first batch (503);
sorts the rest by length, decodes them as one batch with its own translator (`Served.translator`),
and hands every result back to the event loop in one callback. A batch that raises fails every
request in it, so no request waits for a sentence that will never come. With several packages (one
per direction) the queue is shared: each sentence names its engine, a batch is of one engine (the
oldest sentence's), and every decoder thread decodes for every engine.
"""

from __future__ import annotations

import asyncio
import logging
import math
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from nmt.serve.dispatch.jobs import Item, Job
from nmt.serve.dispatch.refusals import BatchFailed, Draining, QueueFull, Refused, Stale, TooManySentences
from nmt.serve.dispatch.served import Served
from nmt.serve.observe.metrics import Metrics
from nmt.translate.decoding import Output, translate_sentences

log = logging.getLogger(__name__)

# How often Python lets another thread take the GIL while more than one decoder thread runs: session runs release
# the GIL, but search and text are Python, and by default (5 ms) a decoder whose session run ended waits that long
# for it (bench/serve_load.py's variants measure it; docs/serving.md). Restored when the threads have stopped.
SWITCH_INTERVAL_S = 0.0002


class Batcher:
    """The queue and its inference threads. `submit` and the results' callbacks run on the event
    loop; `_work` runs on the threads."""

    def __init__(self, engines: Sequence[Served], metrics: Metrics, *, max_batch: int, max_wait_s: float,
                 max_queue: int, queue_timeout_s: float, decoders: int, max_sentences: int | None = None,
                 observe: Callable[[str, Sequence[Output], int], None] | None = None) -> None:
        self.engines, self.metrics = list(engines), metrics
        self.observe = observe  # gets each batch's direction, outputs and guarded sentences (nmt.serve.api.watch)
        self.max_batch, self.max_wait_s, self.max_queue = max_batch, max_wait_s, max_queue
        self.max_sentences = min(max_queue, max_sentences or max_queue)  # one request's most: it must fit the queue
        self.queue_timeout_s, self.decoders = queue_timeout_s, decoders
        self.queue: deque[Item] = deque()
        self.ready = threading.Condition()
        self.threads: list[threading.Thread] = []
        self.stopping = self.draining = False
        self.rate = 0.0  # sentences/s recently (moving average), for Retry-After
        self.full_rate = 0.0  # one thread's sentences/s in batches of >= max_batch / 2: the rate under load (average)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.on_ready: Callable[[], None] | None = None
        self.warmed = 0  # threads that have tried their warm-up sentence
        self.warm_up_error: str | None = None  # why a warm-up failed: the server never turns ready
        self.switch_interval: float | None = None  # Python's, while lowered for the decoder threads
        self.idle = 0  # decoder threads waiting for work (in `_take`)
        self.arriving = 0  # requests admitted on the loop whose sentences are not queued yet (`expecting`)
        self.arrival_grace_s = 0.0  # how long a batch may wait for them: a quarter of the last batch's time
        self.warming = threading.local()  # `on` while this thread decodes its warm-up sentences (not traffic)

    # --- the event loop's side ------------------------------------------------------------------

    def start(self, loop: asyncio.AbstractEventLoop, on_ready: Callable[[], None] | None = None) -> None:
        """Start the inference threads; each decodes a warm-up sentence first, and `on_ready` runs
        on the loop once all have tried (sentences submitted meanwhile wait in the queue); when one
        failed, `warm_up_error` says why and the app stays not ready."""
        self.loop, self.on_ready = loop, on_ready
        if self.decoders > 1:
            self.switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(SWITCH_INTERVAL_S, self.switch_interval))
        for i in range(self.decoders):
            thread = threading.Thread(target=self._work, name=f"nmt-decoder-{i}", daemon=True)
            thread.start()
            self.threads.append(thread)

    def retry_after(self, extra: int = 0) -> int:
        """Seconds until the queue (plus `extra` sentences) is likely through, 1 to 60."""
        return max(1, min(60, math.ceil((len(self.queue) + extra) / self.rate))) if self.rate > 0 else 1

    def check_room(self, sentences: int, admitted: bool = False) -> None:
        """Raise what `submit` would for `sentences` more (`Draining`, `QueueFull`): asked first with a lower
        bound, so a request is refused before its texts are cut into sentences. `admitted`: the work of a request
        let in before a drain began (`ServeState.admitted`), refused only once the threads stop."""
        if self.stopping or (self.draining and not admitted):
            raise Draining("the server is shutting down; send the request to another instance", retry_after=1)
        queued = len(self.queue)
        wait_s = self.expected_wait(sentences) if queued else 0.0
        if queued + sentences > self.max_queue or wait_s > self.queue_timeout_s / 2:  # half: the rate is an estimate
            why = (f"{queued} of {self.max_queue} sentences queued" if queued + sentences > self.max_queue else
                   f"{queued} sentences queued: about {wait_s:.0f} s of work with this request's, over half "
                   f"--queue-timeout ({self.queue_timeout_s:g} s)")
            raise QueueFull(f"the queue is full ({why}, this request has {sentences}); retry later",
                            retry_after=self.retry_after(sentences))

    def expected_wait(self, sentences: int) -> float:
        """Seconds until the last of `sentences` more is decoded, at the decoders' rate under load (0: at most
        a batch queued, or no loaded batch timed yet): `check_room` refuses now a request this puts over half
        --queue-timeout (the rate moves: the margin keeps admitted requests from going stale after all)."""
        depth = len(self.queue) + sentences
        return depth / (self.full_rate * self.decoders) if depth > self.max_batch and self.full_rate > 0 else 0.0

    @contextmanager
    def expecting(self) -> Iterator[list[bool]]:
        """On the loop, around a request's way from admission to `submit`: while its texts are cut into
        sentences (on the text thread), a decoder filling a batch waits for them a little longer. `submit`
        given what this yields (`arrival`) counts the request arrived as its sentences enter the queue."""
        arrival = [True]
        with self.ready:
            self.arriving += 1
        try:
            yield arrival
        finally:
            if arrival[0]:  # refused, failed or empty: never queued
                with self.ready:
                    self.arriving -= 1
                    self.ready.notify_all()

    def submit(self, texts: Sequence[str], n: int = 1, engines: Sequence[Served] | None = None,
               admitted: bool = False, arrival: list[bool] | None = None) -> Job:
        """Queue all of `texts` as one job wanting up to `n` translations of each (the beam's n-best
        list), text i for `engines[i]` (default: the first engine), or raise `Draining` / `QueueFull`
        (`admitted`: see `check_room`)."""
        assert self.loop is not None, "Batcher.start() first"
        if len(texts) > self.max_sentences:
            raise TooManySentences(f"{len(texts)} sentences in one request; the limit (--max-sentences) is "
                                   f"{self.max_sentences}: send fewer or shorter texts per request")
        self.check_room(0, admitted)
        job = Job(self.loop.create_future(), [None] * len(texts), len(texts), n=n)
        if not texts:
            job.future.set_result([])
            return job
        with self.ready:
            self.check_room(len(texts), admitted)
            routes = engines or [self.engines[0]] * len(texts)
            self.queue.extend(Item(job, i, text, engine) for i, (text, engine) in enumerate(zip(texts, routes)))
            if arrival and arrival[0]:  # with its sentences, in one step: a decoder never sees it twice or not at all
                arrival[0], self.arriving = False, self.arriving - 1
            self.metrics.queue_depth.set(len(self.queue))
            self.ready.notify_all()
        return job

    def _deliver(self, items: list[Item], outputs: Sequence[Output | Refused], generation: int = 0) -> None:
        """On the event loop: each sentence's translation (or error) to its job."""
        for item, out in zip(items, outputs):
            job = item.job
            if job.future.done():
                continue
            job.generation = max(job.generation, generation)
            if isinstance(out, Refused):
                job.close()
                job.future.set_exception(out)
                continue
            job.results[item.index] = Output(out.texts[:job.n], out.confidence)
            job.left -= 1
            if job.left == 0:
                job.future.set_result(job.results)

    def stop(self) -> None:
        """On the loop: the threads stop after their current batch; what is still queued fails with 503."""
        with self.ready:
            self.stopping = True
            left = list(self.queue)
            self.queue.clear()
            self.ready.notify_all()
        if left and self.loop is not None:
            error = Draining("the server stopped before translating this request", retry_after=1)
            self._deliver(left, [error] * len(left))

    def join(self, timeout_s: float = 10.0) -> None:
        """Wait for the threads to end (blocks: off the loop)."""
        for thread in self.threads:
            thread.join(timeout_s)
        if self.switch_interval is not None and not any(t.is_alive() for t in self.threads):
            sys.setswitchinterval(self.switch_interval)
            self.switch_interval = None

    # --- the inference threads' side ------------------------------------------------------------

    def _take(self) -> list[Item] | None:
        """The next batch: up to `max_batch` of the oldest sentences, waiting at most `max_wait` for more,
        from the later of the first one's arrival and this thread's return (so closed-loop clients answered
        by one batch join the next, not alternate at half its size), or while admitted requests are still
        cut into sentences (`arriving`) up to a quarter of the last batch's time; shared out among the idle
        decoders; None when stopping."""
        back = time.monotonic()
        with self.ready:
            self.idle += 1
            try:
                while True:
                    while not self.queue and not self.stopping:
                        self.ready.wait()
                    if self.stopping:
                        return None
                    start = max(self.queue[0].queued_at, back)
                    deadline, longest = start + self.max_wait_s, start + max(self.max_wait_s, self.arrival_grace_s)
                    while self.queue and len(self.queue) < self.max_batch and not self.stopping:
                        left = (longest if self.arriving else deadline) - time.monotonic()
                        if left <= 0:
                            break
                        self.ready.wait(left)
                    if self.queue and not self.stopping:  # another thread may have taken them meanwhile
                        share = -(-len(self.queue) // self.idle)  # the waiting decoders' equal shares, rounded up
                        batch = self._pop_oldest(min(self.max_batch, share))
                        self.metrics.queue_depth.set(len(self.queue))
                        return batch
            finally:
                self.idle -= 1

    def _pop_oldest(self, limit: int) -> list[Item]:
        """Up to `limit` of the oldest sentences of the oldest one's engine; the others keep their places."""
        engine, batch, others = self.queue[0].engine, list[Item](), list[Item]()
        while self.queue and len(batch) < limit:
            item = self.queue.popleft()
            (batch if item.engine is engine else others).append(item)
        self.queue.extendleft(reversed(others))
        return batch

    def _work(self) -> None:
        self.warming.on = True
        try:
            for engine in self.engines:
                self.translate([engine.current.warm_up_text], engine=engine)
        except Exception as exc:  # a model that cannot decode one sentence is never reported ready
            log.exception("inference thread: the warm-up sentence failed; /readyz stays 503")
            self.warm_up_error = f"{type(exc).__name__}: {exc}"
        self.warming.on = False
        with self.ready:
            self.warmed += 1
            if self.warmed == self.decoders and self.on_ready is not None:
                self._call(self.on_ready)
        while (batch := self._take()) is not None:
            try:
                self._decode(batch)
            except Exception:  # never let a thread die: the next batch may well work
                log.exception("inference thread: unexpected error")

    def _decode(self, batch: list[Item]) -> None:
        now = time.monotonic()
        live = [item for item in batch if not item.job.closed]
        if len(live) < len(batch):
            self.metrics.dropped.inc(len(batch) - len(live))
        stale = [item for item in live if not item.job.started and now - item.queued_at > self.queue_timeout_s]
        if stale:
            error: Refused = Stale(f"waited longer than --queue-timeout ({self.queue_timeout_s:g} s) in the queue; "
                                   "the server is overloaded, retry later", retry_after=self.retry_after())
            self._call(self._deliver, stale, [error] * len(stale))
            live = [item for item in live if item not in stale]
        if not live:
            return
        for item in live:
            item.job.started = True
            self.metrics.queue_wait_seconds.observe(now - item.queued_at)
        try:
            # n only changes what is read off the same search: the batch is decoded alike for every request
            n = max(item.job.n for item in live)
            outputs: list[Output | Refused] = list(self.translate([item.text for item in live], n, live[0].engine))
        except Exception as exc:
            log.exception("a batch of %d sentences failed", len(live))
            error = BatchFailed(f"translation failed ({type(exc).__name__}: {exc}); the server log has the details")
            outputs = [error] * len(live)
        else:
            took = time.monotonic() - now
            self.metrics.batch_seconds.observe(took)
            self.arrival_grace_s = took / 4
            self.metrics.batch_size.observe(len(live))
            self.metrics.sentences.inc(len(live))
            rate = len(live) / max(took, 1e-3)
            self.rate = 0.8 * self.rate + 0.2 * rate if self.rate else rate
            if 2 * len(live) >= self.max_batch:
                self.full_rate = 0.8 * self.full_rate + 0.2 * rate if self.full_rate else rate
        self._call(self._deliver, live, outputs, live[0].engine.thread_generation())

    def _call(self, func: Callable[..., None], *args: object) -> None:
        """Run `func(*args)` on the event loop, if it still runs."""
        if self.loop is not None and not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(func, *args)
            except RuntimeError:  # the loop closed meanwhile: nobody is waiting any more
                pass

    def translate(self, texts: list[str], n: int = 1, engine: Served | None = None) -> list[Output]:
        """One batch decoded as one on this thread's translator (`decoding.translate_sentences`): up to `n`
        translations per text, best first, with confidence; traffic, unless a thread's warm-up sentence."""
        model, translator = (engine or self.engines[0]).translator()
        out, changed = translate_sentences(translator, texts, n)
        if changed:
            self.metrics.guarded.inc(changed)
        if self.observe is not None and not getattr(self.warming, "on", False):
            self.observe(model.direction, out, changed)
        return out
