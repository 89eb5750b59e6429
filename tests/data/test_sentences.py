"""The sentence splitting rule for multi-sentence segments (nmt.data.sentences)."""

from __future__ import annotations

import pytest

from nmt.data.sentences import aligned_sentences, split_pair, split_sentences


@pytest.mark.parametrize("text,expected", [
    ("Er kam. Sie ging.", ["Er kam.", "Sie ging."]),
    ("Wirklich? Ja! Gut…  Dann los.", ["Wirklich?", "Ja!", "Gut…", "Dann los."]),
    ("Er sagte: „Gut.“ Dann ging er.", ["Er sagte: „Gut.“", "Dann ging er."]),
    ('He said "Yes!" Then he left.', ['He said "Yes!"', "Then he left."]),
    ("Im Sommer 2026 spielt Mexiko. Cocca folgt.", ["Im Sommer 2026 spielt Mexiko.", "Cocca folgt."]),
    ("Am 3. Oktober kam Dr. Martino, z.B. mit Nr. 5.", ["Am 3. Oktober kam Dr. Martino, z.B. mit Nr. 5."]),
    ("Mr. Smith met U.S. officials. They agreed.", ["Mr. Smith met U.S. officials.", "They agreed."]),
    ("Das 10. Jahrhundert war lang.", ["Das 10. Jahrhundert war lang."]),
    ("no capital. after this", ["no capital. after this"]),
    ("", [""]),
])
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_a_pair_splits_where_both_sides_have_the_same_count() -> None:
    assert split_pair("Er kam. Sie ging.", "He came. She left.") == [("Er kam.", "He came."),
                                                                     ("Sie ging.", "She left.")]


def test_a_pair_stays_whole_where_the_counts_differ() -> None:
    src, tgt = "Er kam. Sie ging.", "He came and she left. "
    assert aligned_sentences(src, tgt) is None
    assert split_pair(src, tgt) == [(src, tgt.strip())]


def test_one_sentence_each_is_one_pair() -> None:
    assert aligned_sentences("Er kam.", "He came.") == [("Er kam.", "He came.")]
