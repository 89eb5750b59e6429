"""The routes: LibreTranslate's API, our health, model and metrics endpoints, reload, the demo page (and the
in-browser translator's files, `--browser-page`).

`build_app(state)` returns the Starlette application over a `ServeState` (the config, the
packages by direction, the batcher, the metrics, the keys). `source`/`target` pick the package;
`source: auto` detects each text's language and routes it to the package that reads it. The event
loop only parses, admits and answers:
splitting runs on a text thread, decoding on the batcher's inference threads, loading on a
worker thread. A translate request is admitted whole or refused at once, and waits for its
sentences until they are all translated, its client goes away (its queued sentences are then
dropped) or `--request-timeout` passes (504).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from nmt.errors import NmtError
from nmt.serve.api.browser import browser_mount
from nmt.serve.api.files import download_file, translate_file
from nmt.serve.api.limits import check_admin
from nmt.serve.api.page import page as demo_page
from nmt.serve.api.protocol import (
    HttpError,
    api_key,
    fields,
    parse_texts,
    parse_translate,
    read_body,
    translate_answer,
    watched,
)
from nmt.serve.api.state import ServeState
from nmt.serve.api.timing import Timing
from nmt.serve.api.translating import TextJob, translate_chains
from nmt.serve.dispatch.refusals import BatchFailed, Draining, NotServed, QueueFull, Refused, Stale, TooManySentences
from nmt.serve.dispatch.router import PIVOT, Detected
from nmt.serve.dispatch.served import ReloadBusy, Served
from nmt.translate.glossary import GlossaryError, for_request
from nmt.translate.markup.html import parse_html

log = logging.getLogger("nmt.serve")
GENERATION = "X-Nmt-Model-Generation"  # response header: the generation of the model that translated
ROUTES = ("/", "/translate", "/detect", "/languages", "/health", "/livez", "/readyz", "/v1/model", "/metrics",
          "/admin/reload", "/translate_file")


def _state(request: Request) -> ServeState:
    return request.app.state.serve


REFUSALS: dict[type[Refused], tuple[int, str]] = {NotServed: (400, "bad_request"), QueueFull: (503, "queue_full"),
                                                  Draining: (503, "draining"), Stale: (503, "queue_timeout"),
                                                  BatchFailed: (500, "batch_failed"),
                                                  TooManySentences: (413, "too_many_sentences")}


def as_http(error: Refused) -> HttpError:
    status, reason = REFUSALS[type(error)]
    return HttpError(status, error.message, reason, retry_after=error.retry_after)


def _detected(d: Detected, engine: Served) -> dict[str, Any]:
    """LibreTranslate's detectedLanguage; a text without letters is the routed package's source, confidence 0."""
    return {"confidence": d.confidence, "language": d.language if d.confidence else engine.current.languages[0]}


async def translate(request: Request) -> Response:
    """Admitted on arrival (refused only when a drain has begun): from then on the drain waits for it while
    it is read, parsed and cut into sentences, and the batcher takes them."""
    state = _state(request)
    with state.admitted():
        return await _translate(request, state)


async def _translate(request: Request, state: ServeState) -> Response:
    cfg, router = state.config, state.router
    body = await read_body(request, cfg.max_body_bytes, cfg.body_timeout_s)
    call = parse_translate(await fields(request, body), cfg.max_texts, cfg.max_chars)
    state.keys.check(call.api_key, call.chars, time.monotonic())
    loop = asyncio.get_running_loop()
    docs = await loop.run_in_executor(state.text_pool, lambda: [parse_html(t) for t in call.texts]) if call.html else []
    plain = [" ".join(doc.units) for doc in docs] if call.html else call.texts  # what detection reads
    detected: list[dict[str, Any]] | None = None
    found: list[Detected] | None = None  # with auto, each text's language
    if call.auto:
        found = await loop.run_in_executor(state.text_pool, lambda: [router.detect(t) for t in plain])
        chains = router.chains_auto(found, call.target)
        detected = [_detected(d, c[0]) for d, c in zip(found, chains)]
    else:
        chains = [router.chain(call.source, call.target)] * len(call.texts)
    through = [i for i, c in enumerate(chains) if len(c) > 1]
    if through and call.glossary:
        hops = " then ".join(e.current.direction for e in chains[through[0]])
        raise HttpError(400, f"Invalid request: a glossary needs a package of the request's pair, and text "
                             f"{through[0]} is translated through {PIVOT} ({hops}); send it without the glossary",
                        "bad_request")
    try:
        terms = {e.current.direction: for_request(state.glossaries.get(e.current.direction), call.glossary, call.keep)
                 for c in chains for e in c}
    except GlossaryError as exc:
        raise HttpError(400, f"Invalid request: {exc}", "bad_request") from None
    engines = [c[0] for c in chains]
    job = TextJob(call.texts, engines, alternatives=call.alternatives,
                  glossaries=[terms[e.current.direction] for e in engines], found=found)
    async with watched(request) as gone:
        done = await translate_chains(state, job, chains, docs, terms, gone)
    answer = translate_answer(call, done.texts, done.alternatives, detected, done.confidence)
    if through:
        answer["pivot"] = {"language": PIVOT, "texts": through}  # ours: the texts translated through English
    return JSONResponse(answer, headers={GENERATION: str(done.generation)})


async def detect(request: Request) -> Response:
    """LibreTranslate's /detect: per text, a list of {"confidence", "language"} (one candidate: the
    detected language; confidence 0-100)."""
    state = _state(request)
    cfg = state.config
    body = await read_body(request, cfg.max_body_bytes, cfg.body_timeout_s)
    data = await fields(request, body)
    texts, single = parse_texts(data, cfg.max_texts, cfg.max_chars)
    state.keys.check(api_key(data), sum(map(len, texts)), time.monotonic())
    found = await asyncio.get_running_loop().run_in_executor(state.text_pool,
                                                             lambda: [state.router.detect(t) for t in texts])
    answer = [[{"confidence": d.confidence, "language": d.language}] for d in found]
    return JSONResponse(answer[0] if single else answer)


async def reload(request: Request) -> Response:
    state = _state(request)
    check_admin(request.headers.get("authorization"), state.config.admin_token)
    body = await read_body(request, 65536, state.config.body_timeout_s)
    try:
        data = json.loads(body) if body.strip() else {}
        path = data.get("model")
    except (ValueError, AttributeError):
        path = 0  # not a JSON object: the same answer as a model that is not a string
    if path is not None and (not isinstance(path, str) or not path.strip()):
        raise HttpError(400, 'Invalid request: the body must be empty or {"model": "FOLDER"} with FOLDER a '
                             "non-empty string", "bad_request")
    try:
        described = await state.reload(Path(path) if path else None)
    except ReloadBusy as exc:
        raise HttpError(409, str(exc), "bad_request") from None
    except NmtError as exc:
        raise HttpError(422, f"reload refused, the previous model keeps serving: {exc}", "bad_request") from None
    return JSONResponse({"status": "reloaded", "models": described})


async def page(request: Request) -> Response:
    return HTMLResponse(demo_page(_state(request).config.browser_page is not None))


async def languages(request: Request) -> Response:
    return JSONResponse(_state(request).router.languages())


async def alive(request: Request) -> Response:
    """/health (LibreTranslate's) and /livez: the process answers."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    state = _state(request)
    if state.ready:
        return JSONResponse({"status": "ready"})
    if state.batcher.warm_up_error is not None:
        return JSONResponse({"status": "failed", "error": f"the model failed its warm-up sentence "
                                                          f"({state.batcher.warm_up_error}); see the server log"},
                            status_code=503)
    return JSONResponse({"status": "draining" if state.draining else "warming up"}, status_code=503)


async def model_card(request: Request) -> Response:
    return JSONResponse({"models": [{"served": m.describe(), "card": m.card} for m in _state(request).router.models()]})


async def metrics(request: Request) -> Response:
    state = _state(request)
    state.metrics.queue_depth.set(len(state.batcher.queue))
    return Response(state.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


async def _http_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, Refused):
        exc = as_http(exc)
    if isinstance(exc, HttpError):
        _state(request).metrics.reject(exc.reason)
        return exc.response()
    assert isinstance(exc, HTTPException)
    _state(request).metrics.reject("not_found" if exc.status_code in (404, 405) else "bad_request")
    return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)


