"""Inline tag pairs put back by alignment instead of by placeholder (`format: html`).

`nmt.translate.markup.inline` gives the model a unit with every tag as a numbered placeholder. For tag pairs
(`<b>`...`</b>`, a link) that costs quality and placement: the model reads numbers inside the
sentence and often moves or drops them (bench/markup.py). Here a pair leaves the text the model
reads: `plain_text()` is the unit's text without its pairs' placeholders (atoms and spans keep
theirs), with each pair's character range in it; the server translates that text as any other,
aligns each range to output words (`nmt.translate.markup.align`, the model's own leave-span-out scores),
and `with_pairs()` writes the pairs' placeholders into the translation at the aligned ranges, so
`Unit.restore()` renders and repairs it as before. A pair that could not be aligned, or whose
range would cross another's, goes next to the word at the same relative place, where the
repair of `Unit.pieces()` puts it around that word.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from nmt.text.sentences import Segmented
from nmt.translate.markup.inline import CLOSE, OPEN, Unit
from nmt.translate.spans import PLACEHOLDER

_SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class PairRange:
    """Tag pair `open` (a slot index of the unit; its partner closes it) around characters
    [start, end) of the unit's plain text."""

    open: int
    start: int
    end: int


def has_pairs(unit: Unit) -> bool:
    return any(slot.kind == OPEN for slot in unit.slots)


def _kept(unit: Unit) -> list[int]:
    """The slots left in the plain text (atoms and spans), in order: placeholder j is slot kept[j - 1]."""
    return [k for k, slot in enumerate(unit.slots) if slot.kind not in (OPEN, CLOSE)]


def plain_text(unit: Unit) -> tuple[str, list[PairRange]]:
    """The unit's text without its pairs' placeholders (one space kept where two would meet), the
    atoms and spans left numbered 1, 2, ... as the server's span masking expects, and the range of
    each pair in it, in source order of the opening tags."""
    out: list[str] = []
    at: dict[int, int] = {}  # slot index -> its place in the plain text
    previous = 0
    kept = _kept(unit)
    for m in PLACEHOLDER.finditer(unit.text):
        k = int(m.group(0)) - 1
        if not 0 <= k < len(unit.slots):
            continue
        if unit.slots[k].kind not in (OPEN, CLOSE):  # an atom or span: numbered 1, 2, ... among those left
            out += [unit.text[previous:m.start()], str(kept.index(k) + 1)]
            previous = m.end()
            continue
        slot, start, last = unit.slots[k], m.start(), m.end()
        # the spaces `inline._written` set around a tag glued to its text go with it; of two
        # spaces that were the source's own, one stays
        if slot.glue_before and start > 0 and unit.text[start - 1] == " ":
            start -= 1
        if slot.glue_after and unit.text[last:last + 1] == " ":
            last += 1
        out.append(unit.text[previous:start])
        done = "".join(out)
        if (not done or _SPACE.match(done[-1])) and _SPACE.match(unit.text[last:last + 1]):
            last += 1  # "a 1 b" -> "a b"
        at[k], previous = len(done), last
    out.append(unit.text[previous:])
    text = "".join(out)
    ranges = []
    for k, slot in enumerate(unit.slots):
        if slot.kind == OPEN and k in at and slot.partner in at:
            start, end = at[k], at[slot.partner]
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            ranges.append(PairRange(k, start, end))
    return text.strip(), [PairRange(r.open, r.start - _lead(text), r.end - _lead(text)) for r in ranges]


class Aligner(Protocol):
    def align(self, source: str, target: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int] | None]:
        """Per source character range, the target characters it translates, or None."""


