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

Errors carry the HTTP status the server answers with: `UnsupportedDocument` (415: another
extension), `DocumentTooLarge` (413: over `DocumentLimits`), `BadDocument` (400: not UTF-8/UTF-16
text, or not a .docx inside: not a zip, a damaged member (CRC, compression), a part that is not
XML or an entity amplification lxml stops; always a one-line reason).
"""

from __future__ import annotations

import codecs
import io
import re
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePath

from nmt.errors import NmtError
from nmt.serve.inline import ATOM, CLOSE, OPEN, Tag, Unit, build_unit
from nmt.serve.markup import parse_html

FORMATS = (".txt", ".html", ".htm", ".srt", ".docx")
SRT_TAG = re.compile(r"</?([biu]|font)\b[^>]*>|\{\\[^}]*\}", re.IGNORECASE)
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
    """How large a file may be: its bytes, its text (characters of all units), and a .docx unpacked."""

    max_bytes: int = 10 * 2**20
    max_chars: int = 500_000
    max_unpacked_bytes: int = 100 * 2**20


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


def _layout(text: str) -> tuple[list[str], list[int]]:
    """Lines as verbatim parts and units (indices of the unit parts): a unit is a line's text without
    its surrounding whitespace (and `\\r`)."""
    parts: list[str] = []
    units: list[int] = []
    for line in re.split(r"(\n)", text):
        m = re.fullmatch(r"(\s*)(.*?)(\s*)", line, re.DOTALL)
        assert m is not None
        if m.group(2):
            parts.append(m.group(1))
            units.append(len(parts))
            parts += [m.group(2), m.group(3)]
        else:
            parts.append(line)
    return parts, units


def _text_file(name: str, text: str, encode: Callable[[str], bytes]) -> Document:
    parts, units = _layout(text)

    def write(translations: Sequence[str]) -> bytes:
        out = list(parts)
        for k, t in zip(units, translations):
            out[k] = t.replace("\n", " ")
        return encode("".join(out))

    return Document(name, [parts[k] for k in units], write)


def _html_file(name: str, text: str, encode: Callable[[str], bytes]) -> Document:
    doc = parse_html(text)
    return Document(name, doc.units, lambda translations: encode(doc.rebuild(translations)), list(doc.unit_objects))


def _name(tag: Tag) -> str:
    m = SRT_TAG.match(tag.out)
    return (m.group(1) or "").lower() if m else ""


def cue_unit(lines: list[str]) -> tuple[str, Unit, str]:
    """A subtitle cue's lines as one unit, and the tags around all of it (kept outside the unit)."""
    text = " ".join(line.strip() for line in lines)
    pieces: list[str | Tag] = []
    opened: list[int] = []  # open tags waiting for their close (atoms if none comes)
    last = 0
    for m in SRT_TAG.finditer(text):
        if m.start() > last:
            pieces.append(text[last:m.start()])
        last = m.end()
        tag = Tag(ATOM, m.group(0))
        if _name(tag) and not tag.out.startswith("</"):
            opened.append(len(pieces))
        elif _name(tag) and opened and _name(pieces[opened[-1]]) == _name(tag):  # type: ignore[arg-type]
            o = opened.pop()
            pieces[o] = Tag(OPEN, pieces[o].out, len(pieces))  # type: ignore[union-attr]
            tag = Tag(CLOSE, tag.out, o)
        pieces.append(tag)
    if last < len(text):
        pieces.append(text[last:])
    head = tail = ""
    while (len(pieces) > 2 and isinstance(first := pieces[0], Tag) and first.kind == OPEN
           and first.partner == len(pieces) - 1):
        head, tail = head + first.out, pieces[-1].out + tail  # type: ignore[union-attr]
        pieces = [Tag(p.kind, p.out, None if p.partner is None else p.partner - 1) if isinstance(p, Tag) else p
                  for p in pieces[1:-1]]
    return head, build_unit(pieces), tail


def wrap(text: str, lines: int) -> list[str]:
    """`text` cut into `lines` lines at the spaces (outside tags) nearest an even split."""
    spaces = [m.start() for m in re.finditer(" ", text)
              if not any(t.start() < m.start() < t.end() for t in SRT_TAG.finditer(text))]
    cuts: list[int] = []
    for k in range(1, lines):
        free = [s for s in spaces if s not in cuts and (not cuts or s > cuts[-1])]
        if not free:
            break
        cuts.append(min(free, key=lambda s: abs(s - k * len(text) / lines)))
    return [text[a + 1 if a >= 0 else 0:b] for a, b in zip([-1, *cuts], [*cuts, len(text)])]


def _srt_file(name: str, text: str, encode: Callable[[str], bytes]) -> Document:
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.replace("\r\n", "\n").split("\n")
    cues: list[tuple[int, int]] = []  # (first text line, line after the cue)
    k = 0
    while k < len(lines):
        if lines[k].strip().isdigit() and k + 1 < len(lines) and TIMING.fullmatch(lines[k + 1]):
            end = k + 2
            while end < len(lines) and lines[end].strip():
                end += 1
            if end > k + 2:
                cues.append((k + 2, end))
            k = end
        else:
            k += 1
    made = [cue_unit(lines[a:b]) for a, b in cues]
    kept = [k for k, (_, unit, _) in enumerate(made) if _LETTER.search(unit.text)]

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
    if suffix == ".docx":
        doc = _docx_file(name, data, limits)
    else:
        text, encode = _decode(data, name)
        doc = {".txt": _text_file, ".srt": _srt_file}.get(suffix, _html_file)(name, text, encode)
    chars = sum(map(len, doc.units))
    if chars > limits.max_chars:
        raise DocumentTooLarge(f"{name} has {chars} characters of text; the limit is {limits.max_chars}: split "
                               "the file")
    return doc


def _reason(exc: BaseException) -> str:
    """An exception's message as one short line (lxml's and zipfile's can run over several)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:199] + "…"


def _docx_file(name: str, data: bytes, limits: DocumentLimits) -> Document:
    from docx.opc.exceptions import OpcError
    from lxml.etree import LxmlError

    from nmt.serve.office import DocxFile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            unpacked = sum(i.file_size for i in z.infolist())
    except (zipfile.BadZipFile, ValueError, EOFError, OSError):
        raise BadDocument(f"{name} is not a .docx file (not a zip archive)") from None
    if unpacked > limits.max_unpacked_bytes:
        raise DocumentTooLarge(f"{name} unpacks to {unpacked} bytes; the limit is {limits.max_unpacked_bytes}")
    try:
        docx = DocxFile(data)
    except LxmlError as exc:  # a part that is not XML, or an entity amplification lxml stopped
        raise BadDocument(f"{name} is a broken .docx file: a part is not well-formed XML "
                          f"({_reason(exc)})") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        # a member's bytes do not match its CRC, are not deflate data, use another compression, or are encrypted
        raise BadDocument(f"{name} is a damaged zip archive ({_reason(exc)})") from None
    except (KeyError, ValueError, OpcError) as exc:
        raise BadDocument(f"{name} is not a .docx file ({_reason(exc)})") from None
    return Document(name, docx.units, docx.write, list(docx.unit_objects))


def translate_document(name: str, data: bytes, translate: Callable[[list[str]], list[str]],
                       limits: DocumentLimits = DocumentLimits()) -> bytes:
    """The file translated: `translate` gets the units' texts and returns their translations."""
    doc = read_document(name, data, limits)
    return doc.write(translate(doc.units) if doc.units else [])
