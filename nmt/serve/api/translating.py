"""A request's texts through the server, whatever their form: `run` a `TextJob`.

The one text path (`nmt.translate.texts`) with the batcher as its decode step: the texts are cut
into sentences and masked on a text thread (`prepare`), the sentences queued as one job for the
batcher (each to its text's package), the request waits for them (`--request-timeout`; a client
that goes away, `gone`, drops its queued sentences), and the translations are put back into each
text's layout with their alternatives, confidence and tag pairs (`finish`: on the align thread
when units' pairs are aligned back). HTML is translated unit by unit and each document rebuilt
around the units' translations (`translate_html`). A text whose pair is translated through English
goes through its chain's packages one after the other (`translate_chains`). No Starlette here: the
routes hand down a job and an event that is set when the client disconnects.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from nmt.serve.api.protocol import HttpError
from nmt.serve.api.state import ServeState
from nmt.serve.dispatch.jobs import Job
from nmt.serve.dispatch.router import Detected
from nmt.serve.dispatch.served import Served
from nmt.translate.decoding import Output
from nmt.translate.glossary import Glossary
from nmt.translate.markup.align import thread_aligner
from nmt.translate.markup.html import HtmlDocument, parse_html
from nmt.translate.markup.inline import Unit
from nmt.translate.texts import Prepared, Texts, finish, html_units, prepare, rebuild_html


@dataclass(frozen=True)
class TextJob:
    """What a route asks of the server's text path."""

    texts: list[str]  # the texts (a unit's masked text where `units` has it)
    engines: list[Served]  # per text, the package that translates it
    units: Sequence[Unit | None] | None = None  # per text, its unit of markup (None: plain text)
    alternatives: int = 0  # other translations wanted per text
    glossaries: Sequence[Glossary | None] | None = None  # per text, its terminology
    found: list[Detected] | None = None  # with `source: auto`, each text's detected language (for the counts)
    chunked: bool = False  # a file: queued `--max-sentences` at a time, each part after the one before
    watched: bool = True  # the texts are what the traffic counts see (else the caller shows its own)
    deadline: float | None = None  # loop time by which it is answered (default: --request-timeout from now)


def request_timeout(timeout_s: float) -> HttpError:
    return HttpError(504, f"not translated within --request-timeout ({timeout_s:g} s); the server is busy: retry "
                          "later, or send fewer texts (a smaller file) per request", "request_timeout")


def deadline_of(state: ServeState) -> float:
    """The loop time by which a request admitted now must be answered (`--request-timeout`)."""
    return asyncio.get_running_loop().time() + state.config.request_timeout_s


