"""Terminology by span swap without a model (nmt/translate/glossary.py): the TSV file and its errors,
matching (longest first, word boundaries, case, umlauts and ß, never inside a URL or number),
restoring the target term (its case included), do-not-translate spans kept verbatim, a request's
glossary over the file's, and sentences without terms masked exactly as `spans.mask` masks them."""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt.translate.glossary import Glossary, GlossaryError, Term, for_request
from nmt.translate.spans import Masked, mask
from nmt.translate.termswap import mask_terms


def tsv(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "terms.tsv"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def swapped(sentence: str, glossary: Glossary | None, keep: tuple[str, ...] = ()) -> tuple[str, list[str]]:
    """The masked text and the spans its placeholders stand for."""
    masked = mask_terms(sentence, glossary, keep)
    return masked.text, list(masked.spans)


def test_a_tsv_file_gives_terms_with_forms_and_skips_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tsv(tmp_path, "\ufeff# Fachbegriffe\n\nHaus\thouse\r\nwheel\tRad\tRäder\tRades\t\n"
                         "  # eingerückt\nNew York\tNew York City\n")
    glossary = Glossary.read(path)
    assert len(glossary) == 3
    assert glossary.lookup("haus") == Term("Haus", "house")
    assert glossary.lookup("WHEEL") == Term("wheel", "Rad", ("Räder", "Rades"))
    assert glossary.lookup("wheel").targets == ("Rad", "Räder", "Rades")
    assert glossary.lookup("new   york").target == "New York City" and glossary.lookup("York") is None


@pytest.mark.parametrize("text, line, says", [
    ("Haus\thouse\nBaum tree\n", 2, "expected `source term<TAB>target term"),
    ("Haus\thouse\n\n# x\nBaum\t\n", 4, "expected `source term<TAB>target term"),
    ("\thouse\n", 1, "expected"),
    ("Haus\thouse\nHAUS\thome\n", 2, "given twice (also"),
    ("Straße\tstreet\nStrasse\troad\n", 2, "given twice"),
    ("...\tdots\n", None, None),
])
def test_a_malformed_tsv_line_is_an_error_naming_the_file_and_line(tmp_path: Path, text: str, line: int | None,
                                                                    says: str | None) -> None:
    path = tsv(tmp_path, text)
    if line is None:  # punctuation is a word of its own: a term of dots is a term
        assert Glossary.read(path).lookup("...").target == "dots"
        return
    with pytest.raises(GlossaryError) as err:
        Glossary.read(path)
    assert f"{path}:{line}:" in str(err.value) and says in str(err.value)


def test_a_file_that_is_not_utf8_or_not_there_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tsv(tmp_path, b"Haus\thouse\n" + "Bäume\ttrees\n".encode("latin-1"))
    with pytest.raises(GlossaryError, match=rf"{path}:2: not UTF-8"):
        Glossary.read(path)
    with pytest.raises(GlossaryError, match="missing.tsv: cannot read it"):
        Glossary.read(tmp_path / "missing.tsv")


def test_the_longest_term_wins_and_matches_never_overlap() -> None:
    glossary = Glossary.from_mapping({"New York": "New York City", "York": "Yorck", "York University": "YU",
                                      "New": "neu"})
    assert swapped("Sie studiert an der New York University in York.", glossary) == \
        ("Sie studiert an der 1 2 in 3.", ["neu", "YU", "Yorck"])  # 15 characters beat 8, then `New` alone
    assert swapped("Sie lebt in New York.", glossary) == ("Sie lebt in 1.", ["New York City"])


def test_terms_match_whole_words_only() -> None:
    glossary = Glossary.from_mapping({"Haus": "house", "E-Mail": "email"})
    text, spans = swapped("Haustür, Hochhaus, Haus-Tür und Haus- und Gartenarbeit; das Haus.", glossary)
    assert text == "Haustür, Hochhaus, Haus-Tür und Haus- und Gartenarbeit; das 1." and spans == ["house"]
    assert swapped("Eine E-Mail, keine E-Mails.", glossary) == ("Eine 1, keine E-Mails.", ["email"])


def test_matching_ignores_case_and_knows_umlauts_and_sharp_s() -> None:
    glossary = Glossary.from_mapping({"Straße": "street", "Äpfel": "apples", "groß": "big"})
    for sentence in ("Die Straße", "die STRASSE", "die strasse", "die STRAẞE"):
        assert mask_terms(sentence, glossary).text.endswith(" 1"), sentence
    assert swapped("ÄPFEL und äpfel, Apfel", glossary)[1] == ["APPLES", "apples"]
    assert swapped("Er ist groß, größer", glossary) == ("Er ist 1, größer", ["big"])
    decomposed = "A\u0308pfel"  # Ä as A and a combining diaeresis
    assert swapped(f"Rote {decomposed}.", glossary) == ("Rote 1.", ["apples"])


def test_a_term_at_the_sentence_start_is_matched() -> None:
    glossary = Glossary.from_mapping({"schnell": "quickly", "Hund": "dog"})
    assert swapped("Schnell lief der Hund.", glossary) == ("1 lief der 2.", ["quickly", "dog"])


def test_terms_never_cut_into_urls_or_numbers_but_may_hold_them_whole() -> None:
    glossary = Glossary.from_mapping({"haus": "house", "5 Euro": "five euros", "Euro": "euro"})
    text, spans = swapped("Siehe www.haus.de/haus oder mail@haus.de: 5 Euro, 12 Euro und 3,5 Euro.", glossary)
    assert text == "Siehe 1 oder 2: 3, 4 5 und 6 7." and spans == [
        "www.haus.de/haus", "mail@haus.de", "five euros", "12", "euro", "3,5", "euro"]
    assert swapped("Windows 10 läuft, Windows 11 nicht.", None, ("Windows 10",)) == \
        ("1 läuft, Windows 2 nicht.", ["Windows 10", "11"])


def test_restore_puts_the_target_term_where_the_model_put_its_placeholder() -> None:
    glossary = Glossary.from_mapping({"Kanu": ["canoe", "canoes"], "Preis": "price"})
    masked = mask_terms("Das Kanu kostet 300 Euro, der Preis ist fest.", glossary)
    assert masked.text == "Das 1 kostet 2 Euro, der 3 ist fest."
    assert masked.restore("The 1 costs 2 euros, the 3 is fixed.") == "The canoe costs 300 euros, the price is fixed."
    assert masked.restore("The 3 of the 1 is 2 euros.") == "The price of the canoe is 300 euros."
    assert masked.restore("It costs 2 euros.") == "It costs 300 euros. canoe price"  # dropped: appended, never lost
    assert masked.restore("The 1 3 1 costs 2.") == "The canoe price 1 costs 300."  # repeated: restored once


def test_a_target_opening_the_translation_is_capitalised_and_a_german_noun_keeps_its_capital() -> None:
    to_en = Glossary.from_mapping({"schnell": "quickly", "Hund": "dog", "iPhone": "iPhone"})
    masked = mask_terms("Schnell lief der Hund.", to_en)
    assert masked.restore("1 ran the 2.") == "Quickly ran the dog."
    assert masked.restore("The 2 ran 1.") == "The dog ran quickly."  # moved: lower case, though it opened the source
    assert masked.restore("„2 ran 1.“") == "„Dog ran quickly.“"
    assert mask_terms("Mein iPhone.", to_en).restore("1 of mine.") == "iPhone of mine."  # mixed case as written
    assert mask_terms("Der HUND bellt.", to_en).restore("The 1 barks.") == "The DOG barks."
    to_de = Glossary.from_mapping({"house": "Haus", "quickly": "schnell"})
    masked = mask_terms("The house burned quickly.", to_de)
    assert masked.restore("Das 1 brannte 2 ab.") == "Das Haus brannte schnell ab."
    assert masked.restore("2 brannte das 1 ab.") == "Schnell brannte das Haus ab."


def test_do_not_translate_spans_come_back_verbatim_and_match_case_sensitively() -> None:
    glossary = Glossary.from_mapping({"Apple": "Apfel"})
    masked = mask_terms("Der ACME-3000 von Apple und ein apple pie: ACME-3000!", glossary, ["ACME-3000", "Apple"])
    assert masked.text == "Der 1 von 2 und ein 3 pie: 4!"
    assert masked.spans == ("ACME-3000", "Apple", "Apfel", "ACME-3000")  # `apple` is no name: the glossary's term
    assert masked.restore("4! The 1 by 2 and an 3 pie") == "ACME-3000! The ACME-3000 by Apple and an Apfel pie"
    assert mask_terms("Ruf Tom an.", None, ["tom"]).text == "Ruf Tom an."


def test_a_sentence_without_terms_is_masked_exactly_as_spans_mask_masks_it() -> None:
    glossary = Glossary.from_mapping({"Haus": "house"}).keeping(["ACME"])
    for sentence in ("Ein Mann mit 3 Hunden, 77,8 % und 🎉 auf https://example.org/haus?x=1 (mail@example.org).",
                     "Nichts zu tun.", "", "Haustür 12:30 Uhr, Tel. +49 30 1234"):
        masked = mask_terms(sentence, glossary)
        assert masked == mask(sentence) and type(masked) is Masked
        assert masked.restore(masked.text) == sentence


def test_masked_terms_are_stable_under_the_servers_span_masking() -> None:
    """The bench (and markup) feed a masked text through `translate_sentences`, which masks again."""
    glossary = Glossary.from_mapping({"Haus": "house", "Hof": "yard"})
    for sentence in ("Haus, Hof: 5 Häuser.", "...Haus,Hof/Haus 7%", "(Haus)+Hof-Test Hof"):
        masked = mask_terms(sentence, glossary)
        again = mask(masked.text)
        assert again.text == masked.text and again.spans == tuple(str(k) for k in range(1, len(masked.spans) + 1))


def test_a_requests_glossary_lies_over_the_files_and_wins(tmp_path: Path) -> None:
    base = Glossary.read(tsv(tmp_path, "Haus\thouse\nBaum\ttree\n"))
    terms = for_request(base, {"haus": ["home", "homes"], "Garten": "garden"}, ["Baum"])
    assert terms is not None and len(terms) == 4
    assert terms.lookup("Haus") == Term("haus", "home", ("homes",)) and terms.lookup("baum").target == "tree"
    masked = mask_terms("Haus, Baum und Garten; ein baum.", terms)
    assert masked.spans == ("home", "Baum", "garden", "tree")  # `Baum` kept as written, `baum` the file's term
    assert swapped("Haus, Baum.", base) == ("1, 2.", ["house", "tree"])  # the file's glossary untouched
    assert for_request(None, None, None) is None and for_request(None, {}, []) is None
    assert for_request(base, None, None) is base


@pytest.mark.parametrize("glossary, keep, says", [
    (["Haus"], None, "expected an object"),
    ({"Haus": ""}, None, r"glossary\['Haus'\]: expected a target term"),
    ({"Haus": []}, None, "expected a target term"),
    ({"Haus": ["house", 3]}, None, "expected a target term"),
    ({"Haus": "house", "HAUS": "home"}, None, "given twice"),
    ({"Haus": "house", " ": "y"}, None, r"glossary\[' '\]: the source term '' has no word in it"),
    (None, "ACME", "do_not_translate: expected a list"),
    (None, ["ACME", ""], r"do_not_translate\[1\]: expected a non-empty string"),
])
def test_a_malformed_request_glossary_is_an_error_naming_the_entry(glossary: object, keep: object, says: str) -> None:
    with pytest.raises(GlossaryError, match=says):
        for_request(None, glossary, keep)  # type: ignore[arg-type]
