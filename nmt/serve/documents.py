"""Files translated whole (issue 42, item 2): read into units, written back with their translations.

`read_document(name, data)` picks the format by the name's extension and returns a `Document`:
its `units` (texts to translate; each goes through the server's text path, cut into sentences
there) and `write(translations)`, the translated file's bytes. Model-free: the caller translates.

- `.txt`: each non-blank line is a unit; blank lines, indentation, `\\r\\n` and a byte-order mark
  stay as they were (as `format: text` keeps a text's layout).
- `.html`, `.htm`: `nmt.serve.markup` (tags, attributes, scripts kept; text by block, across inline tags).
- `.srt`: each cue's text lines are one unit (a sentence often runs over two lines); index and
  timing lines are untouched; the translation is cut again into as many lines as the cue had, at
  the spaces nearest an even split; the cue's `<i>`, `<b>`, `<u>`, `<font>` and `{\\an8}` tags are
  carried by placeholder (`nmt.serve.inline`).
- `.docx`: `nmt.serve.office` (paragraphs and table cells; runs and their formatting kept).

Every reader is linear in its input and counts its `DocumentLimits` as it goes (`Budget`: units,
characters, inline tags nested in one unit; for a .docx, first the real inflated size of every zip
member, chunk by chunk, and the elements, paragraphs and characters of its XML parts, pull-parsed),
so a file over a limit stops at the limit, not after a full parse (issue 51, findings 1 and 4).

Errors carry the HTTP status the server answers with: `UnsupportedDocument` (415: another
extension), `DocumentTooLarge` (413: over `DocumentLimits`), `BadDocument` (400: not UTF-8/UTF-16
text, or not a .docx inside: not a zip, a damaged member (CRC, compression), a part that is not
XML or an entity amplification lxml stops; always a one-line reason).
"""

from __future__ import annotations

import bisect
import codecs
import io
import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePath

from nmt.errors import NmtError
from nmt.serve.inline import ATOM, CLOSE, OPEN, Tag, Unit, build_unit
from nmt.serve.markup import parse_html

FORMATS = (".txt", ".html", ".htm", ".srt", ".docx")
SRT_TAG = re.compile(r"</?([biu]|font)\b[^>]*>|\{\\[^}]*\}", re.IGNORECASE)  # one tag's text (see `srt_tags`)
_SRT_TAG_START = re.compile(r"</?([biu]|font)\b|\{\\", re.IGNORECASE)
TIMING = re.compile(r"\s*\d+:\d+:\d+[,.]\d+\s*-->\s*\d+:\d+:\d+[,.]\d+.*")
_LETTER = re.compile(r"[^\W\d_]")


class DocumentError(NmtError):
    """A file that is not translated; `status` is the HTTP answer."""

    status = 400


class BadDocument(DocumentError):
    """Not text in UTF-8 or UTF-16 (with its byte-order mark), or not a .docx inside."""


class UnsupportedDocument(DocumentError):
    """A file extension no reader here takes."""

    status = 415


class DocumentTooLarge(DocumentError):
    """Over a size limit."""

    status = 413


@dataclass(frozen=True)
class DocumentLimits:
    """How large a file may be: its bytes, its text (characters of all units, counted while it is read),
    its units (lines, cues, blocks, paragraphs), inline tags nested in one unit, and a .docx unpacked
    (the real size of its members, counted while they are inflated) and the XML elements of its parts."""

    max_bytes: int = 10 * 2**20
    max_chars: int = 500_000
    max_unpacked_bytes: int = 100 * 2**20
    max_units: int = 25_000
    max_depth: int = 100
    max_xml_elements: int = 1_000_000


