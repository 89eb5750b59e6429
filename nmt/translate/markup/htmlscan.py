"""An HTML source as the parser's events, each with its source text (for `nmt.translate.markup.html`).

The standard library's `html.parser.HTMLParser` (the HTML5 tokenizer's rules for what is a tag, a
comment, a declaration, raw text in `<script>`/`<style>`; lenient with broken markup, no
dependency) reports each construct; `getpos()` says where it starts, so the source text of each is
the slice up to the next one's start: joined, the events give the source back byte for byte,
entities (`convert_charrefs=False`: reported on their own) and unusual spacing inside tags included.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from html.parser import HTMLParser

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    """One construct of the source: kind (start, void, end, text, entity, comment, other), its tag
    and attributes, and its source text."""

    kind: str
    tag: str = ""
    attrs: tuple[tuple[str, str | None], ...] = ()
    raw: str = ""


class _Scanner(HTMLParser):
    """The parser's events with where each starts in the source (`getpos()`)."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=False)
        self.found: list[tuple[int, Event]] = []
        self._lines = [0, *(m.end() for m in re.finditer("\n", source))]

    def _add(self, event: Event) -> None:
        line, column = self.getpos()
        self.found.append((self._lines[line - 1] + column, event))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._add(Event("start", tag, tuple(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._add(Event("void", tag, tuple(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self._add(Event("end", tag))

    def handle_data(self, data: str) -> None:
        self._add(Event("text"))

    def handle_entityref(self, name: str) -> None:
        self._add(Event("entity"))

    def handle_charref(self, name: str) -> None:
        self._add(Event("entity"))

    def handle_comment(self, data: str) -> None:
        self._add(Event("comment"))

    def handle_decl(self, decl: str) -> None:
        self._add(Event("other"))

    def handle_pi(self, data: str) -> None:
        self._add(Event("other"))

    def unknown_decl(self, data: str) -> None:
        self._add(Event("other"))


_INERT = "\ufffd"  # put for a `<` that cannot start a construct: the parser reads it as text


def _last_comment_close(source: str) -> int:
    """Where the last `--\\s*>` (what ends a comment) starts, -1 if none: from the last `>` back."""
    at = len(source)
    while (at := source.rfind(">", 0, at)) >= 0:
        k = at
        while k > 0 and source[k - 1].isspace():
            k -= 1
        if source.startswith("--", k - 2):
            return k - 2
    return -1


def _defused(source: str) -> str:
    """`source` with each `<` that starts a construct the parser can never complete replaced by a
    character of the same length: a `<` after the last `>` (every construct ends with one), a `<!--`
    with no comment close after it. The standard library's parser tries such a construct again at
    each `<` of a run of them when it is closed, scanning to the end every time (quadratic: `<b `
    repeated); replaced, it reads them as the text it would have made of them, in one pass. The
    events' positions are the same, so their source text is taken from `source` as before."""
    last = source.rfind(">")
    if "<" in source[last + 1:]:
        source = source[:last + 1] + source[last + 1:].replace("<", _INERT)
    close = _last_comment_close(source)
    opened = source.find("<!--", max(close - 3, 0))
    if opened >= 0:
        source = source[:opened] + source[opened:].replace("<!--", _INERT + "!--")
    return source


def scan(source: str) -> list[Event]:
    """The source's constructs in order, each with its source text: joined, they are the source."""
    scanner = _Scanner(source)
    scanner.feed(_defused(source))
    scanner.close()
    starts = [at for at, _ in scanner.found] + [len(source)]
    events = [Event(e.kind, e.tag, e.attrs, source[at:end]) for (at, e), end in zip(scanner.found, starts[1:])]
    head = source[:starts[0]]
    events = ([Event("other", raw=head)] if head else []) + events
    if "".join(e.raw for e in events) != source:  # positions out of order: never seen; keep the source whole
        log.error("the HTML parser's positions do not cover the source; it is passed through untranslated")
        return [Event("other", raw=source)]
    return events


def element_end(events: list[Event], i: int) -> int:
    """The index of the end tag closing the element started at `i` (the last event if none does)."""
    tag, depth = events[i].tag, 0
    for j in range(i, len(events)):
        if events[j].tag == tag and events[j].kind in ("start", "end"):
            depth += 1 if events[j].kind == "start" else -1
            if depth == 0:
                return j
    return len(events) - 1
