"""LibreTranslate's file routes: `POST /translate_file` and `GET /download_file/<name>`.

A multipart upload (`file`, `source`, `target`, `api_key`) is read into units by its extension
(`nmt.translate.markup.formats`: .txt, .html, .srt, .docx; anything else 415, too large 413), the units
translated as a request's texts are (`nmt.serve.api.translating`, its sentences queued
`--max-sentences` at a time), and the translated file written into a bounded folder under a name
nobody can guess (`secrets.token_urlsafe`): the answer is `{"translatedFileUrl": ...}`. A stored
file expires after `--files-keep-minutes`; the folder keeps at most `--files-max` (the oldest go
first). With `--api-keys`, the key (and its request rate) is checked before the document is read,
and the download needs the key that made the file (`api_key` in the query string; another key: 404).
Malformed documents are 400 with a one-line reason (`nmt.translate.markup.formats.BadDocument`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import TypeVar

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from nmt.errors import OutOfSpace
from nmt.serve.api.protocol import HttpError, api_key, read_body, watched
from nmt.serve.api.state import ServeState
from nmt.serve.api.translating import TextJob, deadline_of, request_timeout, run
from nmt.translate.markup.formats import (
    DocumentError,
    DocumentLimits,
    DocumentTooLarge,
    UnsupportedDocument,
    read_document,
)

log = logging.getLogger("nmt.serve")
T = TypeVar("T")


async def _upload(request: Request, body: bytes) -> tuple[dict[str, str], UploadFile]:
    """The form's text fields and its `file`."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "multipart/form-data":
        raise HttpError(400, "Invalid request: send the file as multipart/form-data (fields file, source, target)",
                        "bad_request")

    async def replay() -> dict:
        return {"type": "http.request", "body": body, "more_body": False}

    form = await Request(request.scope, receive=replay).form(max_part_size=len(body) + 1)
    upload = form.get("file")
    if not isinstance(upload, UploadFile) or not upload.filename:
        raise HttpError(400, "Invalid request: missing file (a multipart field named file, with a file name)",
                        "bad_request")
    return {k: v for k, v in form.multi_items() if isinstance(v, str)}, upload


# a file that is not translated, as the API answers it: (status, reason counted in /metrics)
DOCUMENT_REFUSALS: dict[type[DocumentError], tuple[int, str]] = {
    UnsupportedDocument: (415, "bad_request"), DocumentTooLarge: (413, "too_large")}


def document_refusal(exc: DocumentError) -> HttpError:
    status, reason = next((v for kind, v in DOCUMENT_REFUSALS.items() if isinstance(exc, kind)), (400, "bad_request"))
    return HttpError(status, str(exc), reason)


def _key(state: ServeState, given: str | None) -> str | None:
    """The key a stored file belongs to: the caller's with `--api-keys`, else none (anyone's file)."""
    return given if state.keys.keys is not None else None


def _check_chars(state: ServeState, key: str | None, chars: int) -> None:
    """The key's `chars_per_request`, once the document's text is counted (the key itself and its
    request rate were checked before the document was read)."""
    limits = state.keys.keys.get(key) if state.keys.keys is not None and key is not None else None
    if limits is not None and limits.chars_per_request and chars > limits.chars_per_request:
        raise HttpError(429, f"this file has {chars} characters of text; this key may send "
                             f"{limits.chars_per_request} per request: split it", "rate_limited")


async def translate_file(request: Request) -> Response:
    """Admitted (not draining), then in this order: the body read (bounded), the form's fields, the key
    and its request rate, the languages, and only then the document parsed and translated. Counted in
    `state.in_flight` from admission to answer, so a drain waits for it."""
    state: ServeState = request.app.state.serve
    with state.admitted():
        return await _translate_file(request, state)


async def _translate_file(request: Request, state: ServeState) -> Response:
    """The whole of it within --request-timeout from admission: reading the document, every part of its
    sentences, writing the translated file."""
    cfg, deadline = state.config, deadline_of(state)
    body = await read_body(request, cfg.max_file_bytes + 65536, cfg.body_timeout_s)
    found, upload = await _upload(request, body)
    assert upload.filename  # _upload refused a file without a name
    key = api_key(found)
    state.keys.check(key, 0, time.monotonic())  # 403 / 429 before any work on the document
    for name in ("source", "target"):
        if not found.get(name):
            raise HttpError(400, f"Invalid request: missing {name} parameter", "bad_request")
    source, target = found["source"].lower(), found["target"].lower()
    engine = None if source == "auto" else state.router.route(source, target)
    data = await upload.read()
    limits = DocumentLimits(max_bytes=cfg.max_file_bytes)
    loop = asyncio.get_running_loop()
    try:
        doc = await _by(deadline, cfg.request_timeout_s,
                        loop.run_in_executor(state.doc_pool, read_document, upload.filename, data, limits))
    except DocumentError as exc:
        raise document_refusal(exc) from None
    _check_chars(state, key, sum(map(len, doc.units)))
    if engine is None:
        detected = await loop.run_in_executor(state.text_pool, state.router.detect, " ".join(doc.units[:50]))
        engine = state.router.route_auto([detected], target)[0]
    glossary = state.glossaries.get(engine.current.direction)  # --glossary: a file's terms as a text's
    job = TextJob(list(doc.units), [engine] * len(doc.units), doc.unit_objects or None, chunked=True,
                  deadline=deadline, glossaries=[glossary] * len(doc.units))
    async with watched(request) as gone:
        done = await run(state, job, gone)
    out = await _by(deadline, cfg.request_timeout_s, loop.run_in_executor(state.doc_pool, doc.write, done.texts))
    try:
        name = await loop.run_in_executor(state.doc_pool, state.files.put, upload.filename, out, _key(state, key))
    except OutOfSpace as exc:  # one line in the log naming the file and the space; nothing half-stored is served
        log.error("%s", exc)
        raise HttpError(507, "Insufficient storage: the server cannot store the translated file now (its disk "
                             "is full); try again later", "out_of_space", retry_after=60) from None
    log.info("translated file %s (%d units, %d bytes)", name.split(".", 1)[1], len(doc.units), len(out))
    return JSONResponse({"translatedFileUrl": f"{str(request.base_url).rstrip('/')}/download_file/{name}"})


async def _by(deadline: float, whole_s: float, work: Awaitable[T]) -> T:
    """`work`'s result, or 504 once `deadline` (loop time) passes (the thread it runs on finishes its
    part, bounded by the readers' limits, and its result is dropped)."""
    try:
        return await asyncio.wait_for(work, max(deadline - asyncio.get_running_loop().time(), 0.0))
    except TimeoutError:
        raise request_timeout(whole_s) from None


async def download_file(request: Request) -> Response:
    """The stored file, for the key that made it (another key: 404, as for a file that is not there)."""
    state: ServeState = request.app.state.serve
    key = request.query_params.get("api_key") or None
    state.keys.check(key, 0, time.monotonic())
    path = state.files.get(request.path_params["name"], _key(state, key))
    if path is None:
        raise HttpError(404, "no such file: translated files expire after --files-keep-minutes, and are served "
                             "only with the api key that made them; translate it again", "not_found")
    return FileResponse(path, filename=path.name.split(".", 1)[1])
