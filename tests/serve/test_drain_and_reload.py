"""Reload (POST /admin/reload and SIGHUP), drain on SIGTERM, and the errors `nmt serve` reports
before it starts: each under requests in flight where the issue asks for it."""

from __future__ import annotations

import json
import logging
import re
import shutil
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from nmt.cli import main
from nmt.runtime.package import write_card
from nmt.runtime.translator import OnnxTranslator
from support.onnx import sentences
from support.serve import TOKEN, ProcessServer, ThreadServer, ask, config, offline, post

ADMITTED = 6  # requests in flight, held while their texts are cut into sentences, when the drain begins

pytestmark = pytest.mark.network


def variant(package: Path, out: Path, beam_size: int | None = None, damage: bool = False) -> Path:
    """A copy of the package: with other decoding settings in its card (a "new" package), or with
    a vocabulary file changed after export (fails verification)."""
    shutil.copytree(package, out)
    if beam_size is not None:
        card = json.loads((out / "model.json").read_text())
        card["decoding"]["beam_size"] = beam_size
        write_card(out, card)  # re-sealed: the card's own digest (issue 80)
    if damage:
        with (out / "tgt.vocab").open("a") as fh:
            fh.write("extra\n")
    return out


class Load:
    """Clients posting single sentences in a loop until stopped (at most `limit` requests each)."""

    def __init__(self, url: str, clients: int, limit: int = 2000) -> None:
        self.statuses: list[int] = []
        self.answers: list[tuple[float, int, str]] = []  # (sent at, status, the answering model's generation)
        self.stop = threading.Event()
        self.lines = sentences(16, seed=3)

        def client(i: int) -> None:
            for n in range(limit):
                if self.stop.is_set():
                    return
                sent = time.monotonic()
                r = post(url, json=ask(self.lines[(i + n) % 16]))
                self.answers.append((sent, r.status_code, r.headers.get("X-Nmt-Model-Generation", "")))
                self.statuses.append(r.status_code)

        self.pool = ThreadPoolExecutor(clients)
        self.futures = [self.pool.submit(client, i) for i in range(clients)]

    def wait_for(self, n: int, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while len(self.statuses) < n:
            assert time.monotonic() < deadline, f"only {len(self.statuses)} answers within {timeout_s} s"
            time.sleep(0.01)

    def finish(self) -> list[int]:
        self.stop.set()
        for f in self.futures:
            f.result(timeout=120)
        self.pool.shutdown()
        return self.statuses


@pytest.fixture
def served(package: Path) -> Iterator[ThreadServer]:
    s = ThreadServer(config(package, admin_token=TOKEN, max_wait_ms=2))
    yield s
    s.close()


def test_reload_switches_refuses_a_bad_package_and_fails_nothing_in_flight(served: ThreadServer, package: Path,
                                                                          tmp_path: Path) -> None:
    greedy = variant(package, tmp_path / "greedy", beam_size=1)
    damaged = variant(package, tmp_path / "damaged", damage=True)
    reload = lambda body: httpx.post(f"{served.url}/admin/reload", json=body, timeout=120,  # noqa: E731
                                     headers={"Authorization": f"Bearer {TOKEN}"})
    before = httpx.get(f"{served.url}/v1/model", timeout=30).json()["models"][0]["served"]
    load = Load(served.url, clients=4)
    try:
        load.wait_for(20)
        refused = reload({"model": str(damaged)})
        assert refused.status_code == 422 and "tgt.vocab" in refused.json()["error"]
        assert "previous model keeps serving" in refused.json()["error"]
        assert httpx.get(f"{served.url}/v1/model", timeout=30).json()["models"][0]["served"] == before
        n = len(load.statuses)
        switched = reload({"model": str(greedy)})
        switched_at = time.monotonic()
        assert switched.status_code == 200 and switched.json()["models"][0]["generation"] == 2
        load.wait_for(n + 20)
    finally:
        statuses = load.finish()
    assert statuses and set(statuses) == {200}, "a request failed during the reloads"
    after = [generation for sent, _, generation in load.answers if sent > switched_at]
    assert after and set(after) == {"2"}, "a request sent after the switch was answered by the old model"
    now = httpx.get(f"{served.url}/v1/model", timeout=30).json()["models"][0]["served"]
    assert now["path"] == str(greedy) and now["decoding"]["beam_size"] == 1 and now["sha256"] != before["sha256"]
    lines = sentences(24, seed=9)
    want = offline(OnnxTranslator.from_dir(greedy, device="cpu", threads=1), lines)
    assert post(served.url, json=ask(lines)).json()["translatedText"] == want  # the new package answers
    text = httpx.get(f"{served.url}/metrics", timeout=30).text
    assert 'nmt_serve_reloads_total{outcome="ok"} 1.0' in text
    assert 'nmt_serve_reloads_total{outcome="refused"} 1.0' in text


def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 30) -> None:
    """Until `condition()` holds (a bound against hanging, not a timing check)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout_s} s"
        time.sleep(0.02)


def hold_splitting(server: ThreadServer, threads: int) -> tuple[threading.Semaphore, threading.Event]:
    """Every request's sentence splitting held until the event is set (each released the semaphore as it
    began), on a text pool of `threads` threads, so that many requests are held at once."""
    state, entered, go = server.state, threading.Semaphore(0), threading.Event()
    real_split, one_thread = state.split, state.text_pool

    def held(*args: Any) -> Any:
        entered.release()
        go.wait(30)
        return real_split(*args)

    state.split = held  # type: ignore[method-assign]
    state.text_pool = ThreadPoolExecutor(threads, "test-text")
    one_thread.shutdown()
    return entered, go


@pytest.mark.fault
def test_a_drain_answers_every_request_received_before_it(package: Path) -> None:
    """The issue: requests received before SIGTERM but still being cut into sentences (not yet queued for the
    batcher) all got 503 "shutting down", since the batcher refused whatever it was handed once draining. A
    request is admitted on arrival: here ADMITTED of them are held in their sentence splitting (each on a text
    thread of its own, so all are held at once), the drain begins, and only then are they let go: each is
    translated (200), while one arriving after the drain began gets 503 with Retry-After, and the server exits
    once the admitted ones are answered."""
    lines = sentences(ADMITTED, seed=11)
    want = offline(OnnxTranslator.from_dir(package, device="cpu", threads=1), lines)
    server = ThreadServer(config(package, max_wait_ms=2))
    state = server.state
    entered, go = hold_splitting(server, ADMITTED + 1)
    late_status: int | None = None
    try:
        with ThreadPoolExecutor(ADMITTED) as pool:
            futures = [pool.submit(post, server.url, json=ask(line), timeout_s=60) for line in lines]
            for i in range(ADMITTED):
                assert entered.acquire(timeout=30), f"only {i} of {ADMITTED} requests reached their splitting"
            server.server.loop.call_soon_threadsafe(server.server.drain)  # as SIGTERM does
            wait_for(lambda: state.draining, "draining")
            try:
                late = post(server.url, json=ask("s1 s2"), timeout_s=30)
                late_status, retry_after = late.status_code, late.headers.get("Retry-After")
            except httpx.TransportError:  # the server already stopped listening: it drained too early
                pass
            go.set()
            answers = [f.result(timeout=60) for f in futures]
        assert [r.status_code for r in answers] == [200] * ADMITTED, [r.text for r in answers]
        assert [r.json()["translatedText"] for r in answers] == want
        assert late_status == 503 and retry_after == "1", "a request arriving during the drain was not refused"
        wait_for(lambda: not server.thread.is_alive(), "the server exits once drained")
    finally:
        go.set()
        server.close()


@pytest.mark.fault
def test_past_the_drain_deadline_a_request_not_yet_queued_gets_503(package: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Admitted on arrival is no promise past --drain-timeout: a request still being cut into sentences
    when the deadline passes is answered the documented 503 by its own handler, not queued after it."""
    caplog.set_level(logging.INFO, "nmt.serve")
    server = ThreadServer(config(package, drain_timeout_s=0.3))
    entered, go = hold_splitting(server, 2)
    try:
        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(post, server.url, json=ask("s1 s2 s3"), timeout_s=60)
            assert entered.acquire(timeout=30), "the request never reached its splitting"
            server.server.loop.call_soon_threadsafe(server.server.drain)  # as SIGTERM does
            # the deadline passed, or the drain ended without waiting for the request (the bug)
            wait_for(lambda: "--drain-timeout passed" in caplog.text or "drained:" in caplog.text, "the drain's end")
            go.set()
            answer = future.result(timeout=60)
        assert answer.status_code == 503, answer.text
        assert "--drain-timeout passed before this request was translated" in answer.json()["error"]
        wait_for(lambda: not server.thread.is_alive(), "the server exits")
    finally:
        go.set()
        server.close()