async def wait(gone: asyncio.Event, job: Job, timeout_s: float, whole_s: float | None = None) -> list[Output]:
    """The job's outputs; 499 when the client went away first (`gone` set), 504 after `timeout_s` (what is
    left of the request's `whole_s`, --request-timeout)."""
    left = asyncio.ensure_future(gone.wait())
    try:
        done, _ = await asyncio.wait({job.future, left}, timeout=max(timeout_s, 0.0),
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        left.cancel()
    if job.future.done():
        return job.future.result()  # the translations, or the HttpError of its batch
    job.close()  # its sentences still queued are dropped before decoding
    if left in done:
        raise HttpError(499, "the client closed the connection", "disconnected")
    raise request_timeout(timeout_s if whole_s is None else whole_s)


async def run(state: ServeState, job: TextJob, gone: asyncio.Event) -> Texts:
    """Translate `job.texts[i]` with `job.engines[i]`, answered by its deadline, however many parts a file's
    sentences are queued in. A request is admitted whole or refused (`--max-sentences`: 413; a full queue:
    503). The caller admitted the request on arrival (`ServeState.admitted`), so a drain begun since does not
    refuse its sentences: the drain waits for them (until its deadline: `ServeState.check_admitted`)."""
    cfg, loop = state.config, asyncio.get_running_loop()
    deadline = deadline_of(state) if job.deadline is None else job.deadline
    models = [e.current for e in job.engines]  # the models that translate them align them, a reload meanwhile or not
    first_part = min(cfg.max_sentences, sum(1 for t in job.texts if t.strip()))  # its lower bound: a text, a sentence
    state.batcher.check_room(first_part, admitted=True)
    with state.batcher.expecting() as arrival:  # until its first part is queued, a filling batch waits a little
        prepared = await loop.run_in_executor(state.text_pool, prepare, state.split, job.texts,
                                              [m.languages[0] for m in models], job.units, [m.aligns for m in models],
                                              job.glossaries)
        sentences, n = prepared.sentences, 1 + job.alternatives
        routes = [e for seg, e in zip(prepared.segmented, job.engines) for _ in seg.sentences]
        size = cfg.max_sentences if job.chunked else max(1, len(sentences))
        state.check_admitted()
        first = state.batcher.submit(sentences[:size], n=n, engines=routes[:size], admitted=True, arrival=arrival)
    aside = state.watch.aside(state.text_pool, job.texts, job.engines, job.found) if job.watched else None
    outputs: list[Output] = []
    generation = 0
    for start in range(0, max(1, len(sentences)), size):
        if start:
            state.check_admitted()
        part = first if start == 0 else state.batcher.submit(sentences[start:start + size], n=n,
                                                             engines=routes[start:start + size], admitted=True)
        state.jobs.add(part)  # until answered: the drain's deadline fails it (`ServeState.fail_admitted`)
        try:
            outputs += await wait(gone, part, deadline - loop.time(), cfg.request_timeout_s)
        finally:
            state.jobs.discard(part)
        generation = max(generation, part.generation)
    if aside is not None:
        await aside  # done on the text thread while the sentences were decoded
    # put back together off the loop (a file of many units would hold it a while); aligned on the align thread
    pool = state.align_pool if any(p is not None for p in prepared.plains) else state.text_pool
    return await loop.run_in_executor(pool, _finished, prepared, outputs, job.alternatives, models, generation)


def _finished(prepared: Prepared, outputs: list[Output], alternatives: int, models: list, generation: int) -> Texts:
    return finish(prepared, outputs, alternatives, lambda i: thread_aligner(models[i]), generation)


async def translate_html(state: ServeState, docs: list[HtmlDocument], job: TextJob, gone: asyncio.Event) -> Texts:
    """Each HTML document's units translated as one job (`job.engines`, `job.glossaries` per document) and the
    documents rebuilt around them."""
    units = html_units(docs)
    per_unit = [i for i, doc in enumerate(docs) for _ in doc.units]
    aside = state.watch.aside(state.text_pool, [" ".join(doc.units) for doc in docs], job.engines, job.found)
    done = await run(state, TextJob([u.text for u in units], [job.engines[i] for i in per_unit], units,
                                    job.alternatives, None if job.glossaries is None else
                                    [job.glossaries[i] for i in per_unit], chunked=job.chunked, watched=False,
                                    deadline=job.deadline), gone)
    if aside is not None:
        await aside
    return rebuild_html(docs, done, job.alternatives)


async def translate_chains(state: ServeState, job: TextJob, chains: list[list[Served]], docs: list[HtmlDocument],
                           hop_glossaries: dict[str, Glossary | None], gone: asyncio.Event) -> Texts:
    """`job` (HTML when `docs`) with each text through its chain of packages: the first for every text, then,
    for the texts translated through English, the second on the first's translations, with the glossary of
    that package's direction (`hop_glossaries`). All by the request's one deadline; a text's confidence is
    the product of its hops' (both must be right), its alternatives the last hop's."""
    job = dataclasses.replace(job, engines=[c[0] for c in chains],
                              deadline=deadline_of(state) if job.deadline is None else job.deadline)
    done = await (translate_html(state, docs, job, gone) if docs else run(state, job, gone))
    again = [i for i, c in enumerate(chains) if len(c) > 1]
    if not again:
        return done
    texts = [done.texts[i] for i in again]
    engines = [chains[i][1] for i in again]
    second = TextJob(texts, engines, alternatives=job.alternatives, chunked=job.chunked, watched=False,
                     glossaries=[hop_glossaries.get(e.current.direction) for e in engines], deadline=job.deadline)
    if docs:
        parsed = await asyncio.get_running_loop().run_in_executor(state.text_pool, lambda: list(map(parse_html, texts)))
        more = await translate_html(state, parsed, second, gone)
    else:
        more = await run(state, second, gone)
    out, alternatives, confidence = list(done.texts), list(done.alternatives), list(done.confidence)
    for k, i in enumerate(again):
        out[i], alternatives[i] = more.texts[k], more.alternatives[k]
        a, b = confidence[i], more.confidence[k]
        confidence[i] = None if a is None or b is None else a * b
    return Texts(out, alternatives, confidence, max(done.generation, more.generation))
