"""Multi-sentence segments cut as the server cuts texts (nmt.data.sentences on the one splitter, nmt.text.sentences)."""

from __future__ import annotations

import pytest

from nmt.data.sentences import aligned_sentences, split_pair, split_sentences


@pytest.mark.parametrize("text,expected", [
    ("Er kam. Sie ging.", ["Er kam.", "Sie ging."]),
    ("Wirklich? Ja! Gut…  Dann los.", ["Wirklich?", "Ja!", "Gut…  Dann los."]),  # no boundary after an ellipsis
    ("Er sagte: „Gut.“ Dann ging er.", ["Er sagte: „Gut.“", "Dann ging er."]),
    ('He said "Yes!" Then he left.', ['He said "Yes!"', "Then he left."]),  # spaCy's German rules read it too
    ("Im Sommer 2026 spielt Mexiko. Cocca folgt.", ["Im Sommer 2026 spielt Mexiko.", "Cocca folgt."]),
    ("Am 3. Oktober kam Dr. Martino, z.B. mit Nr. 5.", ["Am 3. Oktober kam Dr. Martino, z.B. mit Nr. 5."]),
    ("Mr. Smith met U.S. officials. They agreed.", ["Mr. Smith met U.S. officials.", "They agreed."]),
    ("Das 10. Jahrhundert war lang.", ["Das 10. Jahrhundert war lang."]),
    ("no capital. after this", ["no capital.", "after this"]),
    ("", [""]),
])
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text, "de") == expected


@pytest.mark.parametrize("text,expected", [
    ('He said "Yes!" Then he left.', ['He said "Yes!"', "Then he left."]),
    ("Mr. Smith met U.S. officials. They agreed.", ["Mr. Smith met U.S. officials.", "They agreed."]),
])
def test_split_sentences_by_the_languages_rules(text: str, expected: list[str]) -> None:
    assert split_sentences(text, "en") == expected


def test_the_training_data_is_cut_as_the_server_cuts_a_text() -> None:
    from nmt.text.sentences import SentenceSplitter

    text = "Am 3. Oktober kam er. Wirklich? Ja! no capital. after this"
    assert split_sentences(text, "de") == SentenceSplitter("de").split(text).sentences


def test_a_pair_splits_where_both_sides_have_the_same_count() -> None:
    assert split_pair("Er kam. Sie ging.", "He came. She left.", ("de", "en")) == [("Er kam.", "He came."),
                                                                     ("Sie ging.", "She left.")]


def test_a_pair_stays_whole_where_the_counts_differ() -> None:
    src, tgt = "Er kam. Sie ging.", "He came and she left. "
    assert aligned_sentences(src, tgt, ("de", "en")) is None
    assert split_pair(src, tgt, ("de", "en")) == [(src, tgt.strip())]


def test_one_sentence_each_is_one_pair() -> None:
    assert aligned_sentences("Er kam.", "He came.", ("de", "en")) == [("Er kam.", "He came.")]
