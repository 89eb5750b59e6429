"""A request's texts through the server, whatever their form: `translate_texts` and `translate_html`.

The path every translate route shares (plain text, `format: html`, `/translate_file`): the texts
are cut into sentences on a text thread (their layout kept: `nmt.translate.sentences`), the sentences
queued as one job for the batcher (each to its text's package), the request waits for them
(`--request-timeout`; a client that goes away drops its queued sentences), and the translations
are put back into each text's layout with their alternatives and confidence. HTML is translated
unit by unit (`nmt.translate.markup.html`: a unit is a block's text with its inline tags as placeholders),
and each document rebuilt around the units' translations.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from starlette.requests import Request

from nmt.serve.api.protocol import HttpError
from nmt.serve.api.state import ServeState
from nmt.serve.engine.jobs import Job
from nmt.serve.engine.package import Engine, Model
from nmt.serve.engine.router import Detected
from nmt.translate.decoding import Output
from nmt.translate.glossary import Glossary
from nmt.translate.markup.align import thread_aligner
from nmt.translate.markup.html import HtmlDocument
from nmt.translate.markup.inline import Unit
from nmt.translate.markup.pairs import with_pairs
from nmt.translate.sentences import Segmented
from nmt.translate.termswap import TermMasked, to_model
from nmt.translate.units import Plain, model_texts, plain_texts, put_pairs, split_and_mask, terms_restored


@dataclass(frozen=True)
class Texts:
    """The answer for a list of texts."""

    texts: list[str]  # per text, its translation
    alternatives: list[list[str]]  # per text, other translations (from the n-best lists)
    confidence: list[float | None]  # per text, its weakest sentence's confidence (None: unknown)
    generation: int  # the newest model generation that decoded any of the sentences
    segmented: list[Segmented] = field(default_factory=list)  # per text, its sentences and layout
    best: list[list[str]] = field(default_factory=list)  # per text, each sentence's translation


async def _client_gone(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def request_timeout(timeout_s: float) -> HttpError:
    return HttpError(504, f"not translated within --request-timeout ({timeout_s:g} s); the server is busy: retry "
                          "later, or send fewer texts (a smaller file) per request", "request_timeout")


def deadline_of(state: ServeState) -> float:
    """The loop time by which a request admitted now must be answered (`--request-timeout`)."""
    return asyncio.get_running_loop().time() + state.config.request_timeout_s


async def wait(request: Request, job: Job, timeout_s: float, whole_s: float | None = None) -> list[Output]:
    """The job's outputs; 499 when the client went away first, 504 after `timeout_s` (what is left of
    the request's `whole_s`, --request-timeout)."""
    gone = asyncio.ensure_future(_client_gone(request))
    try:
        done, _ = await asyncio.wait({job.future, gone}, timeout=max(timeout_s, 0.0),
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if job.future.done():
        return job.future.result()  # the translations, or the HttpError of its batch
    job.close()  # its sentences still queued are dropped before decoding
    if gone in done:
        raise HttpError(499, "the client closed the connection", "disconnected")
    raise request_timeout(timeout_s if whole_s is None else whole_s)


def alternative_texts(seg: Segmented, hyps: list[list[str]], wanted: int) -> list[str]:
    """Up to `wanted` other translations of a text: the j-th takes each sentence's j-th hypothesis
    (its best where it has fewer), as LibreTranslate combines a text's alternatives; only texts
    that differ from the translation and from each other."""
    best = seg.join([h[0] for h in hyps])
    out: list[str] = []
    for j in range(1, 1 + max((len(h) for h in hyps), default=1)):
        text = seg.join([h[j] if j < len(h) else h[0] for h in hyps])
        if text != best and text not in out:
            out.append(text)
    return out[:wanted]


def text_confidence(outputs: Sequence[Output]) -> float | None:
    """A text's confidence: its weakest sentence's (rounded to 4 places); None for a text without
    sentences or from an engine that keeps no scores."""
    known = [o.confidence for o in outputs if not math.isnan(o.confidence)]
    return round(min(known), 4) if known and len(known) == len(outputs) else None


async def translate_texts(request: Request, state: ServeState, texts: list[str], engines: list[Engine],
                          alternatives: int = 0, found: list[Detected] | None = None,
                          chunked: bool = False, watched: bool = True,
                          glossaries: Sequence[Glossary | None] | None = None,
                          deadline: float | None = None) -> Texts:
    """Translate `texts[i]` with `engines[i]`, answered by `deadline` (loop time; default: --request-timeout
    from now), however many parts a file's sentences are queued in. A request is admitted whole or
    refused (`--max-sentences`:
    413; a full queue: 503); `chunked` (a file) queues its sentences `--max-sentences` at a time instead,
    each part waiting for the one before. `watched`: the texts are what the traffic counts see
    (`found`: their detected languages with `source: auto`), else the caller shows them its own.
    `glossaries[i]`: text i's terminology, swapped in by placeholder (`nmt.translate.glossary`). The
    caller admitted the request on arrival (`ServeState.admitted`), so a drain begun since does not refuse
    its sentences: the drain waits for them (until its deadline: `ServeState.check_admitted`)."""
    cfg, loop = state.config, asyncio.get_running_loop()
    deadline = deadline_of(state) if deadline is None else deadline
    first_part = min(cfg.max_sentences, sum(1 for t in texts if t.strip()))  # its lower bound: a text, a sentence
    state.batcher.check_room(first_part, admitted=True)
    with state.batcher.expecting() as arrival:  # until its first part is queued, a filling batch waits a little
        segmented, masks = await loop.run_in_executor(state.text_pool, split_and_mask, state.split, texts,
                                                      [e.current.languages[0] for e in engines], glossaries)
        sentences = to_model([s for seg in segmented for s in seg.sentences], masks)
        routes = [e for seg, e in zip(segmented, engines) for _ in seg.sentences]
        size = cfg.max_sentences if chunked else max(1, len(sentences))
        state.check_admitted()
        first = state.batcher.submit(sentences[:size], n=1 + alternatives, engines=routes[:size], admitted=True,
                                     arrival=arrival)
    aside = state.watch.aside(state.text_pool, texts, engines, found) if watched else None  # languages, samples
    translated: list[Output] = []
    generation = 0
    for start in range(0, max(1, len(sentences)), size):
        if start:
            state.check_admitted()
        job = first if start == 0 else state.batcher.submit(sentences[start:start + size], n=1 + alternatives,
                                                            engines=routes[start:start + size], admitted=True)
        state.jobs.add(job)  # until answered: the drain's deadline fails it (`ServeState.fail_admitted`)
        try:
            translated += await wait(request, job, deadline - loop.time(), cfg.request_timeout_s)
        finally:
            state.jobs.discard(job)
        generation = max(generation, job.generation)
    if aside is not None:
        await aside  # done on the text thread while the sentences were decoded
    # the texts put back together on the text thread: a file of many units would hold the loop for a while
    return await loop.run_in_executor(state.text_pool, _joined, segmented, translated, masks, alternatives, generation)


def _joined(segmented: list[Segmented], translated: list[Output], masks: list[TermMasked | None], alternatives: int,
            generation: int) -> Texts:
    """Each text's translation, alternatives and confidence from its sentences' outputs (terms restored)."""
    translated = terms_restored(translated, masks)
    out, alts, confidence, best, start = [], [], [], [], 0
    for seg in segmented:
        outputs = translated[start:start + len(seg)]  # per sentence
        start += len(outputs)
        hyps = [o.texts for o in outputs]  # per sentence, best first
        best.append([h[0] for h in hyps])
        out.append(seg.join(best[-1]))
        alts.append(alternative_texts(seg, hyps, alternatives))
        confidence.append(text_confidence(outputs))
    return Texts(out, alts, confidence, generation, segmented, best)


async def translate_units(request: Request, state: ServeState, units: Sequence[Unit | None], texts: list[str],
                          routes: list[Engine], alternatives: int = 0, chunked: bool = False, watched: bool = True,
                          glossaries: Sequence[Glossary | None] | None = None,
                          deadline: float | None = None) -> Texts:
    """`translate_texts` of units of markup (`texts[i]` is `units[i].text`; a None unit is plain text):
    with an ONNX package, a unit's tag pairs leave the text the model reads and are put back where the
    model's own alignment says (`nmt.translate.markup.pairs`); a CTranslate2 folder's units keep them as placeholders.
    The translations are the units' masked texts, for `Unit.restore()`."""
    models = [e.current for e in routes]  # the models that translate them align them, a reload meanwhile or not
    plains = await asyncio.get_running_loop().run_in_executor(state.text_pool, plain_texts, units,
                                                              [m.engine == "onnx" for m in models])
    done = await translate_texts(request, state, model_texts(texts, plains), routes,
                                 alternatives, chunked=chunked, watched=watched, glossaries=glossaries,
                                 deadline=deadline)
    if not any(p is not None for p in plains):
        return done
    best = await asyncio.get_running_loop().run_in_executor(state.align_pool, _aligned, units, plains, models, done)
    others = [[a if p is None else with_pairs(u, p[0], a, p[1], {}) for a in alts]  # type: ignore[arg-type]
              for u, p, alts in zip(units, plains, done.alternatives)]
    return replace(done, texts=best, alternatives=others)


async def translate_html(request: Request, state: ServeState, docs: list[HtmlDocument], engines: list[Engine],
                         alternatives: int = 0, found: list[Detected] | None = None, chunked: bool = False,
                         glossaries: Sequence[Glossary | None] | None = None) -> Texts:
    """Translate each HTML document's units (one list for the batcher, `translate_units`) and rebuild the
    documents: the j-th alternative of a document takes each unit's j-th alternative (its translation where
    it has fewer)."""
    units = [u for doc in docs for u in doc.unit_objects]
    aside = state.watch.aside(state.text_pool, [" ".join(doc.units) for doc in docs], engines, found)
    done = await translate_units(request, state, units, [u.text for u in units],
                                 [e for doc, e in zip(docs, engines) for _ in doc.units], alternatives,
                                 chunked=chunked, watched=False,
                                 glossaries=None if glossaries is None else
                                 [g for doc, g in zip(docs, glossaries) for _ in doc.units])
    if aside is not None:
        await aside
    best, others = done.texts, done.alternatives
    texts, alts, confidence, start = [], [], [], 0
    for doc in docs:
        mine = slice(start, start + len(doc.units))
        start = mine.stop
        texts.append(doc.rebuild(best[mine]))
        versions = [doc.rebuild([a[j] if j < len(a) else b for a, b in zip(others[mine], best[mine])])
                    for j in range(alternatives)]
        alts.append(list(dict.fromkeys(v for v in versions if v != texts[-1])))
        scores = done.confidence[mine]
        confidence.append(min(scores) if scores and None not in scores else None)  # type: ignore[type-var]
    return Texts(texts, alts, confidence, done.generation)


def _aligned(units: Sequence[Unit | None], plains: list[Plain | None], models: list[Model], done: Texts) -> list[str]:
    """Each unit's translation with its pairs' placeholders written in by alignment (on the align thread)."""
    out = list(done.texts)
    for i, (unit, plain, model) in enumerate(zip(units, plains, models)):
        if unit is not None and plain is not None:
            out[i] = put_pairs(unit, plain, done.segmented[i], done.best[i], done.texts[i], thread_aligner(model))
    return out
