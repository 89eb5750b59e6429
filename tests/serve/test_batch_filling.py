"""A batch being filled waits for requests already admitted whose texts are still being cut into
sentences (`Batcher.expecting`), up to a quarter of the last batch's decoding time: closed-loop
clients answered together come back together, whatever the host's speed, instead of splitting
into groups that alternate at a fraction of the batch size."""

from __future__ import annotations

import asyncio
import threading
import time

from nmt.serve.dispatch.batcher import Batcher
from nmt.serve.dispatch.jobs import Item, Job
from nmt.serve.observe.metrics import Metrics

LOOP = asyncio.new_event_loop()


def batcher(grace_s: float) -> Batcher:
    b = Batcher([], Metrics(), max_batch=8, max_wait_s=0.001, max_queue=64, queue_timeout_s=10.0, decoders=1)
    b.arrival_grace_s = grace_s
    return b


def put(b: Batcher, text: str) -> None:
    with b.ready:
        b.queue.append(Item(Job(LOOP.create_future(), [None], 1), 0, text, None))  # type: ignore[arg-type]
        b.ready.notify_all()


def take_after(b: Batcher, late: str, delay_s: float) -> list[str]:
    """`_take` on a thread while `late` arrives `delay_s` after the first sentence, announced by
    `expecting` from before the first was queued."""
    taken: list[str] = []
    with b.expecting():
        put(b, "early")
        thread = threading.Thread(target=lambda: taken.extend(i.text for i in b._take() or []))
        thread.start()
        time.sleep(delay_s)
        put(b, late)
    thread.join(5)
    return taken


def test_a_batch_waits_for_a_request_still_being_cut_into_sentences() -> None:
    assert take_after(batcher(grace_s=2.0), "late", 0.05) == ["early", "late"]


def test_without_a_timed_batch_it_does_not_wait_past_max_wait() -> None:
    assert take_after(batcher(grace_s=0.0), "late", 0.05) == ["early"]


def test_the_wait_for_arrivals_is_bounded_by_the_grace() -> None:
    b = batcher(grace_s=0.02)
    started = time.monotonic()
    assert take_after(b, "late", 0.3) == ["early"]  # the grace ran out first
    assert b.arriving == 0 and time.monotonic() - started < 5


def test_nothing_announced_nothing_awaited() -> None:
    b = batcher(grace_s=600.0)
    put(b, "alone")
    taken: list[str] = []
    thread = threading.Thread(target=lambda: taken.extend(i.text for i in b._take() or []))
    thread.start()
    thread.join(30)  # after max_wait: with nothing arriving, the 600 s grace never applies
    assert not thread.is_alive() and taken == ["alone"]
