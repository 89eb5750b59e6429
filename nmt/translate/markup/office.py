"""A .docx file's paragraphs as units, and the translations written back into its runs.

Opened and saved with python-docx (its lxml tree: every paragraph `w:p` of the body, tables and
text boxes included, and of the headers and footers). A paragraph is translated as one text, so a
sentence runs across its formatting; the formatting travels as inline markup does in HTML
(`nmt.translate.markup.inline`): the paragraph's most common run format is its base, and each stretch of runs
in another format (bold, italic, a hyperlink, a style) is a tag pair around its text, so
`Ein **roter** Ball` is `Ein 1 roter 2 Ball` and comes back as runs with the same properties
(`w:rPr`, copied) around the words the model put between 1 and 2. Tabs, pictures, symbols and
note references are atoms (kept, placed where the model puts them); a line break cuts the
paragraph into units. Runs of one format that Word split (spell-check, revision ids) are one
stretch. Paragraphs with what this reader does not rewrite safely (fields, content controls,
tracked changes, equations) are left as they are.
"""

from __future__ import annotations

import copy
import io
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from nmt import ranking
from nmt.translate.markup.inline import ATOM, CLOSE, LETTER, OPEN, Tag, Unit, build_unit

log = logging.getLogger(__name__)

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
PARTS = re.compile(r"/word/(document|header\d*|footer\d*|footnotes|endnotes)\.xml")
KEPT = {f"{W}{t}" for t in ("pPr", "bookmarkStart", "bookmarkEnd", "commentRangeStart", "commentRangeEnd",
                             "permStart", "permEnd")}  # paragraph children that stay where they are
DROPPED = {f"{W}proofErr", f"{W}lastRenderedPageBreak"}  # spell-check and layout marks Word redoes
CUTS = {f"{W}br", f"{W}cr"}
REFUSED = {f"{W}fldChar", f"{W}instrText"}  # a field's parts must stay in their order


@dataclass
class Bit:
    """One child of a run (its text `w:t`, a tab, a picture, a break) with the run's properties and
    the hyperlink holding the run (None: the paragraph)."""

    container: Any
    rpr: Any
    child: Any

    @property
    def kind(self) -> str:
        return "text" if self.child.tag == f"{W}t" else "cut" if self.child.tag in CUTS else ATOM

    @property
    def key(self) -> tuple[int, str]:
        """Runs of one key are one stretch: the same hyperlink (or none) and the same properties."""
        return id(self.container), "" if self.rpr is None else str(self.rpr.xml)


def _bits(p: Any) -> list[Bit] | None:
    """The paragraph's run children in order, or None when it holds what is not rewritten safely."""
    bits: list[Bit] = []
    for child in p:
        if child.tag in KEPT or child.tag in DROPPED:
            continue
        runs = [child] if child.tag == f"{W}r" else list(child) if child.tag == f"{W}hyperlink" else None
        if runs is None:
            return None
        for r in runs:
            if r.tag in DROPPED:
                continue
            if r.tag != f"{W}r":
                return None
            rpr = r.find(f"{W}rPr")
            for c in r:
                if c.tag in REFUSED:
                    return None
                if c.tag != f"{W}rPr" and c.tag not in DROPPED:
                    bits.append(Bit(child if child is not r else None, rpr, c))
    return bits


def _run(rpr: Any, child: Any = None, text: str | None = None) -> Any:
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    r = OxmlElement("w:r")
    if rpr is not None:
        r.append(copy.deepcopy(rpr))
    if text is not None:
        child = OxmlElement("w:t")
        child.text = text
        child.set(qn("xml:space"), "preserve")
    r.append(child)
    return r


@dataclass
class Segment:
    """Bits between two cuts: a unit with its stretches (slot `out` -> bit), or left as it is."""

    bits: list[Bit]
    unit: Unit | None = None
    stretch: dict[str, Bit] | None = None  # a pair's or atom's `out` -> the bit that gives its format
    base: Bit | None = None

    def runs(self, translation: str | None) -> list[tuple[Any, Any]]:
        """(hyperlink or None, new run) in order: the translation in the stretches' formats."""
        if self.unit is None or translation is None:
            return [(b.container, _run(b.rpr, b.child)) for b in self.bits]
        assert self.stretch is not None
        out, open_ = [], list[int]()
        for piece in self.unit.pieces(translation):
            if isinstance(piece, str):
                bit = self.stretch[self.unit.slots[open_[-1]].out] if open_ else self.base
                out.append((bit.container if bit else None, _run(bit.rpr if bit else None, text=piece)))
                continue
            slot = self.unit.slots[piece]
            if slot.kind == OPEN:
                open_.append(piece)
            elif slot.kind == CLOSE:
                open_.remove(cast(int, slot.partner))
            else:
                bit = self.stretch[slot.out]
                holder = self.stretch[self.unit.slots[open_[-1]].out].container if open_ else None
                out.append((holder, _run(bit.rpr, bit.child)))
        return out