@pytest.mark.slow
def test_sigterm_drains_what_was_accepted_then_exits_0(package: Path, tmp_path: Path) -> None:
    server = ProcessServer(["--model", str(package), "--threads", "1", "--max-wait-ms", "5"], tmp_path / "serve.log")
    try:
        bulk = sentences(32, seed=4, hi=14)
        with ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(post, server.url, json=ask(bulk), timeout_s=120) for _ in range(16)]
            deadline = time.monotonic() + 60
            while True:  # requests are in flight
                metrics = httpx.get(f"{server.url}/metrics", timeout=30).text
                in_flight = float(re.search(r"^nmt_serve_requests_in_flight (\S+)", metrics, re.M).group(1))
                if in_flight >= 4:
                    break
                assert time.monotonic() < deadline, "requests never got in flight"
                time.sleep(0.005)
            server.signal(signal.SIGTERM)
            try:
                ready = httpx.get(f"{server.url}/readyz", timeout=10).status_code
            except httpx.TransportError:  # already drained and gone
                ready = None
            answers = []
            for f in futures:
                try:
                    answers.append(f.result(timeout=120).status_code)
                except httpx.TransportError:  # connected after the server stopped listening: never accepted
                    answers.append(None)
        assert server.wait(60) == 0
    finally:
        server.close()
    assert ready in (503, None)
    assert answers.count(200) >= in_flight, answers  # every request admitted before the signal was answered
    assert set(answers) <= {200, 503, None}, answers  # the rest were refused (503), none failed
    log = (tmp_path / "serve.log").read_text()
    assert "SIGTERM: draining" in log and "drained: every admitted request was answered" in log


