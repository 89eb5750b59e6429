"""LibreTranslate's file routes: `POST /translate_file` and `GET /download_file/<name>`.

A multipart upload (`file`, `source`, `target`, `api_key`) is read into units by its extension
(`nmt.serve.documents`: .txt, .html, .srt, .docx; anything else 415, too large 413), the units
translated as a request's texts are (`nmt.serve.translating`, its sentences queued
`--max-sentences` at a time), and the translated file written into a bounded folder under a name
nobody can guess (`secrets.token_urlsafe`): the answer is `{"translatedFileUrl": ...}`. A stored
file expires after `--files-keep-minutes`; the folder keeps at most `--files-max` (the oldest go
first). With `--api-keys`, the download needs the key as well (`api_key` in the query string).
"""

from __future__ import annotations

import asyncio
import logging
import time

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from nmt.serve.documents import DocumentError, DocumentLimits, read_document
from nmt.serve.protocol import HttpError, api_key, read_body
from nmt.serve.refusals import Draining
from nmt.serve.state import ServeState
from nmt.serve.translating import translate_units

log = logging.getLogger("nmt.serve")

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


async def translate_file(request: Request) -> Response:
    state: ServeState = request.app.state.serve
    cfg = state.config
    if state.draining:
        raise Draining("the server is shutting down; send the request to another instance", retry_after=1)
    body = await read_body(request, cfg.max_file_bytes + 65536, cfg.body_timeout_s)
    found, upload = await _upload(request, body)
    for name in ("source", "target"):
        if not found.get(name):
            raise HttpError(400, f"Invalid request: missing {name} parameter", "bad_request")
    data = await upload.read()
    limits = DocumentLimits(max_bytes=cfg.max_file_bytes)
    loop = asyncio.get_running_loop()
    try:
        doc = await loop.run_in_executor(state.text_pool, read_document, upload.filename, data, limits)
    except DocumentError as exc:
        raise HttpError(exc.status, str(exc), "too_large" if exc.status == 413 else "bad_request") from None
    state.keys.check(api_key(found), sum(map(len, doc.units)), time.monotonic())
    source, target = found["source"].lower(), found["target"].lower()
    if source == "auto":
        detected = await loop.run_in_executor(state.text_pool, state.router.detect, " ".join(doc.units[:50]))
        engine = state.router.route_auto([detected], target)[0]
    else:
        engine = state.router.route(source, target)
    done = await translate_units(request, state, doc.unit_objects or [None] * len(doc.units), doc.units,
                                 [engine] * len(doc.units), chunked=True)
    out = await loop.run_in_executor(state.text_pool, doc.write, done.texts)
    name = await loop.run_in_executor(state.text_pool, state.files.put, upload.filename, out)
    log.info("translated file %s (%d units, %d bytes)", name.split(".", 1)[1], len(doc.units), len(out))
    return JSONResponse({"translatedFileUrl": f"{str(request.base_url).rstrip('/')}/download_file/{name}"})


async def download_file(request: Request) -> Response:
    state: ServeState = request.app.state.serve
    state.keys.check(request.query_params.get("api_key"), 0, time.monotonic())
    path = state.files.get(request.path_params["name"])
    if path is None:
        raise HttpError(404, "no such file: translated files expire after --files-keep-minutes; translate it again",
                        "not_found")
    return FileResponse(path, filename=path.name.split(".", 1)[1])
