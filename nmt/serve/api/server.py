"""`nmt serve`: load, bind, run uvicorn; drain on SIGTERM, reload on SIGHUP.

Everything a user can get wrong (the model folder, the keys file, a port in use) is checked
before the server starts and reported in one line. Then one uvicorn process serves the app.
SIGTERM (or Ctrl-C) drains: /readyz turns 503 and new translate requests get 503 while the
server keeps listening; once every admitted request is answered (or `--drain-timeout` passed)
uvicorn shuts down and the process exits 0; at the deadline every request still unanswered
gets its 503 from its own handler. A second signal makes uvicorn stop without waiting for open
connections (a batch being decoded still finishes first). SIGHUP reloads the model folder as
POST /admin/reload does.
"""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import uvicorn

from nmt.errors import DataError
from nmt.serve.api.browser import check_site
from nmt.serve.api.connections import with_deadline
from nmt.serve.api.filestore import FileStore
from nmt.serve.api.limits import KeyCheck, load_keys
from nmt.serve.api.options import ServeConfig
from nmt.serve.api.routes import build_app
from nmt.serve.api.state import ServeState, settle_heap
from nmt.serve.api.watch import Watch
from nmt.serve.dispatch.batcher import Batcher
from nmt.serve.dispatch.refusals import Draining
from nmt.serve.dispatch.router import Router, package_folders
from nmt.serve.dispatch.served import Served, load_model
from nmt.serve.observe.metrics import Metrics
from nmt.translate.glossary import Glossary
from nmt.translate.models import Model

log = logging.getLogger("nmt.serve")
DRAIN_SIGNALS = (signal.SIGTERM, signal.SIGINT)
ANSWER_WAIT_S = 2.0  # after --drain-timeout, how long the handlers have to send their 503s


def load_models(config: ServeConfig) -> list[Model]:
    """Every package `--model` names (a folder of packages: each inside), loaded and verified."""
    decoders, threads = config.layout()
    return [load_model(path, int8=config.int8, threads=threads, decoders=decoders, max_batch=config.max_batch)
            for path in package_folders(config.model)]


def make_state(config: ServeConfig, models: Sequence[Model]) -> ServeState:
    """The shared state over the loaded models: one engine each (a router by direction), one
    batcher (its queue shared by the directions), metrics, keys, the traffic watch."""
    decoders, threads = config.layout()
    engines = [Served(m, int8=config.int8, threads=threads, decoders=decoders, max_batch=config.max_batch)
               for m in models]
    router = Router(engines)
    metrics = Metrics()
    watch = Watch(config, router, metrics)
    batcher = Batcher(engines, metrics, max_batch=config.max_batch, max_wait_s=config.max_wait_s,
                      max_queue=config.max_queue, queue_timeout_s=config.queue_timeout_s, decoders=decoders,
                      max_sentences=config.max_sentences, observe=watch.record)
    keys = KeyCheck(load_keys(config.api_keys, config.req_limit, config.char_limit) if config.api_keys else None)
    files = FileStore(config.files_dir, config.files_keep_minutes * 60, config.files_max)
    return ServeState(config, router, batcher, metrics, keys, watch, files, load_glossaries(config.glossary, router))


DIRECTION = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")