@pytest.mark.slow
@pytest.mark.fault
def test_sighup_reloads_and_a_damaged_package_is_refused(package: Path, tmp_path: Path) -> None:
    """SIGHUP reloads the folder as it is; damaged in place (a half-finished copy) while clients keep
    sending, the reload is refused naming the file, the loaded model keeps answering every request."""
    copy = variant(package, tmp_path / "onnx")
    server = ProcessServer(["--model", str(copy), "--threads", "1"], tmp_path / "serve.log")
    generation = lambda: httpx.get(f"{server.url}/v1/model", timeout=30).json()["models"][0]["served"]["generation"]  # noqa: E731
    try:
        server.signal(signal.SIGHUP)
        deadline = time.monotonic() + 60
        while generation() != 2:
            assert time.monotonic() < deadline, "SIGHUP did not reload"
            time.sleep(0.05)
        load = Load(server.url, clients=3, limit=400)  # under load (bounded: 400 requests a client)
        try:
            load.wait_for(10)
            with (copy / "src.vocab").open("a") as fh:  # damaged in place, e.g. a half-finished copy
                fh.write("extra\n")
            server.signal(signal.SIGHUP)
            while "reload refused" not in (tmp_path / "serve.log").read_text():
                assert time.monotonic() < deadline, "the damaged package was not refused"
                time.sleep(0.05)
            n = len(load.statuses)
            load.wait_for(n + 10)  # still answering after the refusal
        finally:
            statuses = load.finish()
        assert set(statuses) == {200}, "a request failed while the damaged package was refused"
        assert "src.vocab" in (tmp_path / "serve.log").read_text()
        assert generation() == 2 and post(server.url, json=ask("s1 s2")).status_code == 200
    finally:
        server.close()
    assert server.proc.returncode == 0


def test_errors_before_starting_are_one_line(package: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [(["--model", str(tmp_path / "missing")], "--model"),
             (["--model", str(tmp_path)], "model.json: not found"),
             (["--model", str(package), "--max-queue", "8"], "--max-queue 8: must be >= --max-batch (32)"),
             (["--model", str(package), "--api-keys", str(tmp_path / "keys.json")], "--api-keys"),
             (["--model", str(package), "--admin-token", "short"], "at least 16 characters")]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        cases.append((["--model", str(package), "--port", str(busy.getsockname()[1])], "cannot listen"))
        for argv, message in cases:
            assert main(["serve", *argv]) == 1
            err = capsys.readouterr().err.strip()
            assert err.startswith("nmt serve: error: ") and message in err and "\n" not in err, err
