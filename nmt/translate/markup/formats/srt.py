"""`.srt` subtitle files: each cue's text lines are one unit (a sentence often runs over two lines).

Index and timing lines are untouched; the translation is cut again into as many lines as the cue
had, at the spaces nearest an even split (`wrap`); the cue's `<i>`, `<b>`, `<u>`, `<font>` and
`{\\an8}` tags are carried by placeholder (`nmt.translate.markup.inline`), tags around the whole cue kept
outside the unit. Linear in the file: tags found in one pass (`srt_tags`), wrapping by bisection.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence

from nmt.translate.markup.formats.base import Budget, Document
from nmt.translate.markup.inline import ATOM, CLOSE, LETTER, OPEN, Tag, Unit, build_unit

SRT_TAG = re.compile(r"</?([biu]|font)\b[^>]*>|\{\\[^}]*\}", re.IGNORECASE)  # one tag's text (see `srt_tags`)
_SRT_TAG_START = re.compile(r"</?([biu]|font)\b|\{\\", re.IGNORECASE)
TIMING = re.compile(r"\s*\d+:\d+:\d+[,.]\d+\s*-->\s*\d+:\d+:\d+[,.]\d+.*")


def srt_tags(text: str) -> Iterator[tuple[int, int, str]]:
    """The subtitle tags of `text`, as `SRT_TAG.finditer` finds them (start, end, lower-case name; ""
    for a `{\\...}` override) but in linear time: a tag's end is the first `>` (`}`) after its
    start, found once for all the starts before it (`SRT_TAG` itself looks for it again at every
    `<b` of an unclosed `<b <b <b ...`)."""
    pos = 0
    ends = {">": -2, "}": -2}  # the next `>` / `}` at or after the last start asked (-1: none left)
    for m in _SRT_TAG_START.finditer(text):
        if m.start() < pos:
            continue
        close = ">" if m.group(0)[0] == "<" else "}"
        at = ends[close]
        if at != -1 and at < m.end():
            at = ends[close] = text.find(close, m.end())
        if at == -1:
            continue
        pos = at + 1
        yield m.start(), pos, (m.group(1) or "").lower()


def cue_unit(lines: list[str], budget: Budget | None = None) -> tuple[str, Unit, str]:
    """A subtitle cue's lines as one unit, and the tags around all of it (kept outside the unit)."""
    text = " ".join(line.strip() for line in lines)
    pieces: list[str | Tag] = []
    names: list[str] = []  # per piece, a tag's name ("" for text and overrides)
    opened: list[int] = []  # open tags waiting for their close (atoms if none comes)
    last = 0
    for start, end, name in srt_tags(text):
        if start > last:
            pieces.append(text[last:start])
            names.append("")
        last = end
        tag = Tag(ATOM, text[start:end])
        if name and not tag.out.startswith("</"):
            opened.append(len(pieces))
            if budget is not None:
                budget.depth(len(opened))
        elif name and opened and names[opened[-1]] == name:
            o = opened.pop()
            pieces[o] = Tag(OPEN, pieces[o].out, len(pieces))  # type: ignore[union-attr]
            tag = Tag(CLOSE, tag.out, o)
        pieces.append(tag)
        names.append(name)
    if last < len(text):
        pieces.append(text[last:])
    n, d = len(pieces), 0  # d: pairs around all the rest, peeled off at once
    while (n - 2 * d > 2 and isinstance(first := pieces[d], Tag) and first.kind == OPEN
           and first.partner == n - 1 - d):
        d += 1
    head = "".join(p.out for p in pieces[:d])  # type: ignore[union-attr]
    tail = "".join(p.out for p in pieces[n - d:])  # type: ignore[union-attr]
    if d:
        pieces = [Tag(p.kind, p.out, None if p.partner is None else p.partner - d) if isinstance(p, Tag) else p
                  for p in pieces[d:n - d]]
    return head, build_unit(pieces), tail


def wrap(text: str, lines: int) -> list[str]:
    """`text` cut into `lines` lines at the spaces (outside tags) nearest an even split."""
    tags = list(srt_tags(text))
    spaces, t = [], 0
    for m in re.finditer(" ", text):
        while t < len(tags) and tags[t][1] <= m.start():
            t += 1
        if not (t < len(tags) and tags[t][0] < m.start() < tags[t][1]):
            spaces.append(m.start())
    cuts: list[int] = []
    for k in range(1, lines):
        lo = bisect.bisect_right(spaces, cuts[-1]) if cuts else 0  # the free spaces: after the last cut
        if lo == len(spaces):
            break
        target = k * len(text) / lines
        at = bisect.bisect_left(spaces, target, lo)
        near = [spaces[i] for i in (at - 1, at) if lo <= i < len(spaces)]
        cuts.append(min(near, key=lambda s: abs(s - target)))  # the first of two as near: as `min` over all
    return [text[a + 1 if a >= 0 else 0:b] for a, b in zip([-1, *cuts], [*cuts, len(text)])]


def srt_file(name: str, text: str, encode: Callable[[str], bytes], budget: Budget) -> Document:
    """A decoded .srt file as its cues' units and a writer putting the wrapped translations in their place."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.replace("\r\n", "\n").split("\n")
    cues: list[tuple[int, int]] = []  # (first text line, line after the cue)
    made: list[tuple[str, Unit, str]] = []
    kept: list[int] = []
    k = 0
    while k < len(lines):
        if lines[k].strip().isdigit() and k + 1 < len(lines) and TIMING.fullmatch(lines[k + 1]):
            end = k + 2
            while end < len(lines) and lines[end].strip():
                end += 1
            if end > k + 2:
                cues.append((k + 2, end))
                made.append(cue_unit(lines[k + 2:end], budget))
                if LETTER.search(made[-1][1].text):
                    kept.append(len(made) - 1)
                    budget.add(made[-1][1].text)  # counted as read: a file over a limit stops here
            k = end
        else:
            k += 1

    def write(translations: Sequence[str]) -> bytes:
        out = list(lines)
        for k, t in zip(kept, translations):
            (a, b), (head, unit, tail) = cues[k], made[k]
            cut = wrap(head + unit.restore(t) + tail, b - a)
            out[a:b] = cut + [None] * (b - a - len(cut))  # type: ignore[list-item]
        return encode(newline.join(line for line in out if line is not None))

    return Document(name, [made[k][1].text for k in kept], write, [made[k][1] for k in kept])
