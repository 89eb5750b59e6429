"""`format: html`: an HTML fragment or document cut into translatable units and put back.

Parsed with the standard library's `html.parser.HTMLParser` (`nmt.translate.markup.htmlscan`; no dependency,
and it never drops or reorders anything): every construct's source text is kept, and only the text between tags is
replaced, so tags, attributes, comments, the doctype and the layout between blocks come back
byte for byte.

A unit is the text of a block (between block tags: `p`, `div`, `li`, `td`, `h1`, `br`, ... and any
tag that is not inline) with its inline markup inside: `Ein <b>roter</b> Ball` is one unit,
`Ein 1 roter 2 Ball`, with the tags carried by placeholder (`nmt.translate.markup.inline`), and whitespace
and line breaks inside it are one space (as a browser shows them), so the server's text path cuts
it into sentences across the markup, never at a line break of the source. Entities are decoded
for the model (`&amp;` is `&`) and written back as the unit's source wrote them (`&nbsp;` stays
`&nbsp;`); `&` and `<` are escaped. Untouched: `<script>`, `<style>`, `<pre>`, `<textarea>`,
`<template>`, `<code>`, `<kbd>`, `<samp>`, `<var>`, `<svg>`, `<math>` and any element with
`translate="no"` or class `notranslate`, with everything inside; inside a sentence such an element
is one placeholder (`Run <code>ls</code> now` is `Run 1 now`). Attributes are never translated.

    doc = parse_html(html)
    html_out = doc.rebuild(translate(doc.units))   # translate: texts in, their translations out
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from nmt.translate.markup.htmlscan import Event, element_end, scan
from nmt.translate.markup.inline import ATOM, CLOSE, LETTER, OPEN, Tag, Unit, build_unit


class UnitBudget(Protocol):
    """What `parse_html` counts as it reads (a file's `nmt.translate.markup.formats.base.Budget`; the formats import
    this module, never the other way): each unit's text, and inline tags open in one unit."""

    def add(self, text: str) -> None: ...

    def depth(self, depth: int) -> None: ...


INLINE = frozenset("a abbr acronym b bdi bdo big cite data del dfn em font i ins label mark nobr q s small span "
                   "strike strong sub sup time tt u".split())
ATOMIC = frozenset("code kbd samp var svg math img wbr".split())  # inline, carried whole by one placeholder
VERBATIM = frozenset("script style pre textarea template code kbd samp var svg math".split())
VOID = frozenset("area base br col embed hr img input keygen link meta param source track wbr".split())
_WS = re.compile(r"[ \t\n\r\f]+")
_ESCAPES = {"&": "&amp;", "<": "&lt;"}


def untouched(event: Event) -> bool:
    """An element never translated: by its tag, or `translate="no"` / class `notranslate`."""
    attrs = {k.lower(): (v or "") for k, v in event.attrs}
    return (event.tag in VERBATIM or attrs.get("translate", "").strip().lower() == "no"
            or "notranslate" in attrs.get("class", "").split())


@dataclass(frozen=True)
class Item:
    """A piece of a flow of inline content: text (with the entities in it), open, close or atom."""

    kind: str
    raw: str
    tag: str = ""
    content: bool = False  # an atom that is part of the text (a `<code>` element), not decoration
    entities: tuple[str, ...] = ()


def _flows(events: list[Event]) -> list[str | list[Item]]:
    """The source as verbatim strings and flows of inline content, each flow between two cuts."""
    parts: list[str | list[Item]] = []
    flow: list[Item] = []
    texts: list[str] = []  # the text (and entities) run at the end of the flow, joined once it ends
    entities: list[str] = []

    def end_text() -> None:
        if texts:
            flow.append(Item("text", "".join(texts), entities=tuple(entities)))
            texts.clear()
            entities.clear()

    def cut(raw: str) -> None:
        nonlocal flow
        end_text()
        if flow:
            parts.append(flow)
            flow = []
        parts.append(raw)

    i = 0
    while i < len(events):
        e = events[i]
        void = e.kind == "void" or (e.kind == "start" and e.tag in VOID)
        if e.kind in ("text", "entity"):
            texts.append(e.raw)
            if e.kind == "entity":
                entities.append(e.raw)
            i += 1
            continue
        end_text()
        if e.kind in ("start", "void") and untouched(e):
            j = i if void else element_end(events, i)
            whole = "".join(x.raw for x in events[i:j + 1])
            if e.tag in INLINE or e.tag in ATOMIC:
                flow.append(Item(ATOM, whole, e.tag, content=True))
            else:
                cut(whole)
            i = j + 1
            continue
        item = _inline_item(e, void)
        if item is None:
            cut(e.raw)
        else:
            flow.append(item)
        i += 1
    end_text()
    if flow:
        parts.append(flow)
    return parts


def _inline_item(e: Event, void: bool) -> Item | None:
    """The flow item a tag or comment (not an untouched element) is, or None where it cuts the flow."""
    if void:
        return Item(ATOM, e.raw, e.tag) if e.tag in ATOMIC or (e.tag in INLINE and e.kind == "void") else None
    if e.kind in ("start", "end") and e.tag in INLINE:
        return Item(OPEN if e.kind == "start" else CLOSE, e.raw, e.tag)
    if e.kind == "comment":
        return Item(ATOM, e.raw)
    return None


