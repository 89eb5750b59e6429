"""Files translated whole: read into units, written back with their translations.

`read_document(name, data)` picks the format by the name's extension and returns a `Document`
(`nmt.translate.markup.formats.base`): its `units` (texts to translate; each goes through the server's text
path, cut into sentences there) and `write(translations)`, the translated file's bytes. Model-free:
the caller translates. One module per format:

- `.txt`: `text` (each non-blank line is a unit; the layout kept).
- `.html`, `.htm`: `html`, through `nmt.translate.markup.html` (tags, attributes, scripts kept; text by block,
  across inline tags).
- `.srt`: `srt` (each cue's text lines are one unit, cut again into as many lines; its tags carried
  by placeholder).
- `.docx`: `docx`, through `nmt.translate.markup.office` (paragraphs and table cells; runs and their formatting
  kept), the zip checked first, bounded.

Every reader is linear in its input and counts its `DocumentLimits` as it goes (`Budget`), so a file
over a limit stops at the limit, not after a full parse. Errors carry
the HTTP status the server answers with: `UnsupportedDocument` (415), `DocumentTooLarge` (413),
`BadDocument` (400).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath

from nmt.translate.markup.formats.base import (
    BadDocument,
    Budget,
    Document,
    DocumentError,
    DocumentLimits,
    DocumentTooLarge,
    UnsupportedDocument,
    decode,
)
from nmt.translate.markup.formats.docx import docx_file
from nmt.translate.markup.formats.html import html_file
from nmt.translate.markup.formats.srt import srt_file, wrap
from nmt.translate.markup.formats.text import text_file

__all__ = ["FORMATS", "BadDocument", "Document", "DocumentError", "DocumentLimits", "DocumentTooLarge",
           "UnsupportedDocument", "read_document", "wrap"]

TextReader = Callable[[str, str, Callable[[str], bytes], Budget], Document]
TEXT_READERS: dict[str, TextReader] = {".txt": text_file, ".html": html_file, ".htm": html_file, ".srt": srt_file}
FORMATS = (".txt", ".html", ".htm", ".srt", ".docx")  # the extensions taken, in the order a refusal lists them


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
        return docx_file(name, data, budget)
    text, encode = decode(data, name)
    return TEXT_READERS[suffix](name, text, encode, budget)