class Budget:
    """A file's limits counted while it is read: the reader stops at the first unit over one."""

    def __init__(self, name: str, limits: DocumentLimits) -> None:
        self.name, self.limits = name, limits
        self.units = self.chars = 0

    def add(self, text: str) -> None:
        """One more unit of `text`."""
        self.count(1, len(text))

    def count(self, units: int, chars: int) -> None:
        self.units += units
        self.chars += chars
        if self.units > self.limits.max_units:
            raise DocumentTooLarge(f"{self.name} has more than {self.limits.max_units} units of text (lines, cues, "
                                   f"blocks or paragraphs); the limit is {self.limits.max_units}: split the file")
        if self.chars > self.limits.max_chars:
            raise DocumentTooLarge(f"{self.name} has more than {self.limits.max_chars} characters of text; the "
                                   f"limit is {self.limits.max_chars}: split the file")

    def depth(self, depth: int) -> None:
        """Inline tags open `depth` deep in one unit."""
        if depth > self.limits.max_depth:
            raise DocumentTooLarge(f"{self.name} nests inline tags more than {self.limits.max_depth} deep; the limit "
                                   f"is {self.limits.max_depth}")


@dataclass(frozen=True)
class Document:
    """A file's units and the function writing the translated file."""

    name: str
    units: list[str]
    writer: Callable[[Sequence[str]], bytes]
    unit_objects: list[Unit | None] | None = None  # per unit, its markup (None: plain text), for the pairs' alignment

    def write(self, translations: Sequence[str]) -> bytes:
        if len(translations) != len(self.units):
            raise ValueError(f"{len(translations)} translations for {len(self.units)} units of {self.name}")
        return self.writer(translations)


