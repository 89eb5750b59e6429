"""A text cut into sentences, and the translations put back in its layout.

A request's text is split at newlines, then each line by spaCy's rule-based `sentencizer`
(`spacy.blank(lang)`, nothing to download). What lies between sentences (spaces, newlines,
blank lines, `\r\n`, a list item's marker such as `- ` or `1. `) is kept verbatim, so
`Segmented.join()` of the translations keeps the text's layout: one output line per input line,
blank lines, indentation and list markers where they were; a text of whitespace only comes back
as it is. The batcher decodes the
sentences; this module never sees the model.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from nmt.text.tokenizer import import_spacy

LINE = re.compile(r"[^\n]+")
# a list item's marker at the start of a line: layout, kept with the separators, not given to the model
BULLET = re.compile(r"(?:[-*•‣◦▪–]|\d{1,3}[.)]|[a-z]\))\s+")


@dataclass(frozen=True)
class Segmented:
    """`parts[0]` separator, `parts[1]` sentence, `parts[2]` separator, ...: a text's sentences
    (odd places) with what surrounds them (even places, possibly empty)."""

    parts: tuple[str, ...]

    @property
    def sentences(self) -> list[str]:
        return list(self.parts[1::2])

    @property
    def separators(self) -> list[str]:
        """What surrounds the sentences: before the first, between each two, after the last."""
        return list(self.parts[0::2])

    def __len__(self) -> int:
        """The number of sentences."""
        return len(self.parts) // 2

    def join(self, translations: Sequence[str]) -> str:
        """The text with sentence i replaced by `translations[i]`."""
        if len(translations) != len(self):
            raise ValueError(f"{len(translations)} translations for {len(self)} sentences")
        out = [self.parts[0]]
        for translation, separator in zip(translations, self.parts[2::2]):
            out += [translation, separator]
        return "".join(out)


class SentenceSplitter:
    """spaCy's rule-based sentence splitter for language `lang`; one per thread (spaCy objects
    are not shared between threads here)."""

    def __init__(self, lang: str) -> None:
        self.nlp = import_spacy().blank(lang)
        self.nlp.add_pipe("sentencizer")

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) character offsets of the sentences of `text`, whitespace trimmed, in order."""
        lines = [(m.start(), m.group(0)) for m in LINE.finditer(text) if m.group(0).strip()]
        found = []
        for (offset, line), doc in zip(lines, self.nlp.pipe(line for _, line in lines)):
            for k, sent in enumerate(doc.sents):
                start, end = sent.start_char, sent.end_char
                piece = line[start:end]
                start += len(piece) - len(piece.lstrip())
                end -= len(piece) - len(piece.rstrip())
                bullet = BULLET.match(line, start) if k == 0 else None
                if bullet and bullet.end() < end:
                    start = bullet.end()
                if end > start:
                    found.append((offset + start, offset + end))
        return found

    def split(self, text: str) -> Segmented:
        parts, last = [], 0
        for start, end in self.spans(text):
            parts += [text[last:start], text[start:end]]
            last = end
        return Segmented(tuple(parts + [text[last:]]))


class Splitters:
    """`split(texts, langs)`: text i cut by the rules of `langs[i]`, with one splitter per language and
    thread, made on first use (the server's text threads, or the one thread of `nmt translate`)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def __call__(self, texts: list[str], langs: list[str]) -> list[Segmented]:
        made: dict[str, SentenceSplitter] = self._local.__dict__.setdefault("splitters", {})
        return [(made.get(lang) or made.setdefault(lang, SentenceSplitter(lang))).split(text)
                for text, lang in zip(texts, langs)]
