"""Corpus formats (nmt.data.formats): TSV, TMX, Moses-tokenized and plain line-aligned files read
as aligned pairs in chunks, with one-line `DataError`s naming file and line for bad input; then
the mirrored Tatoeba and OpenNMT sample files (skipped where the mirror is absent)."""

from __future__ import annotations

import gzip
import re
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from nmt.data.formats import line_chunks, moses_chunks, tmx_chunks, tsv_chunks, unescape_moses
from nmt.errors import ConfigError, DataError
from support.corpus import ROOT

SHARED_DATA = ROOT.parent / "shared" / "data"  # the corpus mirror, as the `mirror` fixture finds it
EN_DE = {"en": 0, "de": 1}
LANGS = ("de", "en")


def pairs(chunks) -> tuple[list[str], list[str]]:
    side_a, side_b = [], []
    for _, a, b in chunks:
        assert len(a) == len(b)
        side_a += a
        side_b += b
    return side_a, side_b


def write_tmx(path: Path, units: str, head: str = "") -> Path:
    path.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n{head}<tmx version="1.4">\n'
                    f'<header srclang="en" datatype="plaintext"/>\n<body>\n{units}</body>\n</tmx>\n', encoding="utf-8")
    return path


# --- TSV ----------------------------------------------------------------------------------------


def test_tsv_two_columns(tmp_path: Path) -> None:
    path = tmp_path / "deu.txt"
    path.write_text("Hi.\tHallo!\nRun!\tLauf!\n", encoding="utf-8")
    assert list(tsv_chunks(path, EN_DE, LANGS, chunk_lines=10)) == [(1, ["Hallo!", "Lauf!"], ["Hi.", "Run!"])]


def test_tsv_third_column_ignored_and_crlf_stripped(tmp_path: Path) -> None:
    path = tmp_path / "deu.txt"
    path.write_bytes(b"Hi.\tHallo!\tCC-BY 2.0 (France) Attribution: tatoeba.org #538123\r\n"
                     b"Go.\tGeh.\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272\r\n")
    assert pairs(tsv_chunks(path, EN_DE, LANGS, chunk_lines=1)) == (["Hallo!", "Geh."], ["Hi.", "Go."])


def test_tsv_row_with_one_column_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "deu.txt"
    path.write_text("Hi.\tHallo!\nRun!\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        list(tsv_chunks(path, EN_DE, LANGS, chunk_lines=10))
    assert str(info.value) == f"{path}:2: expected 2 tab-separated columns (en, de), got 1; fix or remove that line"


def test_tsv_gzip(tmp_path: Path) -> None:
    path = tmp_path / "deu.txt.gz"
    path.write_bytes(gzip.compress(b"Hi.\tHallo!\nI see.\tIch verstehe.\n"))
    assert pairs(tsv_chunks(path, EN_DE, LANGS, chunk_lines=10)) == (["Hallo!", "Ich verstehe."], ["Hi.", "I see."])


def test_tsv_invalid_utf8_names_line(tmp_path: Path) -> None:
    path = tmp_path / "deu.txt"
    path.write_bytes(b"Hi.\tHallo!\nSmile.\tL\xe4cheln!\n")  # Latin-1, not UTF-8
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}:2: invalid UTF-8 \(byte 0xe4"):
        list(tsv_chunks(path, EN_DE, LANGS, chunk_lines=10))


def test_tsv_columns_must_name_both_languages(tmp_path: Path) -> None:
    path = tmp_path / "deu.txt"
    path.write_text("Hi.\tHallo!\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="de has none"):
        list(tsv_chunks(path, {"en": 0}, LANGS, chunk_lines=10))


# --- TMX ----------------------------------------------------------------------------------------


def test_tmx_inline_markup(tmp_path: Path) -> None:
    path = write_tmx(tmp_path / "c.tmx", (
        '<tu><tuv xml:lang="en"><seg>The <bpt i="1">&lt;b&gt;</bpt>bold<ept i="1">&lt;/b&gt;</ept> word'
        '<ph x="2">&lt;br/&gt;</ph>  and\n more.</seg></tuv>'
        '<tuv xml:lang="de"><seg>Das <hi type="bold">fette <ph>{1}</ph>Wort</hi> und mehr.</seg></tuv></tu>\n'
    ), head='<!DOCTYPE tmx SYSTEM "tmx14.dtd">\n')  # an external DTD named, not loaded: accepted
    assert list(tmx_chunks(path, LANGS, chunk_lines=10)) == [
        (1, ["Das fette Wort und mehr."], ["The bold word and more."])]


def test_tmx_tu_missing_a_language_is_skipped_and_counted(tmp_path: Path) -> None:
    path = write_tmx(tmp_path / "c.tmx", (
        '<tu><tuv xml:lang="en"><seg>Only English.</seg></tuv></tu>\n'
        '<tu><tuv xml:lang="en"><seg>Hello.</seg></tuv><tuv xml:lang="de"><seg>Hallo.</seg></tuv></tu>\n'
        '<tu><tuv xml:lang="en"><seg>Empty German.</seg></tuv><tuv xml:lang="de"><seg> </seg></tuv></tu>\n'
        '<tu><tuv xml:lang="fr"><seg>Bonjour.</seg></tuv></tu>\n'
        '<tu><tuv xml:lang="en"><seg>Bye.</seg></tuv><tuv xml:lang="de"><seg>Tschüss.</seg></tuv></tu>\n'
    ))
    skipped: Counter = Counter()
    chunks = list(tmx_chunks(path, LANGS, chunk_lines=1, skipped=skipped))
    assert chunks == [(2, ["Hallo."], ["Hello."]), (5, ["Tschüss."], ["Bye."])]  # first_line: the tu's index
    assert skipped == {"tmx: tu without de": 1, "tmx: tu with empty de": 1, "tmx: tu without de and en": 1}


def test_tmx_language_codes_match_on_primary_subtag(tmp_path: Path) -> None:
    path = tmp_path / "c.tmx.gz"
    path.write_bytes(gzip.compress(write_tmx(tmp_path / "plain.tmx", (
        '<tu><tuv xml:lang="EN-gb"><seg>One.</seg></tuv><tuv xml:lang="DE-de"><seg>Eins.</seg></tuv></tu>\n'
        '<tu><tuv lang="en"><seg>Two.</seg></tuv><tuv lang="de_AT"><seg>Zwei.</seg></tuv>'
        '<tuv lang="DE"><seg>Second German, ignored.</seg></tuv></tu>\n'  # TMX 1.1 `lang`; the first de wins
    )).read_bytes()))
    assert pairs(tmx_chunks(path, LANGS, chunk_lines=10)) == (["Eins.", "Zwei."], ["One.", "Two."])


def test_tmx_malformed_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "c.tmx"
    path.write_text('<?xml version="1.0"?>\n<tmx version="1.4"><body>\n<tu><tuv xml:lang="en"><seg>Hi</tuv></tu>\n'
                    '</body></tmx>\n', encoding="utf-8")
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}:3:\d+: malformed XML \(mismatched tag\); .*fix it"):
        list(tmx_chunks(path, LANGS, chunk_lines=10))


def test_tmx_entity_declaration_refused(tmp_path: Path) -> None:
    path = write_tmx(tmp_path / "bomb.tmx", '<tu><tuv xml:lang="en"><seg>&lol2;</seg></tuv></tu>\n', head=(
        '<!DOCTYPE tmx [\n<!ENTITY lol "lol">\n<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">\n]>\n'))
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}:3: refused XML declaration .*entity declarations"):
        list(tmx_chunks(path, LANGS, chunk_lines=10))


