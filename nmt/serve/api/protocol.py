"""LibreTranslate's request and response shapes, read strictly, with errors a client can act on.

`POST /translate` takes JSON or a form (url-encoded or multipart), and so does `GET
/translate` (fields in the query string or in the body, as some clients send them):
`q` (a text, or a list of texts), `source` (the model's source language, or `auto`), `target`,
`format` (`text`), `alternatives` (a count) and `api_key`. The answer is
`{"translatedText": ...}`, a string for a string `q` and a list for a list, with
`alternatives` (a list per text) when asked for and `detectedLanguage` when `source` is
`auto`. Every error is `{"error": MESSAGE}` with its status (`HttpError`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse


class HttpError(Exception):
    """An answer other than 200: `{"error": message}` with `status`, counted under `reason`."""

    def __init__(self, status: int, message: str, reason: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.reason, self.retry_after = status, message, reason, retry_after

    def response(self) -> JSONResponse:
        headers = {"Retry-After": str(self.retry_after)} if self.retry_after is not None else None
        return JSONResponse({"error": self.message}, status_code=self.status, headers=headers)


@dataclass(frozen=True)
class TranslateCall:
    """A checked translate request (its languages are the router's to check)."""

    texts: list[str]
    single: bool  # `q` was one string (answer with one string), not a list
    alternatives: int  # alternative translations asked for per text
    source: str  # a language code, or "auto": detect each text's language (answer with detectedLanguage)
    target: str
    api_key: str | None
    confidence: bool = False  # answer with each translation's confidence too
    html: bool = False  # format html: the texts are HTML, translated with their markup kept
    glossary: dict[str, Any] | None = None  # this request's terms, {"source term": "target" or [forms]}
    keep: list[str] | None = None  # do_not_translate: spans that come back as written

    @property
    def chars(self) -> int:
        return sum(len(t) for t in self.texts)

    @property
    def auto(self) -> bool:
        return self.source == "auto"


@contextlib.asynccontextmanager
async def watched(request: Request) -> AsyncIterator[asyncio.Event]:
    """An event set once the client disconnects, for the request's text path (`translating.run`): read from
    the connection after the body, for as long as the block runs."""
    gone = asyncio.Event()

    async def listen() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        gone.set()

    task = asyncio.ensure_future(listen())
    try:
        yield gone
    finally:
        task.cancel()


async def read_body(request: Request, limit: int, timeout_s: float | None = None) -> bytes:
    """The request body, at most `limit` bytes, else 413 (before reading it, when Content-Length says
    so); a body not received within `timeout_s` is 408."""
    too_large = HttpError(413, f"the request body is larger than --max-body-bytes ({limit} bytes); send fewer or "
                               "shorter texts per request", "too_large")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large

    async def read() -> bytes:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise too_large
            chunks.append(chunk)
        return b"".join(chunks)

    try:
        return await asyncio.wait_for(read(), timeout_s)
    except TimeoutError:
        raise HttpError(408, f"the request body did not arrive within --body-timeout ({timeout_s:g} s); send it "
                             "at once", "body_timeout") from None


async def _replay(body: bytes) -> AsyncIterator[dict[str, Any]]:
    yield {"type": "http.request", "body": body, "more_body": False}


async def fields(request: Request, body: bytes) -> dict[str, Any]:
    """The request's fields: query string, then the body (JSON object, url-encoded or multipart form);
    a field given several times in a form is a list."""
    found: dict[str, Any] = {}

    def add(pairs: list[tuple[str, Any]]) -> None:
        seen: dict[str, list[Any]] = {}
        for key, value in pairs:
            seen.setdefault(key, []).append(value)
        found.update({k: v[0] if len(v) == 1 else v for k, v in seen.items()})

    add(list(request.query_params.multi_items()))
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if not body.strip():
        return found
    if kind == "application/json" or (not kind and body.lstrip()[:1] in (b"{", b"[")):
        try:
            data = json.loads(body)
        except (UnicodeDecodeError, ValueError) as exc:
            raise HttpError(400, f"Invalid request: the body is not valid JSON ({exc})", "bad_request") from None
        if not isinstance(data, dict):
            raise HttpError(400, "Invalid request: the JSON body must be an object with q, source and target",
                            "bad_request")
        found.update(data)
    elif kind == "application/x-www-form-urlencoded" or not kind:
        try:
            add(parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False))
        except UnicodeDecodeError:
            raise HttpError(400, "Invalid request: the form is not UTF-8", "bad_request") from None
    elif kind == "multipart/form-data":
        replay = _replay(body)
        form = await Request(request.scope, receive=replay.__anext__).form()
        add([(k, v) for k, v in form.multi_items() if isinstance(v, str)])
    else:
        raise HttpError(400, f"Invalid request: content type {kind!r}; send application/json or a form", "bad_request")
    return found


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise HttpError(400, f"Invalid request: {what} must be a string", "bad_request")
    return value