def _segment(bits: list[Bit]) -> Segment:
    """The stretches of one format in `bits`, the base format, and the unit they make."""
    groups: list[list[Bit]] = []
    for b in bits:
        if b.kind == "text" and groups and groups[-1][0].kind == "text" and groups[-1][0].key == b.key:
            groups[-1].append(b)
        else:
            groups.append([b])
    text = {id(g): "".join(b.child.text or "" for b in g).replace("\n", " ") for g in groups if g[0].kind == "text"}
    if not any(LETTER.search(t) for t in text.values()):
        return Segment(bits)
    sizes: dict[tuple[int, str], int] = {}
    for g in groups:
        if g[0].kind == "text" and g[0].container is None:
            sizes[g[0].key] = sizes.get(g[0].key, 0) + len(text[id(g)])
    base_key = ranking.best(sizes, sizes.__getitem__) if sizes else None  # a tie: the first in the document
    pieces: list[str | Tag] = []
    stretch: dict[str, Bit] = {}
    base = None
    for g in groups:
        name = str(len(stretch))
        if g[0].kind != "text":
            stretch[name] = g[0]
            pieces.append(Tag(ATOM, name))
        elif g[0].key == base_key:
            base = base or g[0]
            pieces.append(text[id(g)])
        else:
            stretch[name] = g[0]
            pieces += [Tag(OPEN, name, len(pieces) + 2), text[id(g)], Tag(CLOSE, name, len(pieces))]
    return Segment(bits, build_unit(pieces), stretch, base)


@dataclass
class Paragraph:
    """A paragraph's segments and the cuts between them, rewritten by `write`."""

    p: Any
    segments: list[Segment]
    cuts: list[Bit]

    def write(self, translations: list[str | None]) -> None:
        from docx.oxml import OxmlElement

        runs: list[tuple[Any, Any]] = []
        for k, (segment, translation) in enumerate(zip(self.segments, translations)):
            runs += segment.runs(translation)
            if k < len(self.cuts):
                runs.append((self.cuts[k].container, _run(self.cuts[k].rpr, self.cuts[k].child)))
        for child in list(self.p):
            if child.tag not in KEPT:
                self.p.remove(child)
        holder, held = None, None
        for container, run in runs:
            if container is None:
                self.p.append(run)
                holder = held = None
                continue
            if container is not holder:
                holder, held = container, OxmlElement("w:hyperlink")
                for name, value in container.attrib.items():
                    held.set(name, value)
                self.p.append(held)
            assert held is not None
            held.append(run)


def _paragraph(p: Any) -> Paragraph | None:
    bits = _bits(p)
    if bits is None:
        log.debug("a paragraph with fields, content controls or tracked changes is kept as it is")
        return None
    segments, cuts, current = [], [], list[Any]()
    for b in bits:
        if b.kind == "cut":
            segments.append(_segment(current))
            cuts.append(b)
            current = []
        else:
            current.append(b)
    segments.append(_segment(current))
    return Paragraph(p, segments, cuts) if any(s.unit for s in segments) else None


class DocxFile:
    """A .docx file's units (`units`) and the file with their translations (`write`)."""

    def __init__(self, data: bytes) -> None:
        import docx

        self.document = docx.Document(io.BytesIO(data))
        self.paragraphs: list[Paragraph] = []
        for part in self.document.part.package.iter_parts():
            if PARTS.fullmatch(str(part.partname)) and hasattr(part, "element"):
                for p in list(part.element.iter(f"{W}p")):
                    if (found := _paragraph(p)) is not None:
                        self.paragraphs.append(found)

    @property
    def units(self) -> list[str]:
        return [u.text for u in self.unit_objects]

    @property
    def unit_objects(self) -> list[Unit]:
        return [s.unit for para in self.paragraphs for s in para.segments if s.unit]

    def write(self, translations: Sequence[str]) -> bytes:
        """The file with unit i replaced by `translations[i]`; once per `DocxFile` (the runs move)."""
        if len(translations) != len(self.units):
            raise ValueError(f"{len(translations)} translations for {len(self.units)} units")
        done = iter(translations)
        for para in self.paragraphs:
            para.write([next(done) if s.unit else None for s in para.segments])
        out = io.BytesIO()
        self.document.save(out)
        return out.getvalue()
