"""What every file format shares: the `Document` a reader returns, its errors, its limits and the
`Budget` counting them.

A reader turns a file into a `Document`: its `units` (texts to translate) and `write(translations)`,
the translated file's bytes. It counts its `DocumentLimits` as it goes (`Budget`: units, characters,
inline tags nested in one unit), so a file over a limit stops at the limit, not after a full parse.
Text formats are decoded by `decode` (UTF-8, or UTF-16 with its
byte-order mark), and written back the same way.

Errors carry the HTTP status the server answers with: `UnsupportedDocument` (415: another
extension), `DocumentTooLarge` (413: over `DocumentLimits`), `BadDocument` (400: not UTF-8/UTF-16
text, or not a .docx inside; always a one-line reason).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nmt.errors import NmtError
from nmt.translate.markup.inline import Unit


class DocumentError(NmtError):
    """A file that is not translated (the API answers each kind with its status: `nmt.serve.api.files`)."""


class BadDocument(DocumentError):
    """Not text in UTF-8 or UTF-16 (with its byte-order mark), or not a .docx inside."""


class UnsupportedDocument(DocumentError):
    """A file extension no reader here takes."""


class DocumentTooLarge(DocumentError):
    """Over a size limit."""


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


def decode(data: bytes, name: str) -> tuple[str, Callable[[str], bytes]]:
    """The text and how to encode the translation the same way (its byte-order mark included)."""
    boms = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
    bom, encoding = next(((b, e) for b, e in boms if data.startswith(b)), (b"", "utf-8"))
    try:
        text = data[len(bom):].decode(encoding)
    except UnicodeDecodeError as exc:
        raise BadDocument(f"{name} is not UTF-8 text (byte {exc.start}); save it as UTF-8 and send it again") from None
    return text, lambda out: bom + out.encode(encoding)