def load_glossaries(specs: Sequence[str], router: Router) -> dict[str, Glossary]:
    """`--glossary DIRECTION:FILE` (or a file named DIRECTION.tsv), read and checked: one per
    direction, each a direction the server has a package for."""
    out: dict[str, Glossary] = {}
    for spec in specs:
        head, sep, rest = spec.partition(":")
        direction, path = (head, Path(rest)) if sep and DIRECTION.fullmatch(head) else (Path(spec).stem, Path(spec))
        if not DIRECTION.fullmatch(direction):
            raise DataError(f"--glossary {spec}: which direction? name it DIRECTION:FILE (e.g. de-en:{spec}) or "
                            "name the file DIRECTION.tsv")
        if direction not in router.engines:
            raise DataError(f"--glossary {spec}: no package translates {direction}; the server has "
                            f"{', '.join(sorted(router.engines))}")
        if direction in out:
            raise DataError(f"--glossary {spec}: a second glossary for {direction}; merge them into one file")
        out[direction] = Glossary.read(path)
        log.info("glossary %s: %d terms for %s", path, len(out[direction]), direction)
    return out


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to host:port, or a `DataError` saying why not."""
    try:
        family, kind, proto = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)[0][:3]
        # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on such sockets, and without it a
        # keep-alive response waits ~40 ms for the client's delayed ACK (Nagle)
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise DataError(f"--host {host}: cannot listen there ({exc}); use an address of this machine") from None
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise DataError(f"--host {host} --port {port}: cannot listen ({exc.strerror or exc}); pick another port, or "
                        "stop what is listening there") from None
    sock.set_inheritable(True)
    return sock


class DrainingServer(uvicorn.Server):
    """uvicorn, with SIGTERM / Ctrl-C draining the server first and SIGHUP reloading the model."""

    def __init__(self, config: uvicorn.Config, state: ServeState) -> None:
        super().__init__(config)
        self.state = state
        self.loop: asyncio.AbstractEventLoop | None = None
        self.drain_begun = False
        self.drain_task: asyncio.Task | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = loop = asyncio.get_running_loop()
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGHUP"):
            self.loop.add_signal_handler(signal.SIGHUP, lambda: loop.create_task(self._reload()))
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig in DRAIN_SIGNALS and not self.drain_begun and self.loop is not None and not self.should_exit:
            self.drain_begun = True
            log.info("%s: draining (up to --drain-timeout %g s), then exiting", signal.Signals(sig).name,
                     self.state.config.drain_timeout_s)
            self.loop.call_soon_threadsafe(self.drain)
            return
        super().handle_exit(sig, frame)  # a second signal: uvicorn stops now

    def drain(self) -> None:
        """On the loop: refuse new work, then exit once what was admitted is answered."""
        self.state.begin_drain()
        self.drain_task = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        state = self.state
        deadline = time.monotonic() + state.config.drain_timeout_s
        while (state.in_flight or state.batcher.queue) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if state.in_flight:
            # answered by their own handlers with the documented 503, before uvicorn would cancel them (a 500)
            queued = state.fail_admitted(Draining("--drain-timeout passed before this request was translated; "
                                                  "send it to another instance", retry_after=1))
            log.warning("--drain-timeout passed with %d requests unanswered (%d with sentences queued); they get 503",
                        state.in_flight, queued)
            answered = time.monotonic() + ANSWER_WAIT_S
            while state.in_flight and time.monotonic() < answered:
                await asyncio.sleep(0.01)
        else:
            log.info("drained: every admitted request was answered")
        self.should_exit = True

    async def _reload(self) -> None:
        log.info("SIGHUP: reloading %s", ", ".join(str(m.path) for m in self.state.router.models()))
        try:
            await self.state.reload(None)
        except Exception as exc:  # logged by reload(); the old model keeps serving
            log.debug("SIGHUP reload failed: %s", exc)


def uvicorn_config(state: ServeState) -> uvicorn.Config:
    cfg = state.config
    return uvicorn.Config(build_app(state), log_config=None, access_log=False, lifespan="on", loop="asyncio",
                          timeout_graceful_shutdown=5, server_header=False, limit_concurrency=cfg.max_connections,
                          http=with_deadline(cfg.header_timeout_s), timeout_keep_alive=cfg.idle_timeout_s)  # type: ignore[arg-type]  # a float works: uvicorn passes it to call_later


def serve(config: ServeConfig) -> None:
    """Check everything, then serve until drained (SIGTERM) or stopped."""
    if config.browser_page is not None:
        check_site(config.browser_page)  # before the models load: a wrong folder is said at once
    models = load_models(config)
    state = make_state(config, models)
    settle_heap()
    sock = bind(config.host, config.port)
    host, port = sock.getsockname()[:2]
    log.info("serving %s on http://%s:%d; /readyz answers 200 once warmed up",
             "; ".join(f"{m.direction}: {m.path} ({m.kind}{', int8' if m.int8 else ''})" for m in models), host, port)
    DrainingServer(uvicorn_config(state), state).run(sockets=[sock])
