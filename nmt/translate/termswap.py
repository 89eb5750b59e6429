"""A glossary's matches swapped for placeholders before decoding, and back after (the rules:
docs/serving.md, "Terminology"): `mask_terms` masks a sentence's terms, do-not-translate spans and
protected spans as numbered placeholders; `TermMasked.restore` writes the target terms back.
`mask_sentences` and `restore_all` are the one way every path (the server's routes, `nmt translate`)
applies a glossary around decoding.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nmt.translate.glossary import Glossary, Term
from nmt.translate.spans import PLACEHOLDER, PROTECTED, Masked, mask

_JOIN_BEFORE = re.compile(r"[\w.,:/%+\-]$")  # would run into a placeholder written after it
_JOIN_AFTER = re.compile(r"[\w%]|[.,:/+\-][\w]")  # would run into a placeholder written before it
_WORDISH = re.compile(r"\w")


def _written(term: Term, source_text: str) -> tuple[str, str]:
    """What a matched term's placeholder becomes: (anywhere, where it opens the translation)."""
    if term.keep:
        return source_text, source_text
    target = term.target
    letters = [c for c in source_text if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters) and not term.source.isupper():
        target = target.upper()
    initial = target[:1].upper() + target[1:] if target.islower() else target
    return target, initial


@dataclass(frozen=True)
class TermMasked(Masked):
    """A `Masked` with glossary or do-not-translate spans: `initial[k]` is span k's form where its
    placeholder opens the translation (a capital); `terms`: the terms matched, in order."""

    initial: tuple[str, ...] = ()
    terms: tuple[Term, ...] = ()

    def restore(self, translation: str) -> str:
        first = PLACEHOLDER.search(translation)
        if first and not _WORDISH.search(translation[:first.start()]):
            k = int(first.group(0))
            if 1 <= k <= len(self.spans) and self.initial[k - 1] != self.spans[k - 1]:
                spans = (*self.spans[:k - 1], self.initial[k - 1], *self.spans[k:])
                return Masked(self.text, spans).restore(translation)
        return super().restore(translation)


def mask_terms(sentence: str, glossary: Glossary | None = None, keep: Iterable[str] = ()) -> Masked:
    """`sentence` with its terms, do-not-translate spans (`keep`, or those in `glossary`) and
    protected spans (`nmt.translate.spans`) replaced by placeholder numbers, numbered in order; with
    none of the first two in it, exactly `spans.mask(sentence)`."""
    keep = list(keep)
    if keep:
        glossary = (glossary or Glossary(())).keeping(keep)
    matches = glossary.find(sentence) if glossary is not None else []
    if not matches:
        return mask(sentence)
    pieces: list[tuple[int, int, Term | None]] = list(matches)
    # in order, disjoint: the one that could hold a span is found by bisection
    match_starts = [s for s, _, _ in matches]
    for m in PROTECTED.finditer(sentence):
        k = bisect_right(match_starts, m.start()) - 1
        if k < 0 or matches[k][1] < m.end():  # not inside a term that takes it in
            pieces.append((m.start(), m.end(), None))
    out: list[str] = []
    spans: list[str] = []
    initial: list[str] = []
    last = 0
    for start, end, term in sorted(pieces, key=lambda p: p[0]):
        out.append(sentence[last:start])
        text = sentence[start:end]
        span, first = (text, text) if term is None else _written(term, text)
        spans.append(span)
        initial.append(first)
        number = str(len(spans))
        if term is not None:  # set off from what would run into it (a protected span is written as mask() does)
            before, after = "".join(out), sentence[end:]
            number = (" " if _JOIN_BEFORE.search(before) else "") + number + (" " if _JOIN_AFTER.match(after) else "")
        out.append(number)
        last = end
    out.append(sentence[last:])
    return TermMasked("".join(out), tuple(spans), tuple(initial), tuple(t for _, _, t in matches))


def mask_sentences(sentences: Sequence[str], glossary: Glossary | None) -> list[TermMasked | None]:
    """Each sentence's glossary terms masked before decoding (its `.text` goes to the model); None where
    there is no glossary or no term or do-not-translate span in the sentence (it is decoded as it is)."""
    if glossary is None:
        return [None] * len(sentences)
    masked = (mask_terms(sentence, glossary) for sentence in sentences)
    return [m if isinstance(m, TermMasked) else None for m in masked]


def to_model(sentences: Sequence[str], masks: Sequence[TermMasked | None]) -> list[str]:
    """What the model reads: each sentence, or its masked text where it has terms."""
    return [s if m is None else m.text for s, m in zip(sentences, masks)]


def restore_all(translations: Sequence[str], mask: TermMasked | None) -> list[str]:
    """A sentence's translations (best first) with its target terms written back."""
    return list(translations) if mask is None else [mask.restore(t) for t in translations]
