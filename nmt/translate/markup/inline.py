"""Inline markup carried through the model by placeholder: a unit of text and its slots.

A unit is a run of text with inline markup in it: tag pairs (HTML's `<b>`...`</b>`, a .docx run's
formatting), atoms (an `<img>`, a `<code>` element, a comment, a .docx tab) and spans (URLs,
e-mail addresses, numbers, emoji: `nmt.translate.spans`). `build_unit()` numbers them in order, as
`nmt.translate.spans.mask` numbers spans, so `Ein <b>roter</b> Ball für 5 Euro` is given to the model
as `Ein 1 roter 2 Ball für 3 Euro`: one text, cut into sentences by the server's usual text
path, whose numbers a translation model copies. The masked text is stable under
`nmt.translate.spans.mask`/`restore` (its placeholders are the only numbers it holds, in order), so the
server's per-sentence masking passes them through unchanged.

`Unit.pieces(translation)` reads the slots back where the model put them and repairs what it
broke, so the output is always well-formed: a placeholder repeated is kept once; a pair whose
halves are missing, in the wrong order, crossing another pair or around nothing (where the
source's held something) is put back around one word next to the half that survived (around the
whole unit when neither did); a span or atom the model dropped is appended at the end (as
`spans.restore` does). A tag keeps the side it was glued to in
the source (`roter</b> Ball` gives `red</b> ball`, not `red </b>ball`). The caller renders the
pieces: `Unit.restore()` as a string (HTML), or runs of a .docx paragraph.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import cast

from nmt.translate.spans import PLACEHOLDER, PROTECTED, mask

log = logging.getLogger(__name__)

OPEN, CLOSE, ATOM, SPAN = "open", "close", "atom", "span"
LETTER = re.compile(r"[^\W\d_]")  # a letter of any script: a unit worth translating has one (else kept as it is)
_JOINS = re.compile(r"[\w.,:/%+\-]")  # a character that would run into a placeholder written next to it
_SPACES = re.compile(r" {2,}")


@dataclass(frozen=True)
class Tag:
    """An input piece of markup. `kind`: OPEN, CLOSE or ATOM; `out`: what the output gets for it (an
    HTML tag's source text, or a key the caller maps back); `partner`: for a pair, the index of the
    other half among the pieces given to `build_unit`."""

    kind: str
    out: str
    partner: int | None = None


@dataclass(frozen=True)
class Slot:
    """A numbered placeholder: slot i is written `i + 1`. `partner` is a slot index; `glue_before` /
    `glue_after`: no whitespace on that side in the source, so none in the output either."""

    kind: str
    out: str
    partner: int | None = None
    glue_before: bool = False
    glue_after: bool = False
    empty: bool = False  # an opening slot whose pair holds nothing in the source


def _merge(items: list[str | int]) -> list[str | int]:
    out: list[str | int] = []
    for item in items:
        if isinstance(item, str) and out and isinstance(out[-1], str):
            out[-1] += item
        elif not (isinstance(item, str) and not item):
            out.append(item)
    return out


def _around_word(items: list[str | int], o: int, c: int, at: int, after: bool) -> int:
    """Put the pair (o, c) into `items` at `at`, around the word after it (`after`) or before it (or
    the other one where there is none; around nothing where neither is). Only the text right
    around `at` is touched, so repairs cost no more than the text they change; returns where that
    text starts (places inside it now lie just after its first piece)."""
    a, b = at, at
    while a > 0 and isinstance(items[a - 1], str):
        a -= 1
    while b < len(items) and isinstance(items[b], str):
        b += 1
    left, right = "".join(items[a:at]), "".join(items[at:b])  # type: ignore[arg-type]
    word_after, word_before = re.match(r"\s*\S+", right), re.search(r"\S+\s*$", left)
    if word_after and (after or not word_before):
        done: list[str | int] = [left, o, word_after.group(0), c, right[word_after.end():]]
    elif word_before:
        done = [left[:word_before.start()], o, word_before.group(0), c, right]
    else:
        done = [left, o, c, right]
    items[a:b] = done
    return a


@dataclass(frozen=True)
class Unit:
    """A unit's masked text (what the model translates) and its slots."""

    text: str
    slots: tuple[Slot, ...]

    def _read(self, translation: str) -> list[str | int]:
        """Text and slot indices in the order the translation has them, each slot once."""
        items: list[str | int] = []
        seen: set[int] = set()
        last = 0
        for m in PLACEHOLDER.finditer(translation):
            k = int(m.group(0)) - 1
            if 0 <= k < len(self.slots):
                items.append(translation[last:m.start()])
                if k not in seen:
                    seen.add(k)
                    items.append(k)
                last = m.end()
        items.append(translation[last:])
        return _merge(items)

    def _broken_pairs(self, items: list[str | int]) -> list[int]:
        """Opening slots of the pairs that are not well-formed in `items`: a half missing, the close
        before the open, crossing another pair (the inner one of two crossing pairs is kept), or
        around nothing when the source's pair held something (the server appends a sentence's
        dropped placeholders at its end: `... 1 2`)."""
        present = {i for i in items if isinstance(i, int)}
        bad: set[int] = set()
        stack: list[tuple[int, int]] = []  # open slot, its place in items
        for at, i in enumerate(items):
            if not isinstance(i, int) or self.slots[i].kind not in (OPEN, CLOSE):
                continue
            partner = self.slots[i].partner
            assert partner is not None
            if self.slots[i].kind == OPEN:
                if i not in bad and partner in present:
                    stack.append((i, at))
                else:
                    bad.add(i)
            elif stack and stack[-1][0] == partner:
                _, opened = stack.pop()
                if not self.slots[partner].empty and all(isinstance(x, str) and not x.strip()
                                                         for x in items[opened + 1:at]):
                    bad.add(partner)
            else:
                bad.add(partner)
                stack = [(o, a) for o, a in stack if o != partner]
        bad.update(k for k, slot in enumerate(self.slots) if slot.kind == OPEN and k not in present)
        return sorted(bad)

    def pieces(self, translation: str) -> list[str | int]:
        """The translation as text and slot indices (pairs and atoms; spans are put back as text),
        repaired so that every slot is there once and the pairs nest."""
        items = self._read(translation.strip())
        broken = self._broken_pairs(items)
        halves = {h: o for o in broken for h in (o, self.slots[o].partner)}
        kept: list[str | int] = []
        anchors: dict[int, tuple[int, bool]] = {}  # broken pair -> (place in `kept`, around the word after it)
        for i in items:
            if isinstance(i, int) and i in halves:
                o = halves[i]
                if i == o or o not in anchors:  # the open's place wins over the close's
                    anchors[o] = (len(kept), i == o)
            else:
                kept.append(i)
        moved = len(kept) + 1  # places from here on now lie inside the last text changed
        for o, (at, after) in sorted(anchors.items(), key=lambda a: -a[1][0]):  # from the end: places hold
            at = min(at, moved + 1) if at > moved else at
            moved = _around_word(kept, o, self.slots[o].partner, at, after)  # type: ignore[arg-type]
        whole = [o for o in broken if o not in anchors]  # neither half left: around the whole unit
        items = _merge([*whole, *kept, *(self.slots[o].partner for o in reversed(whole))])  # type: ignore[list-item]
        present = {i for i in items if isinstance(i, int)}
        for k, slot in enumerate(self.slots):
            if k not in present and slot.kind in (ATOM, SPAN):
                items += [" ", k]
        return self._glue(_merge([self.slots[i].out if isinstance(i, int) and self.slots[i].kind == SPAN else i
                                  for i in items]))

    def _glue(self, items: list[str | int]) -> list[str | int]:
        items = [_SPACES.sub(" ", i) if isinstance(i, str) else i for i in items]
        for k, i in enumerate(items):
            if isinstance(i, int):
                before = items[k - 1] if k > 0 else None
                after = items[k + 1] if k + 1 < len(items) else None
                if self.slots[i].glue_before and isinstance(before, str):
                    items[k - 1] = before.rstrip()
                if self.slots[i].glue_after and isinstance(after, str):
                    items[k + 1] = after.lstrip()
        if items and isinstance(items[0], str):
            items[0] = items[0].lstrip()
        if items and isinstance(items[-1], str):
            items[-1] = items[-1].rstrip()
        return _merge(items)

    def restore(self, translation: str, escape: Callable[[str], str] = str) -> str:
        """The translation with every slot's `out` in place; text (and spans) through `escape`."""
        return "".join(escape(i) if isinstance(i, str) else self.slots[i].out for i in self.pieces(translation))


def _written(seq: list[str | Slot], spaced: bool) -> str:
    """The masked text: slot k as `k + 1`; a tag or atom set off by spaces from what would run into
    it (every slot, with `spaced`)."""
    out, number = [], 0
    for k, item in enumerate(seq):
        if isinstance(item, str):
            out.append(item)
            continue
        number += 1
        before = out[-1][-1:] if out and out[-1] else ""
        after = seq[k + 1] if k + 1 < len(seq) else ""
        after = after[:1] if isinstance(after, str) else "0"
        pad = spaced or item.kind != SPAN
        if before and not before.isspace() and (pad or _JOINS.match(before)):
            out.append(" ")
        out.append(str(number))
        if after and not after.isspace() and (pad or _JOINS.match(after)):
            out.append(" ")
    return "".join(out)


def build_unit(pieces: Sequence[str | Tag]) -> Unit:
    """A unit from text (decoded, as the model should read it) and markup pieces in source order;
    the spans of the text become slots too."""
    seq: list[str | Slot] = []
    slot_of: dict[int, int] = {}  # piece index -> slot index
    count = 0
    for k, piece in enumerate(pieces):
        if isinstance(piece, Tag):
            slot_of[k], count = count, count + 1
            seq.append(Slot(piece.kind, piece.out, piece.partner))
            continue
        last = 0
        for m in PROTECTED.finditer(piece):
            seq += [piece[last:m.start()], Slot(SPAN, m.group(0))]
            last, count = m.end(), count + 1
        seq.append(piece[last:])
    seq = [s for s in seq if not (isinstance(s, str) and not s)]
    slots: list[Slot] = []
    for k, item in enumerate(seq):
        if isinstance(item, Slot):
            before, after = seq[k - 1] if k else None, seq[k + 1] if k + 1 < len(seq) else None
            glue_before = before is not None and not (isinstance(before, str) and before[-1].isspace())
            glue_after = after is not None and not (isinstance(after, str) and after[0].isspace())
            partner = None if item.partner is None else slot_of[item.partner]
            seq[k] = Slot(item.kind, item.out, partner, glue_before, glue_after)
            slots.append(cast(Slot, seq[k]))
    where = [k for k, item in enumerate(seq) if isinstance(item, Slot)]
    for k, slot in enumerate(slots):
        if slot.kind == OPEN and slot.partner is not None:  # `all` stops at the first slot or word inside
            inside = (seq[j] for j in range(where[k] + 1, where[slot.partner]))  # (no copy of the rest: linear)
            slots[k] = replace(slot, empty=all(isinstance(x, str) and not x.strip() for x in inside))
    expected = tuple(str(k) for k in range(1, len(slots) + 1))
    for spaced in (False, True):
        text = _written(seq, spaced)
        if tuple(m.group(0) for m in PLACEHOLDER.finditer(text)) == expected and mask(text).spans == expected:
            break
    else:
        log.warning("a unit's placeholders are not read back as written: %r", text)
    return Unit(text, tuple(slots))