def test_tmx_other_root_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.xliff"
    path.write_text('<?xml version="1.0"?>\n<xliff version="1.2"></xliff>\n', encoding="utf-8")
    expected = rf"^{re.escape(str(path))}: not a TMX file \(its root element is <xliff>, expected <tmx>\)"
    with pytest.raises(DataError, match=expected):
        list(tmx_chunks(path, LANGS, chunk_lines=10))


# --- Moses-tokenized and plain line-aligned files -----------------------------------------------


def test_unescape_moses() -> None:
    assert unescape_moses("Tom &apos;s &quot;A &amp; B&quot; &lt;x&gt; &#124; &#91;1&#93; &#x41;") == \
        "Tom 's \"A & B\" <x> | [1] A"
    assert unescape_moses("&amp;apos; &#55296; &nbsp;") == "&apos; &#55296; &nbsp;"  # one pass; no character: kept


def write_pair(tmp_path: Path, de: list[str], en: list[str]) -> dict[str, Path]:
    files = {"de": tmp_path / "train.de", "en": tmp_path / "train.en"}
    for lang, lines in (("de", de), ("en", en)):
        files[lang].write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return files


def test_moses_unescaped_and_detokenized(tmp_path: Path) -> None:
    pytest.importorskip("sacremoses")
    files = write_pair(tmp_path, ["Toms Haus , das &quot; groß &quot; ist &amp; rot .", "Ja ."],
                       ["Tom &apos;s house , which is &quot; big &quot; &amp; red .", "Yes ."])
    assert list(moses_chunks(files, LANGS, chunk_lines=10)) == [
        (1, ['Toms Haus, das "groß" ist & rot.', "Ja."], ["Tom's house, which is \"big\" & red.", "Yes."])]


def test_line_files_chunked(tmp_path: Path) -> None:
    de, en = [f"Satz {i}." for i in range(1, 6)], [f"Sentence {i}." for i in range(1, 6)]
    chunks = list(line_chunks(write_pair(tmp_path, de, en), LANGS, chunk_lines=2))
    assert [first for first, _, _ in chunks] == [1, 3, 5]
    assert chunks[1] == (3, ["Satz 3.", "Satz 4."], ["Sentence 3.", "Sentence 4."])
    assert pairs(chunks) == (de, en)


