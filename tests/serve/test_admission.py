"""Admission by the queue's wait, not its length only: a request whose sentences would be decoded
after half --queue-timeout at the rate the decoders reach under load is refused at once (503 with
Retry-After), instead of waiting to be refused as stale."""

from __future__ import annotations

import asyncio

import pytest

from nmt.serve.dispatch.batcher import Batcher
from nmt.serve.dispatch.jobs import Item, Job
from nmt.serve.dispatch.refusals import QueueFull
from nmt.serve.observe.metrics import Metrics
from nmt.translate.decoding import Output


class Timed(Batcher):
    """A batcher whose 'decoding' takes a set time per batch, on a clock the test moves (not started: no event
    loop, so results are not delivered)."""

    def __init__(self, **kw) -> None:
        super().__init__([], Metrics(), max_wait_s=0.0, **kw)
        self.seconds_per_batch = 1.0

    def translate(self, texts, n=1, engine=None):  # type: ignore[override]
        self.clock[0] += self.seconds_per_batch
        return [Output([t], 0.0) for t in texts]


@pytest.fixture()
def batcher(monkeypatch: pytest.MonkeyPatch) -> Timed:
    b = Timed(max_batch=32, max_queue=512, queue_timeout_s=10.0, decoders=1)
    b.clock = [0.0]
    monkeypatch.setattr("nmt.serve.dispatch.batcher.time.monotonic", lambda: b.clock[0])
    return b


class Package:
    def thread_generation(self) -> int:
        return 0


def queue(b: Batcher, n: int) -> None:
    job = Job(asyncio.Future(loop=asyncio.new_event_loop()), [None] * n, n)
    b.queue.extend(Item(job, i, f"s{i}", Package(), queued_at=b.clock[0]) for i in range(n))  # type: ignore[arg-type]


def test_a_request_that_would_wait_past_the_queue_timeout_is_refused_now(batcher: Timed) -> None:
    queue(batcher, 32)
    batcher._decode(list(batcher.queue))  # a full batch of 32 in 1 s: 32 sentences/s under load
    batcher.queue.clear()
    assert batcher.full_rate == pytest.approx(32.0)
    queue(batcher, 140)  # 140 queued: 4.4 s of work
    batcher.check_room(10)  # 150: 4.7 s, within half --queue-timeout (the estimate's margin)
    with pytest.raises(QueueFull, match=r"about 6 s of work.*over half --queue-timeout \(10 s\)") as refused:
        batcher.check_room(40)  # 180: 5.6 s, though the queue holds 512
    assert refused.value.retry_after >= 1


def test_only_loaded_batches_set_the_rate_admission_judges_by(batcher: Timed) -> None:
    queue(batcher, 3)
    batcher._decode(list(batcher.queue))  # 3 sentences in 1 s: a lone request's batch, not the rate under load
    batcher.queue.clear()
    assert batcher.rate == pytest.approx(3.0) and batcher.full_rate == 0.0
    queue(batcher, 500)
    batcher.check_room(10)  # no loaded batch timed yet: the queue's length alone decides
    with pytest.raises(QueueFull, match="500 of 512 sentences queued"):
        batcher.check_room(13)


def test_a_queue_of_at_most_one_batch_is_never_refused_for_its_wait(batcher: Timed) -> None:
    batcher.full_rate = 0.5  # a very slow model: 64 s a batch
    queue(batcher, 20)
    batcher.check_room(12)  # 32 sentences: one batch, decoded next whatever it takes
    with pytest.raises(QueueFull, match="--queue-timeout"):
        batcher.check_room(13)


def test_several_decoders_share_the_queue_s_wait(batcher: Timed) -> None:
    batcher.full_rate, batcher.decoders = 32.0, 2  # each thread's rate: two drain the queue twice as fast
    queue(batcher, 300)
    batcher.check_room(12)  # 312 at 64 sentences/s: 4.9 s (one decoder: 9.8 s, refused)
    batcher.decoders = 1
    with pytest.raises(QueueFull, match="--queue-timeout"):
        batcher.check_room(12)


def test_an_idle_server_admits_what_it_can_take_whatever_its_rate(batcher: Timed) -> None:
    """Nothing queued: a request of the most sentences a request may have is decoded next, however slow
    the model; refusing it would only ask for a retry that meets the same (issue 77: 503 "0 sentences
    queued: about 9 s of work" to 12 texts on an idle server). With work ahead, the wait still counts."""
    batcher.full_rate = 2.0  # 16 s a batch of 32: 512 sentences would take minutes
    batcher.check_room(batcher.max_sentences)
    queue(batcher, 40)
    with pytest.raises(QueueFull, match="40 sentences queued: about .* over half --queue-timeout"):
        batcher.check_room(1)


def test_a_request_being_decoded_is_not_stale_for_its_own_sentences(batcher: Timed) -> None:
    """The sentences of a request whose first batch was taken wait on that request's own work: they are
    decoded, not refused as stale, however long the request takes; a request none of whose sentences was
    taken is stale past --queue-timeout."""
    queue(batcher, 96)  # one request: three batches of 32, 1 s each on the test's clock
    job = batcher.queue[0].job
    batcher.seconds_per_batch = 6.0
    delivered: list = []
    batcher._call = lambda fn, items, outputs, *rest: delivered.extend(outputs)  # type: ignore[method-assign]
    for _ in range(3):
        batch = [batcher.queue.popleft() for _ in range(32)]
        batcher._decode(batch)  # at 0, 6 and 12 s: the last batch waited 12 s > --queue-timeout
    assert job.started and len(delivered) == 96 and all(isinstance(o, Output) for o in delivered)
    queue(batcher, 2)  # another request, queued at 18 s
    batcher.clock[0] += 11.0
    delivered.clear()
    batcher._decode([batcher.queue.popleft() for _ in range(2)])
    assert len(delivered) == 2 and not any(isinstance(o, Output) for o in delivered)  # stale: never taken