def build_app(state: ServeState) -> Starlette:
    """The application; its lifespan starts the inference threads and the translated files' purge,
    and stops them at shutdown."""
    cfg = state.config

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        def warmed() -> None:
            if state.batcher.warm_up_error is not None:
                log.error("not ready: the model failed its warm-up sentence (%s); /readyz stays 503",
                          state.batcher.warm_up_error)
                return
            state.ready = not state.draining
            log.info("ready: %s on %d decoder thread(s), %d CPU thread(s) each",
                     ", ".join(f"{m.direction} {m.path} ({m.kind})" for m in state.router.models()),
                     state.batcher.decoders, state.router.first.options["threads"])

        state.publish_models()
        state.batcher.start(asyncio.get_running_loop(), warmed)
        state.watch.start()
        purging = asyncio.create_task(state.files.run_purge(), name="nmt-files-purge")  # expired files, on a timer
        yield
        purging.cancel()
        state.begin_drain()
        state.batcher.stop()
        await asyncio.get_running_loop().run_in_executor(None, state.batcher.join)
        await state.watch.stop()  # the last traffic snapshot, everything decoded counted
        state.text_pool.shutdown(wait=False)
        state.align_pool.shutdown(wait=False)
        state.doc_pool.shutdown(wait=False)
        await asyncio.get_running_loop().run_in_executor(None, state.files.close)  # expired files; a temporary folder

    routes: list[BaseRoute] = [
        Route("/", page),
        Route("/translate", translate, methods=["GET", "POST"]),
        Route("/detect", detect, methods=["GET", "POST"]),
        Route("/languages", languages),
        Route("/health", alive),
        Route("/livez", alive),
        Route("/readyz", readyz),
        Route("/v1/model", model_card),
        Route("/metrics", metrics),
        Route("/admin/reload", reload, methods=["POST"]),
        Route("/translate_file", translate_file, methods=["POST"]),
        Route("/download_file/{name}", download_file),
    ]
    if cfg.browser_page is not None:  # the in-browser translator's static files (checked here: before listening)
        routes.append(browser_mount(cfg.browser_page))
    middleware = [Middleware(Timing, metrics=state.metrics, routes=ROUTES, access_log=cfg.access_log)]
    if cfg.cors_origins:
        middleware.append(Middleware(CORSMiddleware, allow_origins=list(cfg.cors_origins),
                                     allow_methods=["GET", "POST"], allow_headers=["Content-Type", "Authorization"]))
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                    exception_handlers={HttpError: _http_error, Refused: _http_error, HTTPException: _http_error})
    app.state.serve = state
    return app