def parse_texts(data: dict[str, Any], max_texts: int, max_chars: int) -> tuple[list[str], bool]:
    """`q`, a text or a list of texts, checked against the limits: (texts, whether q was one string)."""
    if data.get("q") is None:
        raise HttpError(400, "Invalid request: missing q parameter", "bad_request")
    q = data["q"]
    single = not isinstance(q, list)
    texts = [_text(q, "q")] if single else [_text(t, "every element of q") for t in q]
    if not texts:
        raise HttpError(400, "Invalid request: q is an empty list", "bad_request")
    if len(texts) > max_texts:
        raise HttpError(413, f"{len(texts)} texts in one request; the limit (--max-texts) is {max_texts}: split "
                             "the list", "too_large")
    longest = max(range(len(texts)), key=lambda i: len(texts[i]))
    if len(texts[longest]) > max_chars:
        where = "q" if single else f"q[{longest}]"
        raise HttpError(413, f"{where} has {len(texts[longest])} characters; the limit (--max-chars) is {max_chars}: "
                             "split the text", "too_large")
    return texts, single


def api_key(data: dict[str, Any]) -> str | None:
    key = data.get("api_key")
    return key if isinstance(key, str) and key else None


def parse_translate(data: dict[str, Any], max_texts: int, max_chars: int) -> TranslateCall:
    """Check the fields of a translate request (the languages: `Router.route`)."""
    for name in ("q", "source", "target"):
        if data.get(name) is None:
            raise HttpError(400, f"Invalid request: missing {name} parameter", "bad_request")
    texts, single = parse_texts(data, max_texts, max_chars)
    source, target = _text(data["source"], "source").lower(), _text(data["target"], "target").lower()
    fmt = data.get("format") or "text"
    if fmt not in ("text", "html"):
        raise HttpError(400, f"format {fmt!r} is not supported; send format text (the default) or html",
                        "bad_request")
    try:
        alternatives = int(data.get("alternatives") or 0)
    except (TypeError, ValueError):
        raise HttpError(400, "Invalid request: alternatives must be a whole number", "bad_request") from None
    if not 0 <= alternatives <= 3:
        raise HttpError(400, "Invalid request: alternatives must be 0 to 3", "bad_request")
    return TranslateCall(texts, single, alternatives, source, target, api_key(data), _flag(data, "confidence"),
                         fmt == "html", _glossary(data.get("glossary")), _keep(data.get("do_not_translate")))


def _glossary(value: Any) -> dict[str, Any] | None:
    """The optional `glossary`: a JSON object (a JSON string in a form); its terms are checked by
    `nmt.translate.glossary.Glossary.from_mapping`."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = None
    if not isinstance(value, dict):
        raise HttpError(400, 'Invalid request: glossary must be an object {"source term": "target term"} (a JSON '
                             "string of one in a form)", "bad_request")
    return value


def _keep(value: Any) -> list[str] | None:
    """The optional `do_not_translate`: a list of strings (a form may repeat the field)."""
    if value is None or value == "" or value == []:
        return None
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) and v.strip() for v in values):
        raise HttpError(400, "Invalid request: do_not_translate must be a list of non-empty strings", "bad_request")
    return values


def _flag(data: dict[str, Any], name: str) -> bool:
    """An optional yes/no field: JSON true/false, or a form's true/false/1/0 (absent: false)."""
    value = data.get(name, False)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "false", "0", ""):
        return value.lower() in ("true", "1")
    raise HttpError(400, f"Invalid request: {name} must be true or false", "bad_request")


def translate_answer(call: TranslateCall, translations: list[str], alternatives: list[list[str]],
                     detected: list[dict[str, Any]] | None, confidence: list[float | None]) -> dict[str, Any]:
    """LibreTranslate's answer: translatedText (string or list, as q was), alternatives per text
    when asked (from the beam's n-best list; none with greedy search), detectedLanguage per text
    for auto (`{"language", "confidence"}`); our addition, when asked: confidence per text (0-1, the
    lowest of its sentences'; null where unknown)."""
    answer: dict[str, Any] = {"translatedText": translations[0] if call.single else translations}
    if call.alternatives:
        answer["alternatives"] = alternatives[0] if call.single else alternatives
    if call.confidence:
        answer["confidence"] = confidence[0] if call.single else confidence
    if call.auto and detected is not None:
        answer["detectedLanguage"] = detected[0] if call.single else detected
    return answer
