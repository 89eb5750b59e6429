"""Every document reader linear in its input, with a budget.

Each pathological shape the issue found (and a few more of the same kind) is read at n and at 4n
bytes; the work, in CPU seconds of this process (`time.process_time`, each read repeated until it
has used a measurable amount, best of three), may grow about 4 times, never the 16 of a quadratic
reader: the ratio is bounded (`LINEAR`), never an absolute time. A .docx of many tiny paragraphs
and a zip member that lies about its size are refused early: the work for 4n is about that for n
(the XML bytes parsed before the refusal are counted: the reader stops at the limit instead of after a
full parse), and the lying member is never
decompressed whole (peak Python memory and the bytes inflated stay bounded).
"""

from __future__ import annotations

import dataclasses
import gc
import io
import struct
import time
import tracemalloc
import zipfile
import zlib
from collections.abc import Callable

import docx
import pytest

from nmt.translate.markup.formats import BadDocument, DocumentLimits, DocumentTooLarge, read_document

LINEAR = 8.0  # work(4n) / work(n): linear ~4 (the stdlib HTML tokenizer ~5), quadratic ~16; room for shared cores
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _cost(read: Callable[[], object]) -> float:
    """CPU seconds of one `read()`: repeated until it has used 0.05 s, the best of three such rounds
    (the cyclic garbage collector off: its passes over every live object are the runtime's cost, not
    the reader's, and make a linear reader of many small objects look superlinear)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            calls, start = 0, time.process_time()
            while True:
                try:
                    read()
                except DocumentTooLarge:
                    pass
                calls += 1
                used = time.process_time() - start
                if used >= 0.05:
                    break
            best = min(best, used / calls)
    finally:
        gc.enable()
    return best


def _growth(make: Callable[[int], bytes], name: str, n: int, limits: DocumentLimits) -> float:
    small, large = make(n), make(4 * n)
    try:
        read_document(name, small, limits)  # warm: imports, regex caches
    except DocumentTooLarge:
        pass
    return _cost(lambda: read_document(name, large, limits)) / _cost(lambda: read_document(name, small, limits))


def _limits(**values: int) -> DocumentLimits:
    """Limits with these values (those `DocumentLimits` has: the tests run on the code before the caps too)."""
    known = {f.name for f in dataclasses.fields(DocumentLimits)}
    return DocumentLimits(**{k: v for k, v in values.items() if k in known})


def _cue(text: str) -> bytes:
    return f"1\n00:00:01,000 --> 00:00:02,000\n{text}\n".encode()


SHAPES: dict[str, tuple[str, Callable[[int], bytes], int]] = {
    # the issue's: a line of spaces between two letters (the unit regex), HTML closes without their opens
    # (markup._partners), a subtitle cue of nested tags (cue_unit), an unclosed `<b ` repeated (SRT_TAG)
    "txt: x, spaces, y": ("a.txt", lambda n: b"x" + b" " * n + b"y", 2_000),
    "html: <b>x</b></i> repeated": ("a.html", lambda n: b"<b>x</b></i>" * (n // 12), 24_000),
    "srt: nested <i>": ("a.srt", lambda n: _cue("<i>" * (n // 7) + "x" + "</i>" * (n // 7)), 4_000),
    "srt: unclosed <b repeated": ("a.srt", lambda n: _cue("x " + "<b " * (n // 3)), 4_000),
    # more of the same kind
    "srt: unclosed {\\ repeated": ("a.srt", lambda n: _cue("x " + "{\\an8 " * (n // 6)), 4_000),
    "srt: a long cue of words and tags": ("a.srt", lambda n: _cue("<i>Wort</i> " * (n // 12)), 24_000),
    "html: entities in one text": ("a.html", lambda n: b"<p>" + b"a&amp;" * (n // 6) + b"</p>", 60_000),
    "html: unclosed <b repeated": ("a.html", lambda n: b"<p>x " + b"<b " * (n // 3), 8_000),
    "html: nested <b>": ("a.html", lambda n: b"<p>" + b"<b>" * (n // 7) + b"x" + b"</b>" * (n // 7), 8_000),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_each_reader_is_linear_in_its_input(shape: str) -> None:
    name, make, n = SHAPES[shape]
    limits = _limits(max_chars=10**9, max_bytes=10**9, max_depth=10**9, max_units=10**9)
    ratio = _growth(make, name, n, limits)
    if ratio >= LINEAR:  # once measured at 8.2 (typically 4) while the suite's servers were winding down: again
        ratio = min(ratio, _growth(make, name, n, limits))
    assert ratio < LINEAR, f"{shape}: 4x the input took {ratio:.1f}x the work"


def test_nesting_and_units_are_capped() -> None:
    with pytest.raises(DocumentTooLarge, match="nest.*limit is 100"):
        read_document("a.srt", _cue("<i>" * 101 + "x" + "</i>" * 101))
    with pytest.raises(DocumentTooLarge, match="nest.*limit is 100"):
        read_document("a.html", b"<p>" + b"<b>" * 101 + b"x" + b"</b>" * 101)
    read_document("a.html", b"<p>" + b"<b>" * 100 + b"x" + b"</b>" * 100)
    with pytest.raises(DocumentTooLarge, match="units.*limit is 3"):
        read_document("a.txt", b"a\nb\nc\nd\n", DocumentLimits(max_units=3))
    with pytest.raises(DocumentTooLarge, match="units.*limit is 3"):
        read_document("a.html", b"<p>a</p><p>b</p><p>c</p><p>d</p>", DocumentLimits(max_units=3))
    with pytest.raises(DocumentTooLarge, match="units.*limit is 1"):
        read_document("a.srt", _cue("a") + b"\n" + _cue("b").replace(b"1\n", b"2\n", 1), DocumentLimits(max_units=1))


def test_the_character_limit_stops_the_reading_early() -> None:
    """Over `max_chars`, a text or subtitle file is refused once the limit is passed, not after it is
    all read: 4x the text over the limit costs about what 1x does. (An HTML page is tokenized whole
    first, linearly; its units are counted as they are built.)"""
    limits = DocumentLimits(max_chars=2_000)
    for name, make in (("a.txt", lambda n: b"Wort\n" * (n // 5)),
                       ("a.srt", lambda n: b"".join(_cue("Wort").replace(b"1", str(k).encode(), 1) + b"\n"
                                                    for k in range(n // 40)))):
        ratio = _growth(make, name, 200_000, limits)
        if ratio >= 2.5:  # a CPU-time ratio: a busy host (the suite's other worker) can spoil one measurement
            ratio = min(ratio, _growth(make, name, 200_000, limits))
        assert ratio < 2.5, f"{name}: 4x the text over the limit took {ratio:.1f}x the work"


def _docx_of(paragraphs: int) -> bytes:
    """A .docx of `paragraphs` paragraphs of one letter each (the body written directly: fast)."""
    out = io.BytesIO()
    document = docx.Document()
    base = io.BytesIO()
    document.save(base)
    body = '<w:p><w:r><w:t>a</w:t></w:r></w:p>' * paragraphs
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "word/document.xml":
                data = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                        f'<w:document xmlns:w="{W}"><w:body>{body}</w:body></w:document>').encode()
            z.writestr(info.filename, data)
    return out.getvalue()


def _xml_bytes_parsed(data: bytes, limits: DocumentLimits, monkeypatch: pytest.MonkeyPatch) -> int:
    """The XML bytes the .docx reader fed its parser before refusing `data` over `limits` (counted, not timed)."""
    from nmt.translate.markup.formats import docx as reader

    fed = [0]
    feed = reader._XmlCount.feed

    def counting(self: object, chunk: bytes) -> None:
        fed[0] += len(chunk)
        feed(self, chunk)

    with monkeypatch.context() as patch:
        patch.setattr(reader._XmlCount, "feed", counting)
        with pytest.raises(DocumentTooLarge, match="characters.*limit is 1000"):
            read_document("a.docx", data, limits)
    return fed[0]


def test_a_docx_of_many_tiny_paragraphs_is_refused_early(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit is counted while the XML is parsed: 4x the paragraphs past it parse no more XML than 1x
    (a reader that parsed the whole document first, then counted, would parse 4x the bytes). Counted in
    bytes fed to the parser, so the test reads the same on a busy or a quiet host."""
    limits = DocumentLimits(max_chars=1_000)
    small, large = _docx_of(5_000), _docx_of(20_000)
    whole = len(zipfile.ZipFile(io.BytesIO(large)).read("word/document.xml"))
    parsed_small, parsed_large = (_xml_bytes_parsed(d, limits, monkeypatch) for d in (small, large))
    assert parsed_large == parsed_small, f"4x the paragraphs: {parsed_large} XML bytes parsed, 1x: {parsed_small}"
    assert parsed_large < whole / 4, f"{parsed_large} of the document's {whole} XML bytes parsed before refusing"
    with pytest.raises(DocumentTooLarge, match="units.*limit is 100"):
        read_document("a.docx", _docx_of(5_000), DocumentLimits(max_units=100))


