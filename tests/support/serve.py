"""`nmt serve` for tests: a real uvicorn server on 127.0.0.1, in a thread of the test process
(`ThreadServer`: its state can be inspected and its decoder held) or in a process of its own
(`ProcessServer`: signals), each stopped by the test's fixture also when the test fails; and
`post()`, a bounded HTTP call."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from nmt.runtime.package import write_card
from nmt.serve.api.options import ServeConfig
from nmt.serve.api.server import DrainingServer, bind, load_models, make_state, uvicorn_config
from support.corpus import ROOT
from support.prefect_server import free_port

READY_TIMEOUT_S = 120
TOKEN = "test-admin-token-0123456789"


def config(package: Path, **overrides: Any) -> ServeConfig:
    """The test server's config: one decoder thread of 1 ONNX thread (these machines are small)."""
    return replace(ServeConfig(model=package, decoders=1, threads=1, port=0), **overrides)


def wait_ready(url: str, alive: Any = lambda: True, timeout_s: float = READY_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert alive(), "the server exited before it was ready"
        try:
            if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} not ready within {timeout_s} s")


class Hold:
    """The decoders of a `ThreadServer`, held at the start of each batch until released."""

    def __init__(self, batcher: Any, fail: bool) -> None:
        self.gate, self.entered, self.batcher = threading.Event(), threading.Semaphore(0), batcher
        original = type(batcher).translate

        def held(texts: list[str], n: int = 1, engine: Any = None) -> list[list[str]]:
            self.entered.release()
            self.gate.wait(30)
            if fail:
                raise RuntimeError("a broken batch (the test's)")
            return original(batcher, texts, n, engine)

        batcher.translate = held

    def wait_entered(self, timeout_s: float = 30) -> None:
        """Until a decoder has taken a batch and is held."""
        assert self.entered.acquire(timeout=timeout_s), f"no batch taken within {timeout_s} s"

    def release(self) -> None:
        """Let the decoders go (with `fail`, every batch from now on raises, until `restore()`)."""
        self.gate.set()

    def restore(self) -> None:
        """Decode as usual again."""
        del self.batcher.translate


class ThreadServer:
    """The app under uvicorn in a daemon thread of this process."""

    def __init__(self, cfg: ServeConfig) -> None:
        self.state = make_state(cfg, load_models(cfg))
        self.server = DrainingServer(uvicorn_config(self.state), self.state)
        sock = bind("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True,
                                       name="test-uvicorn")
        self.thread.start()
        wait_ready(self.url, self.thread.is_alive)

    def hold(self, fail: bool = False) -> Hold:
        """Hold every decoder before its next batch (`Hold.release()` lets them go); with `fail`,
        every batch then raises, as a broken model would."""
        return Hold(self.state.batcher, fail)

    def wait_queue(self, depth: int, timeout_s: float = 30) -> None:
        """Until exactly `depth` sentences are queued."""
        deadline = time.monotonic() + timeout_s
        while len(self.state.batcher.queue) != depth:
            assert time.monotonic() < deadline, f"queue depth {len(self.state.batcher.queue)}, expected {depth}"
            time.sleep(0.01)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)


# `nmt serve` with torch made unimportable: the server must never need it
TORCH_BLOCKED = ("import sys; sys.modules['torch'] = None; from nmt.cli import main; "
                 "sys.exit(main(['serve', *sys.argv[1:]]))")


class ProcessServer:
    """`nmt serve ...` in a process (and session) of its own, with torch blocked; its log in `log`."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        with log.open("w") as fh:
            self.proc = subprocess.Popen([sys.executable, "-c", TORCH_BLOCKED, "--port", str(self.port), *args],
                                         cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        wait_ready(self.url, lambda: self.proc.poll() is None)

    def signal(self, sig: int) -> None:
        os.kill(self.proc.pid, sig)

    def wait(self, timeout_s: float) -> int:
        return self.proc.wait(timeout=timeout_s)

    def close(self) -> None:
        """SIGTERM, then SIGKILL if it has not exited within 30 s."""
        for sig, wait_s in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
            if self.proc.poll() is not None:
                return
            os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                continue


def post(url: str, timeout_s: float = 60, path: str = "/translate", **kwargs: Any) -> httpx.Response:
    """POST /translate (or `path`; JSON, form or files as given), bounded in time."""
    return httpx.post(f"{url}{path}", timeout=timeout_s, **kwargs)


def ask(q: Any, **fields: Any) -> dict[str, Any]:
    """A LibreTranslate JSON body."""
    return {"q": q, "source": "de", "target": "en", **fields}


def reversed_package(package: Path, out: Path) -> Path:
    """A copy of the (copy-task, so symmetric) package relabelled English->German: its card's
    languages and its tokenizer's, the tokenizer's hash in the card updated. Two directions for
    the tests of a server with several packages."""
    return relabelled_package(package, out, "en", "de")


def relabelled_package(package: Path, out: Path, src: str, tgt: str) -> Path:
    """A copy of the copy-task package relabelled `src`->`tgt` (see `reversed_package`)."""
    import hashlib
    import json
    import shutil

    shutil.copytree(package, out)
    tok = json.loads((out / "tokenizer.json").read_text())
    tok.update(src_lang=src, tgt_lang=tgt, tokenizer=f"spacy.blank('{src}').tokenizer")
    (out / "tokenizer.json").write_text(json.dumps(tok))
    card = json.loads((out / "model.json").read_text())
    card["languages"] = {"src": src, "tgt": tgt}
    card["files"]["tokenizer.json"] = hashlib.sha256((out / "tokenizer.json").read_bytes()).hexdigest()
    write_card(out, card)  # re-sealed: the card's own digest (issue 80)
    return out


def offline(translator: Any, lines: list[str]) -> list[str]:
    """What the server answers for one-sentence texts, without the server: the same translator
    through `translate_sentences` (spans kept, the loop guard's choice first)."""
    from nmt.translate.decoding import translate_sentences

    return [out.texts[0] for out in translate_sentences(translator, list(lines))[0]]


def offline_html(package: Path, html: str) -> str:
    """What the server answers for `format: html`, without the server: the Python API on the same
    package (`nmt.translate.local`: tag pairs put back by the model's alignment)."""
    from nmt.translate.local import LocalTranslator
    from nmt.translate.models import ModelOptions

    return LocalTranslator.open(package, ModelOptions(device="cpu", threads=1)).translate_html([html]).texts[0]


def both_packages(package: Path, root: Path) -> Path:
    """`root` as a folder of two packages: de-en (the test package) and en-de (its relabelled copy)."""
    import shutil

    shutil.copytree(package, root / "de-en")
    reversed_package(package, root / "en-de")
    return root