def _decode(data: bytes, name: str) -> tuple[str, Callable[[str], bytes]]:
    """The text and how to encode the translation the same way (its byte-order mark included)."""
    for bom, encoding in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                          (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            break
    else:
        bom, encoding = b"", "utf-8"
    try:
        text = data[len(bom):].decode(encoding)
    except UnicodeDecodeError as exc:
        raise BadDocument(f"{name} is not UTF-8 text (byte {exc.start}); save it as UTF-8 and send it again") from None
    return text, lambda out: bom + out.encode(encoding)


def _layout(text: str, budget: Budget) -> tuple[list[str], list[int]]:
    """Lines as verbatim parts and units (indices of the unit parts): a unit is a line's text without
    its surrounding whitespace (and `\\r`). Linear (`str.strip`, the whitespace `\\s` matches)."""
    parts: list[str] = []
    units: list[int] = []
    start = 0
    while start >= 0:  # line by line (not split at once: a file over a limit stops there)
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if start:
            parts.append("\n")
        start = end if end < 0 else end + 1
        word = line.strip()
        if word:
            lead = len(line) - len(line.lstrip())
            parts.append(line[:lead])
            units.append(len(parts))
            parts += [word, line[lead + len(word):]]
            budget.add(word)
        else:
            parts.append(line)
    return parts, units


def _text_file(name: str, text: str, encode: Callable[[str], bytes], budget: Budget) -> Document:
    parts, units = _layout(text, budget)

    def write(translations: Sequence[str]) -> bytes:
        out = list(parts)
        for k, t in zip(units, translations):
            out[k] = t.replace("\n", " ")
        return encode("".join(out))

    return Document(name, [parts[k] for k in units], write)


def _html_file(name: str, text: str, encode: Callable[[str], bytes], budget: Budget) -> Document:
    doc = parse_html(text, budget)
    return Document(name, doc.units, lambda translations: encode(doc.rebuild(translations)), list(doc.unit_objects))


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


def _srt_file(name: str, text: str, encode: Callable[[str], bytes], budget: Budget) -> Document:
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
                if _LETTER.search(made[-1][1].text):
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


def read_document(name: str, data: bytes, limits: DocumentLimits = DocumentLimits()) -> Document:
    """The file `name` (its extension picks the format) as units and a writer."""
    suffix = PurePath(name).suffix.lower()
    if suffix not in FORMATS:
        raise UnsupportedDocument(f"{name}: files of type {suffix or '(no extension)'} are not translated; send "
                                  f"one of {', '.join(FORMATS)}")
    if len(data) > limits.max_bytes:
        raise DocumentTooLarge(f"{name} has {len(data)} bytes; the limit is {limits.max_bytes}: split the file")
    budget = Budget(name, limits)
    if suffix == ".docx":
        return _docx_file(name, data, budget)
    text, encode = _decode(data, name)
    return {".txt": _text_file, ".srt": _srt_file}.get(suffix, _html_file)(name, text, encode, budget)


def _reason(exc: BaseException) -> str:
    """An exception's message as one short line (lxml's and zipfile's can run over several)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:199] + "…"


_CHUNK = 1 << 16  # bytes inflated at a time
_XML_TYPES = re.compile(r".*[+/]xml", re.IGNORECASE)  # a content type python-docx parses as XML


def _inflate(name: str, data: bytes, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """A member's bytes, inflated `_CHUNK` at a time from its raw data (whatever its entries declare)."""
    if info.flag_bits & 0x1:
        raise BadDocument(f"{name} is a damaged zip archive (member {info.filename!r} is encrypted)")
    at = info.header_offset
    if data[at:at + 4] != b"PK\x03\x04" or len(data) < at + 30:
        raise BadDocument(f"{name} is a damaged zip archive (no local header for member {info.filename!r})")
    skip = sum(struct.unpack("<HH", data[at + 26:at + 30]))
    raw = memoryview(data)[at + 30 + skip:at + 30 + skip + info.compress_size]
    if info.compress_type == zipfile.ZIP_STORED:
        for k in range(0, len(raw), _CHUNK):
            yield bytes(raw[k:k + _CHUNK])
        return
    if info.compress_type != zipfile.ZIP_DEFLATED:
        raise BadDocument(f"{name} is a damaged zip archive (member {info.filename!r} uses compression method "
                          f"{info.compress_type}; a .docx uses deflate)")
    inflater = zlib.decompressobj(-15)
    for k in range(0, len(raw), _CHUNK):
        out = inflater.decompress(raw[k:k + _CHUNK], _CHUNK)
        while True:
            if out:
                yield out
            if not inflater.unconsumed_tail:
                break
            out = inflater.decompress(inflater.unconsumed_tail, _CHUNK)
        if inflater.eof:
            break
    if out := inflater.flush():
        yield out


class _XmlCount:
    """An XML member's elements, paragraphs with letters and characters of text counted while it is
    parsed (lxml's pull parser, each element dropped once ended: memory stays small), into the budget."""

    def __init__(self, name: str, member: str, budget: Budget, elements: list[int]) -> None:
        from lxml import etree

        from nmt.serve.office import W

        self.name, self.member, self.budget, self.elements = name, member, budget, elements
        self.parser = etree.XMLPullParser(events=("end",), resolve_entities=False, no_network=True,
                                          huge_tree=False)
        self.p, self.t, self.lettered = f"{W}p", f"{W}t", False
        self.types: dict[str, str] = {}  # [Content_Types].xml: part name or extension -> content type

    def feed(self, chunk: bytes) -> None:
        self.parser.feed(chunk)
        self._drain()

    def close(self) -> None:
        self.parser.close()
        self._drain()

    def _drain(self) -> None:
        limits = self.budget.limits
        for _, element in self.parser.read_events():
            self.elements[0] += 1
            if self.elements[0] > limits.max_xml_elements:
                raise DocumentTooLarge(f"{self.name} has more than {limits.max_xml_elements} XML elements in its "
                                       f"parts; the limit is {limits.max_xml_elements}: split the file")
            tag = element.tag
            if tag == self.t:
                text = element.text or ""
                self.budget.count(0, len(text))
                self.lettered = self.lettered or bool(_LETTER.search(text))
            elif tag == self.p:
                if self.lettered:
                    self.budget.count(1, 0)
                self.lettered = False
            elif isinstance(tag, str) and tag.endswith(("}Override", "}Default")):
                key = element.get("PartName") or "." + (element.get("Extension") or "").lower()
                self.types[key.lstrip("/")] = element.get("ContentType") or ""
            element.clear()
            while element.getprevious() is not None:
                del element.getparent()[0]


def _check_zip(name: str, data: bytes, budget: Budget) -> None:
    """Every member inflated in chunks, its real size counted (never the size its entries declare): over
    the unpacked limit, 413 there; more (or less) than it declares, or another CRC, 400. XML members
    (by name, or by the content type `[Content_Types].xml` gives them) are parsed as they come, their
    elements, paragraphs and characters counted, so a document over a limit stops at the limit."""
    limits = budget.limits
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = z.infolist()
    except (zipfile.BadZipFile, ValueError, EOFError, OSError):
        raise BadDocument(f"{name} is not a .docx file (not a zip archive)") from None
    declared = sum(i.file_size for i in members)
    if declared > limits.max_unpacked_bytes:
        raise DocumentTooLarge(f"{name} unpacks to {declared} bytes; the limit is {limits.max_unpacked_bytes}")
    members.sort(key=lambda i: i.filename != "[Content_Types].xml")
    unpacked, elements = 0, [0]
    types: dict[str, str] = {}
    for info in members:
        ext = "." + info.filename.rsplit(".", 1)[-1].lower() if "." in info.filename else ""
        xml = (info.filename.endswith((".xml", ".rels"))
               or bool(_XML_TYPES.fullmatch(types.get(info.filename, types.get(ext, "")))))
        counter = _XmlCount(name, info.filename, budget, elements) if xml else None
        real, crc = 0, 0
        for chunk in _inflate(name, data, info):
            real += len(chunk)
            unpacked += len(chunk)
            if unpacked > limits.max_unpacked_bytes:
                raise DocumentTooLarge(f"{name} unpacks to more than {limits.max_unpacked_bytes} bytes; the limit is "
                                       f"{limits.max_unpacked_bytes}")
            if real > info.file_size:
                raise BadDocument(f"{name} is a damaged zip archive (member {info.filename!r} holds more than the "
                                  f"{info.file_size} bytes it declares)")
            crc = zlib.crc32(chunk, crc)
            if counter is not None:
                counter.feed(chunk)
        if real != info.file_size or crc != info.CRC:
            raise BadDocument(f"{name} is a damaged zip archive (member {info.filename!r}: "
                              f"{'its CRC does not match' if real == info.file_size else 'shorter than it declares'})")
        if counter is not None:
            counter.close()
            if info.filename == "[Content_Types].xml":
                types = counter.types


def _docx_file(name: str, data: bytes, budget: Budget) -> Document:
    from docx.opc.exceptions import OpcError
    from lxml.etree import LxmlError

    from nmt.serve.office import DocxFile

    try:
        _check_zip(name, data, budget)  # bounded: the members' real sizes, the text counted while parsed
        docx = DocxFile(data)
    except LxmlError as exc:  # a part that is not XML, or an entity amplification lxml stopped
        raise BadDocument(f"{name} is a broken .docx file: a part is not well-formed XML "
                          f"({_reason(exc)})") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        # a member's bytes do not match its CRC, are not deflate data, use another compression, or are encrypted
        raise BadDocument(f"{name} is a damaged zip archive ({_reason(exc)})") from None
    except (KeyError, ValueError, OpcError) as exc:
        raise BadDocument(f"{name} is not a .docx file ({_reason(exc)})") from None
    final = Budget(name, budget.limits)  # the units themselves (a paragraph's line breaks make more)
    for unit in docx.units:
        final.add(unit)
    return Document(name, docx.units, docx.write, list(docx.unit_objects))


def translate_document(name: str, data: bytes, translate: Callable[[list[str]], list[str]],
                       limits: DocumentLimits = DocumentLimits()) -> bytes:
    """The file translated: `translate` gets the units' texts and returns their translations."""
    doc = read_document(name, data, limits)
    return doc.write(translate(doc.units) if doc.units else [])