def _partners(flow: list[Item], budget: UnitBudget | None = None) -> tuple[dict[int, int], set[int]]:
    """Pairs of tags matched in the flow (both ways), and the cuts: tags without a partner, and pairs
    that would straddle a cut. Linear: the pairs nest, so a pair around a cut is around the ends of
    every pair cut inside it, and one pass over the cuts found first is enough."""
    partner: dict[int, int] = {}
    stack: list[int] = []
    cuts: set[int] = set()
    for k, item in enumerate(flow):
        if item.kind == OPEN:
            stack.append(k)
            if budget is not None:
                budget.depth(len(stack))
        elif item.kind == CLOSE:
            if stack and flow[stack[-1]].tag == item.tag:
                o = stack.pop()
                partner[o], partner[k] = k, o
            else:
                cuts.add(k)
    cuts.update(stack)
    before = [0] * (len(flow) + 1)  # before[k]: cuts at places < k
    for k in range(len(flow)):
        before[k + 1] = before[k] + (k in cuts)
    for a, b in [(a, b) for a, b in partner.items() if a < b and before[b] - before[a + 1]]:
        cuts.update((a, b))
        del partner[a], partner[b]
    return partner, cuts


def _escape(entities: Sequence[str]) -> Callable[[str], str]:
    """Text to HTML: `&` and `<` escaped, and a character the unit's source wrote as an entity
    written as that entity again."""
    chosen = dict(_ESCAPES)
    for raw in entities:
        if len(decoded := html.unescape(raw)) == 1:
            chosen[decoded] = raw
    return lambda text: "".join(chosen.get(c, c) for c in text)


def _content(item: Item) -> bool:
    return item.content or (item.kind == "text" and bool(_WS.sub("", html.unescape(item.raw))))


def _segment(items: list[Item], partner: dict[int, int], offset: int) -> list[str | tuple[Unit, Callable]]:
    """A flow's segment between cuts: verbatim markup around a unit (none without letters)."""
    found = [k for k, item in enumerate(items) if _content(item)]
    if not found:
        return ["".join(item.raw for item in items)]
    a, b = found[0], found[-1]
    while True:  # take in the partners of the tags inside
        inside = [partner[offset + k] - offset for k in range(a, b + 1) if offset + k in partner]
        lo, hi = min([a, *inside]), max([b, *inside])
        if (lo, hi) == (a, b):
            break
        a, b = lo, hi
    lead = "".join(item.raw for item in items[:a])
    tail = "".join(item.raw for item in items[b + 1:])
    body = list(items[a:b + 1])
    if body[0].kind == "text":
        stripped = body[0].raw.lstrip(" \t\n\r\f")
        lead += body[0].raw[:len(body[0].raw) - len(stripped)]
        body[0] = Item("text", stripped, entities=body[0].entities)
    if body[-1].kind == "text":
        stripped = body[-1].raw.rstrip(" \t\n\r\f")
        tail = body[-1].raw[len(stripped):] + tail
        body[-1] = Item("text", stripped, entities=body[-1].entities)
    texts = [_WS.sub(" ", html.unescape(item.raw)) for item in body if item.kind == "text"]
    if not any(LETTER.search(t) for t in texts):
        return ["".join(item.raw for item in items)]
    pieces: list[str | Tag] = []
    for k, item in enumerate(body):
        p = partner.get(offset + a + k)
        pieces.append(_WS.sub(" ", html.unescape(item.raw)) if item.kind == "text" else
                      Tag(item.kind, item.raw, None if p is None else p - offset - a))
    unit = build_unit(pieces)
    return [lead, (unit, _escape([r for item in body for r in item.entities])), tail]


def _units(flow: list[Item], budget: UnitBudget | None = None) -> list[str | tuple[Unit, Callable]]:
    partner, cuts = _partners(flow, budget)
    out: list[str | tuple[Unit, Callable]] = []
    start = 0
    for c in sorted(cuts) + [len(flow)]:
        if c > start:
            segment = _segment(flow[start:c], partner, start)
            if budget is not None and len(segment) == 3:
                budget.add(segment[1][0].text)  # type: ignore[union-attr]
            out += segment
        if c < len(flow):
            out.append(flow[c].raw)
        start = c + 1
    return out


@dataclass(frozen=True)
class HtmlDocument:
    """An HTML source as verbatim strings and units (each with its escaping), in order."""

    parts: tuple[str | tuple[Unit, Callable[[str], str]], ...]

    @property
    def units(self) -> list[str]:
        """The units' masked texts: what to translate."""
        return [p[0].text for p in self.parts if isinstance(p, tuple)]

    @property
    def unit_objects(self) -> list[Unit]:
        """The units themselves, in the order of `units`."""
        return [p[0] for p in self.parts if isinstance(p, tuple)]

    def rebuild(self, translations: Sequence[str]) -> str:
        """The source with unit i replaced by `translations[i]` (tags put back, text escaped)."""
        units = [p for p in self.parts if isinstance(p, tuple)]
        if len(translations) != len(units):
            raise ValueError(f"{len(translations)} translations for {len(units)} units")
        done = iter(unit.restore(t, escape) for (unit, escape), t in zip(units, translations))
        return "".join(p if isinstance(p, str) else next(done) for p in self.parts)


def parse_html(source: str, budget: UnitBudget | None = None) -> HtmlDocument:
    """`source` (a fragment or a whole document) cut into verbatim parts and units; with a `budget`
    (a file's), its units, characters and nesting counted as they are found."""
    parts: list[str | tuple[Unit, Callable]] = []
    for part in _flows(scan(source)):
        parts += [part] if isinstance(part, str) else _units(part, budget)
    return HtmlDocument(tuple(p for p in parts if p != ""))