def align_pairs(aligner: Aligner, seg: Segmented, translations: Sequence[str],
                ranges: Sequence[PairRange]) -> dict[int, tuple[int, int] | None]:
    """Each pair's range in the joined translation (`seg.join(translations)`), aligned sentence by
    sentence; a pair across sentences is not aligned (None). A pair around placeholders only (a
    number, a URL, an image) goes around the same placeholders in the translation: they are copied,
    not translated, and numbered in order, so the model writes them without reading them."""
    sentences, separators, starts, at, src, tgt = seg.sentences, seg.separators, [], [], 0, 0
    for j, translation in enumerate(translations):
        src, tgt = src + len(separators[j]), tgt + len(separators[j])
        starts.append(src)
        at.append(tgt)
        src, tgt = src + len(sentences[j]), tgt + len(translation)
    plain, joined = "".join(seg.parts), seg.join(translations)
    asked: dict[int, list[PairRange]] = {}
    found: dict[int, tuple[int, int] | None] = {}
    for r in ranges:
        inside = [j for j, s in enumerate(starts) if s <= r.start and r.end <= s + len(sentences[j])]
        copied = _copied(plain[r.start:r.end], joined)
        if copied is not None:
            found[r.open] = copied
        elif inside:
            asked.setdefault(inside[0], []).append(r)
    for j, rs in asked.items():
        got = aligner.align(sentences[j], translations[j], [(r.start - starts[j], r.end - starts[j]) for r in rs])
        for r, span in zip(rs, got):
            found[r.open] = None if span is None else (span[0] + at[j], span[1] + at[j])
    return found


def _copied(inner: str, translation: str) -> tuple[int, int] | None:
    """Where the translation has the placeholders that are all of `inner` (None if `inner` holds
    words, or the translation lacks one of them)."""
    numbers = [m.group(0) for m in PLACEHOLDER.finditer(inner)]
    if not numbers or PLACEHOLDER.sub("", inner).strip(" ,.;:"):
        return None
    places = {m.group(0): m.span() for m in PLACEHOLDER.finditer(translation)}
    if not all(n in places for n in numbers):
        return None
    return min(places[n][0] for n in numbers), max(places[n][1] for n in numbers)


def _lead(text: str) -> int:
    return len(text) - len(text.lstrip())


def _nests(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Two character ranges are disjoint or one holds the other (empty ranges excluded)."""
    return a[1] <= b[0] or b[1] <= a[0] or (a[0] <= b[0] and b[1] <= a[1]) or (b[0] <= a[0] and a[1] <= b[1])


def with_pairs(unit: Unit, plain: str, translation: str, ranges: list[PairRange],
               aligned: Mapping[int, tuple[int, int] | None]) -> str:
    """`translation` (of `plain`) with every pair's placeholders written in: around the characters
    `aligned[open]` when given and nested well with the pairs already placed (source order: an outer
    pair first), else both next to each other at the pair's relative place in `plain` (the unit's
    repair wraps the word there)."""
    placed: dict[int, tuple[int, int]] = {}
    for r in ranges:
        span = aligned.get(r.open)
        if span is not None and span[0] < span[1] and all(_nests(span, other) for other in placed.values()):
            placed[r.open] = span
    # (place, closes first, the outer pair's open first and its close last, slot order on a tie, placeholder)
    events: list[tuple[int, int, int, int, str]] = []
    for r in ranges:
        close = unit.slots[r.open].partner
        assert close is not None
        if r.open in placed:
            a, b = placed[r.open]
            events += [(a, 1, -b, r.open, str(r.open + 1)), (b, 0, -a, close, str(close + 1))]
        else:
            where = _word_edge(translation, round(len(translation) * r.start / max(1, len(plain))))
            events += [(where, 1, 0, r.open, f"{r.open + 1} {close + 1}")]
    kept = _kept(unit)

    def numbered(text: str) -> str:  # the plain text's placeholders back to the unit's slot numbers
        return PLACEHOLDER.sub(lambda m: str(kept[int(m.group(0)) - 1] + 1) if 0 < int(m.group(0)) <= len(kept)
                        else m.group(0), text)

    out, last = [], 0
    for place, _, _, _, text in sorted(events):
        out += [numbered(translation[last:place]), f" {text} "]
        last = place
    out.append(numbered(translation[last:]))
    return "".join(out)


def _word_edge(text: str, at: int) -> int:
    """The start of the word at or after character `at` (the end of the text when none follows)."""
    at = min(max(0, at), len(text))
    while 0 < at < len(text) and not text[at - 1].isspace():
        at -= 1
    return at
