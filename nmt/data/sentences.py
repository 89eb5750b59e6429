"""Splitting a multi-sentence segment into sentences, and a segment pair into sentence pairs.

The general test of a WMT task has paragraphs as segments; a model trained on sentences (and
decoding sentences) learns more from them as sentence pairs. A pair is split only when both
sides split into the same number of sentences, taken in order as aligned: a translation keeps a
paragraph's sentences in the same order almost always, and when one side joins or splits a
sentence the counts differ and the pair stays whole (the validate stage's length limits then
apply to it as to any pair).

The splitter is a rule, not a model: a sentence ends at `.`, `!`, `?` or `…` (closing quotes and
brackets after it kept with it) followed by whitespace and a capital letter, a digit or an
opening quote. It does not end after a number of one or two digits (German ordinals: "am 3. Oktober"; a year
ends a sentence), a single
letter or a word with an inner period ("z.B.", "U.S."), or a common abbreviation (`ABBREVIATIONS`).
"""

from __future__ import annotations

import re

ABBREVIATIONS = frozenset({
    # English
    "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "inc", "ltd", "co", "corp", "no", "fig", "approx",
    "gen", "sen", "rep", "gov", "lt", "col", "sgt", "capt", "mt", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec",
    # German
    "nr", "ca", "bzw", "usw", "vgl", "evtl", "ggf", "inkl", "zzgl", "bspw", "sog", "str", "tel", "hr", "fr", "abs",
    "bd", "hrsg", "mio", "mrd", "jh", "jhd", "ff", "max", "min", "okt", "dez", "geb", "gest", "dipl", "ing",
})
_END = re.compile(r"[.!?…]+[\"'”’“‘»«)\]]*(?=\s+[\"'“„‚«»(\[]*[A-ZÄÖÜ0-9])")
_LAST_WORD = re.compile(r"(\S+?)[.!?…]+[\"'”’“‘»«)\]]*$")


def _is_abbreviation(before: str) -> bool:
    """Whether the text up to (and with) a period ends in an abbreviation or a number."""
    match = _LAST_WORD.search(before)
    if match is None or not before.rstrip("\"'”’“‘»«)]").endswith("."):
        return False
    word = match.group(1).lstrip("\"'“„‚«»([")
    return ((word.isdigit() and len(word) <= 2) or len(word) == 1 or "." in word or word.lower() in ABBREVIATIONS)


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped, in order (one, the whole text, when it has no boundary)."""
    out: list[str] = []
    start = 0
    for match in _END.finditer(text):
        end = match.end()
        if _is_abbreviation(text[start:end]):
            continue
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    rest = text[start:].strip()
    if rest:
        out.append(rest)
    return out or [text.strip()]


def aligned_sentences(source: str, target: str) -> list[tuple[str, str]] | None:
    """The sentence pairs of a segment pair when both sides split into the same number of
    sentences (one pair for single sentences), else None."""
    a, b = split_sentences(source), split_sentences(target)
    return list(zip(a, b)) if len(a) == len(b) else None


def split_pair(source: str, target: str) -> list[tuple[str, str]]:
    """Sentence pairs of a segment pair when both sides split into the same number of sentences,
    else the segment pair whole."""
    return aligned_sentences(source, target) or [(source.strip(), target.strip())]