def _lying_docx(real: int, declared: int = 4096) -> bytes:
    """The test .docx with a document.xml of `real` bytes whose zip entries declare `declared` (the CRC
    is that of the first `declared` bytes, so a reader that trusts the declared size sees no damage)."""
    base = io.BytesIO()
    docx.Document().save(base)
    source = zipfile.ZipFile(base)
    xml = source.read("word/document.xml")
    body = xml + b" " * (real - len(xml))  # well-formed: spaces after the root element
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in source.infolist():
            z.writestr(info.filename, body if info.filename == "word/document.xml" else source.read(info.filename))
    data = bytearray(out.getvalue())
    crc = zlib.crc32(body[:declared])
    for signature, size_at, crc_at in ((b"PK\x03\x04", 22, 14), (b"PK\x01\x02", 24, 16)):  # local, central
        at = data.find(signature)
        while at >= 0:
            name_at = at + (30 if signature == b"PK\x03\x04" else 46)
            if data[name_at:name_at + 17] == b"word/document.xml":
                struct.pack_into("<I", data, at + size_at, declared)
                struct.pack_into("<I", data, at + crc_at, crc)
            at = data.find(signature, at + 4)
    return bytes(data)


def test_a_zip_member_that_lies_about_its_size_is_not_decompressed_whole() -> None:
    """Finding 4: a document.xml that declares 4 KB and holds 40 MB is refused (413 with the limit, or
    400: more than it declares) after at most a few chunks, never inflated whole in memory."""
    data = _lying_docx(40 * 2**20)
    assert len(data) < 200_000
    tracemalloc.start()
    try:
        with pytest.raises((DocumentTooLarge, BadDocument)) as refused:
            read_document("lie.docx", data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.0f} MiB while refusing a 4 KB member that holds 40 MB"
    assert "document.xml" in str(refused.value)


def test_the_real_unpacked_size_is_bounded_while_streaming() -> None:
    """An honest member larger than the unpacked limit: 413 naming the limit, after reading past it only."""
    data = _lying_docx(3 * 2**20, declared=3 * 2**20)  # declares what it holds
    tracemalloc.start()
    try:
        with pytest.raises(DocumentTooLarge, match="limit is 1048576"):
            read_document("big.docx", data, DocumentLimits(max_unpacked_bytes=2**20))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**20, f"peak {peak / 2**20:.1f} MiB"