def test_tsv_chunked(tmp_path: Path) -> None:
    path = tmp_path / "deu.txt"
    path.write_text("".join(f"Sentence {i}.\tSatz {i}.\n" for i in range(1, 6)), encoding="utf-8")
    chunks = tsv_chunks(path, EN_DE, LANGS, chunk_lines=2)
    assert [(first, len(a)) for first, a, _ in chunks] == [(1, 2), (3, 2), (5, 1)]


@pytest.mark.parametrize("reader", [line_chunks, moses_chunks])
def test_unequal_line_counts_name_both_files(tmp_path: Path, reader) -> None:
    if reader is moses_chunks:
        pytest.importorskip("sacremoses")
    files = write_pair(tmp_path, ["Eins .", "Zwei .", "Drei ."], ["One .", "Two ."])
    with pytest.raises(DataError) as info:
        list(reader(files, LANGS, chunk_lines=2))
    assert str(info.value).startswith(f"{files['de']} has 3 lines but {files['en']} has 2: the two files must be "
                                      "line-aligned")


# --- the mirrored files -------------------------------------------------------------------------


def test_tatoeba_mirror(tmp_path: Path) -> None:
    archive = SHARED_DATA / "tatoeba" / "deu-eng.zip"
    if not archive.is_file():
        pytest.skip(f"Tatoeba mirror not found at {archive}")
    with zipfile.ZipFile(archive) as zf:
        path = Path(zf.extract("deu.txt", tmp_path))
    chunks = list(tsv_chunks(path, EN_DE, LANGS, chunk_lines=50_000))
    de, en = pairs(chunks)
    assert len(de) == len(en) == 169_813
    assert [first for first, _, _ in chunks] == [1, 50_001, 100_001, 150_001]
    assert (de[0], en[0]) == ("Hallo!", "Hi.")


def test_onmt_sample_mirror() -> None:
    pytest.importorskip("sacremoses")
    folder = SHARED_DATA / "onmt-sample"
    if not (folder / "src-train.txt").is_file():
        pytest.skip(f"OpenNMT sample mirror not found at {folder}")
    de, en = pairs(moses_chunks({"en": folder / "src-train.txt", "de": folder / "tgt-train.txt"}, LANGS, 4096))
    assert len(de) == len(en) == 10_000
    assert not any("&apos;" in s or "&quot;" in s for s in de + en)
    assert en[0].startswith("It is not acceptable that, with the help of the national bureaucracies, Parliament's")


# --- skipping malformed lines (a `Skips` given): counted by kind with their first line numbers --------


def test_tsv_skips_malformed_rows_and_counts_them_by_kind(tmp_path: Path) -> None:
    from nmt.data.chunks import Skips

    path = tmp_path / "mine.tsv"
    path.write_bytes(b"Hi.\tHallo!\nno tab\nSmile.\tL\xe4cheln!\n\nGo.\tGeh.\n")
    skipped = Skips()
    read = pairs(tsv_chunks(path, EN_DE, LANGS, chunk_lines=10, skipped=skipped))
    assert read == (["Hallo!", "Geh."], ["Hi.", "Go."])
    assert skipped == {"malformed: fewer than 2 tab-separated columns": 2, "malformed: invalid UTF-8": 1}
    assert skipped.lines == {"malformed: fewer than 2 tab-separated columns": [2, 4], "malformed: invalid UTF-8": [3]}


def test_line_files_skip_a_pair_with_a_line_not_utf8_and_keep_alignment(tmp_path: Path) -> None:
    from nmt.data.chunks import Skips

    files = write_pair(tmp_path, ["Eins.", "Zwei.", "Drei."], ["One.", "Two.", "Three."])
    files["en"].write_bytes(b"One.\nTw\xf6.\nThree.\n")
    skipped = Skips()
    assert list(line_chunks(files, LANGS, chunk_lines=10, skipped=skipped)) == [(1, ["Eins.", "Drei."],
                                                                                 ["One.", "Three."])]
    assert skipped.lines == {"malformed: invalid UTF-8": [2]}
    with pytest.raises(DataError, match=r":2: invalid UTF-8"):  # without a counter: strict, as before
        list(line_chunks(files, LANGS, chunk_lines=10))


def test_skips_keep_the_first_five_line_numbers_of_a_kind(tmp_path: Path) -> None:
    from nmt.data.chunks import Skips

    path = tmp_path / "mine.tsv"
    path.write_text("".join("x\n" if i % 2 else f"a{i}\tb{i}\n" for i in range(20)), encoding="utf-8")
    skipped = Skips()
    list(tsv_chunks(path, EN_DE, LANGS, chunk_lines=3, skipped=skipped))
    assert skipped["malformed: fewer than 2 tab-separated columns"] == 10
    assert skipped.lines["malformed: fewer than 2 tab-separated columns"] == [2, 4, 6, 8, 10]
