""".docx files: `nmt.translate.markup.office` reads them (paragraphs and table cells; runs and their formatting
kept); this module first checks the zip, bounded, before python-docx builds its tree.

Every member is inflated from its raw bytes `_CHUNK` at a time (whatever its entries declare), its
real size counted against `max_unpacked_bytes` (413) and checked against its declared size and CRC
(400); XML parts (by name, or by the content type `[Content_Types].xml` gives them) are pull-parsed
as they come (lxml's `XMLPullParser`, each element dropped once ended), counting elements,
paragraphs and characters into the `Budget`. A file that is not a
.docx inside (not a zip, a damaged member, a part that is not XML or an entity amplification lxml
stops) is a `BadDocument` with a one-line reason.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from lxml import etree

from nmt.translate.markup.formats.base import BadDocument, Budget, Document, DocumentTooLarge
from nmt.translate.markup.inline import LETTER


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

        from nmt.translate.markup.office import W

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
        for _, event in self.parser.read_events():
            element = cast("etree._Element", event)  # events=("end",): always an element
            self.elements[0] += 1
            if self.elements[0] > limits.max_xml_elements:
                raise DocumentTooLarge(f"{self.name} has more than {limits.max_xml_elements} XML elements in its "
                                       f"parts; the limit is {limits.max_xml_elements}: split the file")
            tag = element.tag
            if tag == self.t:
                text = element.text or ""
                self.budget.count(0, len(text))
                self.lettered = self.lettered or bool(LETTER.search(text))
            elif tag == self.p:
                if self.lettered:
                    self.budget.count(1, 0)
                self.lettered = False
            elif isinstance(tag, str) and tag.endswith(("}Override", "}Default")):
                key = element.get("PartName") or "." + (element.get("Extension") or "").lower()
                self.types[key.lstrip("/")] = element.get("ContentType") or ""
            element.clear()
            while element.getprevious() is not None:
                del cast("etree._Element", element.getparent())[0]


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


def docx_file(name: str, data: bytes, budget: Budget) -> Document:
    """A .docx file's bytes, checked within the budget, as its paragraphs' units and python-docx's writer."""
    from docx.opc.exceptions import OpcError
    from lxml.etree import LxmlError

    from nmt.translate.markup.office import DocxFile

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
