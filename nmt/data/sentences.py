"""Splitting a multi-sentence segment into sentences, and a segment pair into sentence pairs.

The general test of a WMT task has paragraphs as segments; a model trained on sentences (and
decoding sentences) learns more from them as sentence pairs. A pair is split only when both
sides split into the same number of sentences, taken in order as aligned: a translation keeps a
paragraph's sentences in the same order almost always, and when one side joins or splits a
sentence the counts differ and the pair stays whole (the validate stage's length limits then
apply to it as to any pair).

The sentences are those the server and `nmt translate` cut a text into (`nmt.text.sentences`, the one
splitter: spaCy's rule-based sentencizer on `spacy.blank(lang)`, whose tokenizer exceptions keep
abbreviations and German ordinals such as "z.B." and "am 3. Oktober" whole), so the training data is
cut as the served texts are.
"""

from __future__ import annotations

from nmt.text.sentences import Splitters

_split = Splitters()  # one spaCy splitter per language and thread


def split_sentences(text: str, lang: str) -> list[str]:
    """The sentences of `text` in language `lang`, stripped, in order (one, the whole text, when it has no
    boundary)."""
    return _split([text], [lang])[0].sentences or [text.strip()]


def aligned_sentences(source: str, target: str, langs: tuple[str, str]) -> list[tuple[str, str]] | None:
    """The sentence pairs of a segment pair (in `langs`) when both sides split into the same number of
    sentences (one pair for single sentences), else None."""
    a, b = split_sentences(source, langs[0]), split_sentences(target, langs[1])
    return list(zip(a, b)) if len(a) == len(b) else None


def split_pair(source: str, target: str, langs: tuple[str, str]) -> list[tuple[str, str]]:
    """Sentence pairs of a segment pair when both sides split into the same number of sentences,
    else the segment pair whole."""
    return aligned_sentences(source, target, langs) or [(source.strip(), target.strip())]
