"""Texts, markup units and HTML documents through a decode step: the one path every caller drives.

`prepare` cuts each text into sentences with its layout kept (a unit's tag pairs taken out first
where its model aligns them back), masks each sentence's glossary terms and kept spans, and lists
the sentences the model reads. A decode step turns those into `Output`s (`nmt.translate.decoding`:
spans, the loop guard, confidence): `nmt translate` and the Python API call it a batch at a time
(`translate_texts`), `nmt serve` queues the sentences for its batcher and waits. `finish` puts
terms back, joins each text's sentences in its layout, combines alternatives, rates confidence and
writes a unit's tag pairs back where the model's own alignment says. `rebuild_html` makes the HTML
documents from their units' translations. Nothing here knows where the texts came from.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from nmt.text.sentences import Segmented
from nmt.translate.decoding import Output
from nmt.translate.glossary import Glossary
from nmt.translate.markup.html import HtmlDocument
from nmt.translate.markup.inline import Unit
from nmt.translate.markup.pairs import Aligner, with_pairs
from nmt.translate.termswap import TermMasked, to_model
from nmt.translate.units import Plain, model_texts, plain_texts, put_pairs, split_and_mask, terms_restored

Split = Callable[[list[str], list[str]], list[Segmented]]  # texts, their languages -> each text's sentences
Decode = Callable[[list[str], int], list[Output]]  # sentences as the model reads them, n -> each one's outputs


@dataclass(frozen=True)
class Texts:
    """The answer for a list of texts (or units)."""

    texts: list[str]  # per text, its translation
    alternatives: list[list[str]]  # per text, other translations (from the n-best lists)
    confidence: list[float | None]  # per text, its weakest sentence's confidence (None: unknown)
    generation: int = 0  # the newest model generation that decoded any of the sentences (the server's)
    segmented: list[Segmented] = field(default_factory=list)  # per text, its sentences and layout
    best: list[list[str]] = field(default_factory=list)  # per text, each sentence's translation


@dataclass(frozen=True)
class Prepared:
    """Texts cut and masked for decoding."""

    units: list[Unit | None]  # per text, its unit of markup (None: plain text)
    plains: list[Plain | None]  # per text, its text without tag pairs where they leave it
    segmented: list[Segmented]  # per text, its sentences and layout
    masks: list[TermMasked | None]  # per sentence, its terms and spans masked (None: nothing masked)
    sentences: list[str]  # every text's sentences in order, as the model reads them


def prepare(split: Split, texts: list[str], langs: list[str], units: Sequence[Unit | None] | None = None,
            aligns: Sequence[bool] | None = None, glossaries: Sequence[Glossary | None] | None = None) -> Prepared:
    """`texts[i]` (`units[i].text` for a unit of markup) in language `langs[i]`, cut and masked; `aligns[i]`:
    its model puts tag pairs back by alignment; `glossaries[i]`: its terminology."""
    units = list(units) if units is not None else [None] * len(texts)
    plains = plain_texts(units, aligns if aligns is not None else [False] * len(texts))
    segmented, masks = split_and_mask(split, model_texts(texts, plains), langs, glossaries)
    return Prepared(units, plains, segmented, masks, to_model([s for seg in segmented for s in seg.sentences], masks))


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


def finish(prepared: Prepared, outputs: Sequence[Output], alternatives: int = 0,
           aligner_of: Callable[[int], Aligner | None] | None = None, generation: int = 0) -> Texts:
    """Each text's translation, `alternatives` others and confidence from its sentences' `outputs`;
    a unit's tag pairs written back by `aligner_of(i)` (text i's model's aligner), the others' kept
    as placeholders. Translations of units are their masked texts, for `Unit.restore()`."""
    restored = terms_restored(outputs, prepared.masks)
    texts, alts, confidence, best, at = [], [], [], [], 0
    for i, (seg, unit, plain) in enumerate(zip(prepared.segmented, prepared.units, prepared.plains)):
        mine = restored[at:at + len(seg)]
        at += len(mine)
        hyps = [o.texts for o in mine]  # per sentence, best first
        best.append([h[0] for h in hyps])
        joined = seg.join(best[-1])
        others = alternative_texts(seg, hyps, alternatives)
        if unit is not None and plain is not None:
            aligner = aligner_of(i) if aligner_of is not None else None
            joined = put_pairs(unit, plain, seg, best[-1], joined, aligner)
            others = [with_pairs(unit, plain[0], a, plain[1], {}) for a in others]
        texts.append(joined)
        alts.append(others)
        confidence.append(text_confidence(mine))
    return Texts(texts, alts, confidence, generation, prepared.segmented, best)


def translate_texts(decode: Decode, split: Split, texts: list[str], langs: list[str], *,
                    units: Sequence[Unit | None] | None = None, aligns: Sequence[bool] | None = None,
                    glossaries: Sequence[Glossary | None] | None = None, alternatives: int = 0,
                    aligner_of: Callable[[int], Aligner | None] | None = None) -> Texts:
    """`prepare`, `decode` (asked for 1 + `alternatives` translations per sentence), `finish`: in this thread."""
    prepared = prepare(split, texts, langs, units, aligns, glossaries)
    return finish(prepared, decode(prepared.sentences, 1 + alternatives), alternatives, aligner_of)


def html_units(docs: Sequence[HtmlDocument]) -> list[Unit]:
    """Every document's units, in order: one list for one decode."""
    return [u for doc in docs for u in doc.unit_objects]


def rebuild_html(docs: Sequence[HtmlDocument], done: Texts, alternatives: int) -> Texts:
    """Each HTML document rebuilt around its units' translations (`done`, of `html_units(docs)`): the
    j-th alternative of a document takes each unit's j-th alternative (its translation where it has fewer)."""
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
