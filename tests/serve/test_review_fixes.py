"""The review's findings on the server's edge paths, each against a real server.

A request that can never fit the queue is 413, not a 503 for ever; the drain deadline answers
503 from the handlers, not uvicorn's plain-text 500; a model that fails its warm-up never turns
ready; the digest is the card's as loaded; a reload leaves no old translator in idle threads;
a bad reload body is a 400; a slow body is a 408; connections beyond the cap are refused; the
batcher speaks in domain errors, the app in statuses.
"""

from __future__ import annotations

import gc
import json
import re
import shutil
import socket
import threading
import time
import weakref
from pathlib import Path

import httpx
import pytest

from nmt.serve.dispatch import batcher, refusals
from support.serve import TOKEN, ask, config, post, wait_ready

pytestmark = pytest.mark.network


def test_more_sentences_than_a_request_may_have_is_413_not_503_for_ever(start) -> None:
    s = start(max_batch=8, max_queue=64, max_sentences=64)
    text = "\n".join("s1 s2" for _ in range(100))  # 100 lines, a sentence each: they could never all fit the queue
    for _ in range(2):  # not "retry later": the same answer every time
        r = post(s.url, json=ask(text))
        assert r.status_code == 413, r.text
        assert "100 sentences in one request; the limit (--max-sentences) is 64" in r.json()["error"]
    assert post(s.url, json=ask("\n".join("s1 s2" for _ in range(60)))).status_code == 200
    assert 'nmt_serve_rejections_total{reason="too_many_sentences"} 2.0' in httpx.get(f"{s.url}/metrics").text


def test_the_drain_deadline_answers_503_from_the_handlers(start) -> None:
    s = start(drain_timeout_s=0.3)
    hold = s.hold()
    answer: list[httpx.Response] = []
    client = threading.Thread(target=lambda: answer.append(post(s.url, json=ask("s1 s2 s3"))))
    client.start()
    hold.wait_entered()
    assert s.server.loop is not None
    s.server.loop.call_soon_threadsafe(s.server.drain)
    client.join(20)
    hold.release()
    assert answer and answer[0].status_code == 503, answer and answer[0].text
    assert "--drain-timeout passed before this request was translated" in answer[0].json()["error"]


def test_a_failed_warm_up_never_turns_ready(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self, texts, n=1, engine=None):  # a model that cannot decode
        raise RuntimeError("broken graph (the test's)")

    monkeypatch.setattr(batcher.Batcher, "translate", broken)
    server, url = _started(config(package))
    try:
        with pytest.raises(AssertionError, match="not ready within"):
            wait_ready(url, timeout_s=3)
        r = httpx.get(f"{url}/readyz")
        assert r.status_code == 503 and r.json()["status"] == "failed", r.text
        assert "broken graph (the test's)" in r.json()["error"]
    finally:
        server.should_exit = True


def _started(cfg):
    """A server started without waiting for ready: (uvicorn server, url)."""
    from nmt.serve.api.server import DrainingServer, bind, load_models, make_state, uvicorn_config

    state = make_state(cfg, load_models(cfg))
    server = DrainingServer(uvicorn_config(state), state)
    sock = bind("127.0.0.1", 0)
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/livez", timeout=2)
            break
        except httpx.TransportError:
            time.sleep(0.05)
    return server, url


def test_the_digest_is_the_card_as_loaded(package: Path, tmp_path: Path, start) -> None:
    copy = tmp_path / "pkg"
    shutil.copytree(package, copy)
    import hashlib

    loaded = hashlib.sha256((copy / "model.json").read_bytes()).hexdigest()[:12]
    s = start(model=copy)
    (copy / "model.json").write_text((copy / "model.json").read_text() + "\n")  # the folder changes on disk
    served = httpx.get(f"{s.url}/v1/model").json()["models"][0]["served"]
    assert served["sha256"] == loaded


def test_a_reload_leaves_no_old_translator_in_idle_threads(start) -> None:
    s = start(decoders=2, admin_token=TOKEN)
    for _ in range(6):  # both threads decode a batch, so each holds a translator
        assert post(s.url, json=ask(["s1 s2", "s3 s4 s5"])).status_code == 200
    engine = s.state.router.first
    old = weakref.ref(engine.current.translator)
    held = [weakref.ref(t) for _, t in engine._translators.values()]
    assert held
    r = httpx.post(f"{s.url}/admin/reload", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
    assert r.status_code == 200, r.text
    gc.collect()
    assert old() is None and all(ref() is None for ref in held)  # no batch since: freed all the same


@pytest.mark.parametrize("body", [{"model": 5}, {"model": ["x"]}, {"model": ""}, [1, 2]])
def test_a_reload_body_that_is_not_a_folder_name_is_400(start, body) -> None:
    s = start(admin_token=TOKEN)
    r = httpx.post(f"{s.url}/admin/reload", json=body, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert r.status_code == 400 and "FOLDER a non-empty string" in r.json()["error"], r.text


def _whole_reply(sock: socket.socket) -> str:
    """An HTTP reply read to the end of its body (its head and body may come in separate packets)."""
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        length = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
        if sep and length and len(body) >= int(length.group(1)):
            break
    return data.decode()


def test_a_body_that_never_arrives_is_408(start) -> None:
    s = start(body_timeout_s=0.3)
    host, port = s.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"q\": ")  # and then nothing
        reply = _whole_reply(sock)
    assert reply.startswith("HTTP/1.1 408"), reply
    assert "--body-timeout" in reply


def test_connections_beyond_the_cap_are_refused(start) -> None:
    s = start(max_connections=3)  # uvicorn counts the new connection too: two are served, a third is not
    hold = s.hold()
    answers: list[int] = []
    clients = [threading.Thread(target=lambda: answers.append(post(s.url, json=ask("s1")).status_code))
               for _ in range(2)]
    for c in clients:
        c.start()
    hold.wait_entered()
    time.sleep(0.2)  # the second request is admitted and queued behind the held batch
    assert httpx.get(f"{s.url}/livez", timeout=10).status_code == 503  # a third connection
    hold.release()
    for c in clients:
        c.join(30)
    assert answers == [200, 200]


def test_the_engine_raises_domain_errors_the_api_maps_them() -> None:
    """(tests/test_architecture.py holds the dispatch room to no HTTP at all.)"""
    from nmt.serve.api.routes import REFUSALS, as_http

    kinds = {c for c in vars(refusals).values() if isinstance(c, type) and issubclass(c, refusals.Refused)}
    assert kinds - {refusals.Refused} == set(REFUSALS)
    assert as_http(refusals.QueueFull("full", retry_after=3)).status == 503
    assert as_http(refusals.TooManySentences("many")).status == 413
    assert json.loads(as_http(refusals.Stale("late", 2)).response().body)["error"] == "late"
