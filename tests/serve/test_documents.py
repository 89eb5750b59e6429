"""Files translated whole without a model (nmt/translate/markup/: formats/, office.py): a .docx and an
.srt made here, translated by fake models, opened again by their readers; .txt layout; limits and errors."""

from __future__ import annotations

import io
import re
import zipfile

import docx
import pytest
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from nmt.serve.api.files import document_refusal
from nmt.translate.markup.formats import (
    BadDocument,
    DocumentLimits,
    DocumentTooLarge,
    UnsupportedDocument,
    read_document,
    wrap,
)

TIMING = re.compile(r"\d\d:\d\d:\d\d,\d\d\d --> \d\d:\d\d:\d\d,\d\d\d")


def upper(units: list[str]) -> list[str]:
    return [u.upper() for u in units]


def reverse_words(units: list[str]) -> list[str]:
    return [" ".join(reversed(u.split())) for u in units]


def rotate_words(units: list[str]) -> list[str]:
    """A model that reorders: the second half of the words first (a pair's placeholders stay in order)."""
    return [" ".join(w[len(w) // 2:] + w[:len(w) // 2]) for w in (u.split() for u in units)]


def _hyperlink(paragraph, text: str, url: str) -> None:
    rid = paragraph.part.relate_to(url, docx.opc.constants.RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rid)
    run = OxmlElement("w:r")
    rpr = OxmlElement("w:rPr")
    underline = OxmlElement("w:u")
    underline.set(qn("w:val"), "single")
    rpr.append(underline)
    run.append(rpr)
    t = OxmlElement("w:t")
    t.text = text
    run.append(t)
    link.append(run)
    paragraph._p.append(link)


def make_docx() -> bytes:
    d = docx.Document()
    d.add_heading("Eine Überschrift", level=1)
    p = d.add_paragraph("Ein ")
    p.add_run("roter").bold = True
    p.add_run(" Ball rollt ")
    p.add_run("schnell").italic = True
    p.add_run(" über die Straße.")
    split = d.add_paragraph("Word ")
    for part in ("tei", "lt"):  # one format in two runs, as Word splits them
        split.add_run(part).bold = True
    split.add_run(" Läufe.")
    tabbed = d.add_paragraph("Name:")
    tabbed.add_run().add_tab()
    tabbed.add_run("Erste Zeile")
    tabbed.add_run().add_break()
    tabbed.add_run("Zweite Zeile")
    linked = d.add_paragraph("Siehe ")
    _hyperlink(linked, "die Seite", "https://example.org/")
    linked.add_run(" für mehr.")
    table = d.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Zelle eins"
    table.cell(0, 1).paragraphs[0].add_run("Zelle zwei").underline = True
    table.cell(1, 0).text = "12,50"
    d.sections[0].header.paragraphs[0].text = "Kopfzeile"
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def runs(paragraph) -> list[tuple[str, bool | None, bool | None, bool | None]]:
    return [(r.text, r.bold, r.italic, r.underline) for r in paragraph.runs]


def test_a_docx_is_translated_by_paragraph_with_its_runs_formatting_kept() -> None:
    doc = read_document("brief.docx", make_docx())
    assert "Ein 1 roter 2 Ball rollt 3 schnell 4 über die Straße." in doc.units
    assert "Word 1 teilt 2 Läufe." in doc.units  # two runs of one format: one pair
    assert {"Name: 1 Erste Zeile", "Zweite Zeile"} <= set(doc.units)  # a tab is an atom, a line break cuts
    out = docx.Document(io.BytesIO(doc.write(upper(doc.units))))
    paragraphs = out.paragraphs
    assert paragraphs[0].text == "EINE ÜBERSCHRIFT" and paragraphs[0].style.name == "Heading 1"
    assert runs(paragraphs[1]) == [("EIN ", None, None, None), ("ROTER", True, None, None),
                                   (" BALL ROLLT ", None, None, None), ("SCHNELL", None, True, None),
                                   (" ÜBER DIE STRASSE.", None, None, None)]
    assert runs(paragraphs[2]) == [("WORD ", None, None, None), ("TEILT", True, None, None),
                                   (" LÄUFE.", None, None, None)]
    assert paragraphs[3].text == "NAME:\tERSTE ZEILE\nZWEITE ZEILE"
    assert paragraphs[4].text == "SIEHE DIE SEITE FÜR MEHR."
    (link,) = paragraphs[4].hyperlinks
    assert link.text == "DIE SEITE" and link.address == "https://example.org/" and link.runs[0].underline
    cells = out.tables[0].rows[0].cells
    assert cells[0].text == "ZELLE EINS" and runs(cells[1].paragraphs[0]) == [("ZELLE ZWEI", None, None, True)]
    assert out.tables[0].rows[1].cells[0].text == "12,50"  # no letters: not a unit, left as it is
    assert out.sections[0].header.paragraphs[0].text == "KOPFZEILE"


def test_a_reordering_model_moves_the_formatting_with_the_words() -> None:
    doc = read_document("brief.docx", make_docx())
    out = docx.Document(io.BytesIO(doc.write(rotate_words(doc.units))))
    formatted = {r.text.strip(): (r.bold, r.italic) for r in out.paragraphs[1].runs if r.bold or r.italic}
    assert formatted == {"roter": (True, None), "schnell": (None, True)}
    assert out.paragraphs[1].text.split() == "schnell über die Straße. Ein roter Ball rollt".split()
    broken = docx.Document(io.BytesIO(read_document("b.docx", make_docx()).write(reverse_words(doc.units))))
    assert sum(bool(r.bold) for r in broken.paragraphs[1].runs) == 1  # pairs reversed: repaired, none lost


def test_a_paragraph_with_a_field_is_left_as_it_is() -> None:
    d = docx.Document()
    p = d.add_paragraph("Seite ")
    for kind, text in (("begin", None), (None, " PAGE "), ("end", None)):
        r = p.add_run()
        if kind:
            fld = OxmlElement("w:fldChar")
            fld.set(qn("w:fldCharType"), kind)
            r._r.append(fld)
        else:
            instr = OxmlElement("w:instrText")
            instr.text = text
            r._r.append(instr)
    d.add_paragraph("Anderer Text")
    buf = io.BytesIO()
    d.save(buf)
    doc = read_document("f.docx", buf.getvalue())
    assert doc.units == ["Anderer Text"]
    out = docx.Document(io.BytesIO(doc.write(upper(doc.units))))
    assert out.paragraphs[0]._p.xml == d.paragraphs[0]._p.xml and out.paragraphs[1].text == "ANDERER TEXT"


SRT = ("1\r\n00:00:01,000 --> 00:00:03,500\r\nEin Mann fährt mit dem Fahrrad\r\neine Straße hinunter.\r\n\r\n"
       "2\r\n00:00:04,000 --> 00:00:05,000\r\n<i>Hallo, <b>Welt</b>!</i>\r\n\r\n"
       "3\r\n00:00:06,000 --> 00:00:07,250\r\n♪ 1, 2, 3 ♪\r\n\r\n"
       "4\r\n00:01:00,000 --> 00:01:02,000\r\n{\\an8}Oben steht ein Text.\r\n")


def parse_srt(text: str) -> list[tuple[str, str, list[str]]]:
    """(index, timing, text lines) per cue."""
    blocks = [b.split("\r\n") for b in text.strip("\r\n").split("\r\n\r\n")]
    for b in blocks:
        assert b[0].isdigit() and TIMING.fullmatch(b[1]), b
    return [(b[0], b[1], b[2:]) for b in blocks]


def test_an_srt_keeps_indices_timings_and_line_counts() -> None:
    doc = read_document("film.srt", SRT.encode("utf-8"))
    assert doc.units == ["Ein Mann fährt mit dem Fahrrad eine Straße hinunter.", "Hallo, 1 Welt 2 !",
                         "1 Oben steht ein Text."]
    for model in (upper, reverse_words):
        cues, source = parse_srt(doc.write(model(doc.units)).decode("utf-8")), parse_srt(SRT)
        assert [(i, t, len(lines)) for i, t, lines in cues] == [(i, t, len(lines)) for i, t, lines in source]
        assert cues[2][2] == ["♪ 1, 2, 3 ♪"]
    cues = parse_srt(doc.write(upper(doc.units)).decode("utf-8"))
    assert cues[0][2] == ["EIN MANN FÄHRT MIT DEM FAHRRAD", "EINE STRASSE HINUNTER."]  # cut nearest the middle
    assert cues[1][2] == ["<i>HALLO, <b>WELT</b>!</i>"] and cues[3][2] == ["{\\an8}OBEN STEHT EIN TEXT."]


def test_wrapping_cuts_at_spaces_outside_tags() -> None:
    assert wrap("one two three four", 2) == ["one two", "three four"]
    assert wrap('<font color="red">a</font> b c', 2) == ['<font color="red">a</font>', "b c"]
    assert wrap("single", 3) == ["single"]


def test_a_text_file_keeps_its_layout() -> None:
    text = "Erste Zeile. Zweiter Satz.\r\n\r\n   - eingerückt  \r\n\t\r\nEnde"
    doc = read_document("notes.txt", b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert doc.units == ["Erste Zeile. Zweiter Satz.", "- eingerückt", "Ende"]
    assert doc.write(upper(doc.units)) == b"\xef\xbb\xbf" + text.replace("Erste Zeile. Zweiter Satz.", "ERSTE ZEILE. "
                                                                          "ZWEITER SATZ.").replace(
        "- eingerückt", "- EINGERÜCKT").replace("Ende", "ENDE").encode("utf-8")
    utf16 = read_document("u.txt", "\ufeffHallo".encode("utf-16-le"))
    assert utf16.write(["Hello"]).decode("utf-16") == "Hello"


def test_an_html_file_goes_through_the_markup_module() -> None:
    doc = read_document("page.HTML", b"<p>Ein <b>roter</b> Ball</p><script>x</script>")
    assert doc.write(upper(doc.units)) == b"<p>EIN <b>ROTER</b> BALL</p><script>x</script>"


def test_unknown_types_sizes_and_broken_files_are_refused_with_their_status() -> None:
    with pytest.raises(UnsupportedDocument, match="type .pdf") as err:
        read_document("a.pdf", b"%PDF")
    assert document_refusal(err.value).status == 415
    with pytest.raises(UnsupportedDocument, match="no extension"):
        read_document("README", b"x")
    with pytest.raises(DocumentTooLarge) as big:
        read_document("a.txt", b"x" * 101, DocumentLimits(max_bytes=100))
    assert document_refusal(big.value).status == 413
    with pytest.raises(DocumentTooLarge, match="characters"):
        read_document("a.txt", b"abc\ndef", DocumentLimits(max_chars=5))
    with pytest.raises(BadDocument, match="not UTF-8") as bad:
        read_document("a.srt", b"\xff\xfe\xfa")
    assert document_refusal(bad.value).status == 400
    with pytest.raises(BadDocument, match="not a zip"):
        read_document("a.docx", b"not a zip")
    with pytest.raises(DocumentTooLarge, match="unpacks"):
        read_document("a.docx", make_docx(), DocumentLimits(max_unpacked_bytes=1000))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("hello.txt", "not a docx")
    with pytest.raises(BadDocument, match="not a .docx"):
        read_document("a.docx", buf.getvalue())
    with pytest.raises(ValueError, match="1 translations for 3 units"):
        read_document("a.txt", b"a\nb\nc").write(["x"])
