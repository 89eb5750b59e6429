"""Stage 4, vocab: the Vocabulary (nmt.text.vocab): fixed special ids, frequency order, encode/decode,
and vocabulary files that are saved, checked by SHA-256 and rejected when malformed."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import pytest

from nmt.errors import DataError
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID, SPECIALS, UNK_ID, Vocabulary

# --- Vocabulary ---------------------------------------------------------------------------------------------------


def test_specials_have_fixed_ids() -> None:
    assert SPECIALS == ("<pad>", "<unk>", "<s>", "</s>")
    assert (PAD_ID, UNK_ID, BOS_ID, EOS_ID) == (0, 1, 2, 3)
    v = Vocabulary.from_counts(Counter())
    assert v.itos == list(SPECIALS) and len(v) == 4
    assert [v.stoi[s] for s in SPECIALS] == [0, 1, 2, 3]


def test_from_counts_orders_by_frequency_then_alphabet() -> None:
    counts = Counter({"b": 3, "a": 3, "c": 5, "d": 1, "Z": 3, "e": 2})
    v = Vocabulary.from_counts(counts)
    assert v.itos[4:] == ["c", "Z", "a", "b", "e", "d"]  # ties by code point: "Z" < "a"
    assert Vocabulary.from_counts(counts, min_freq=2).itos[4:] == ["c", "Z", "a", "b", "e"]
    assert Vocabulary.from_counts(counts, min_freq=3).itos[4:] == ["c", "Z", "a", "b"]
    assert Vocabulary.from_counts(counts, min_freq=2, max_size=2).itos == list(SPECIALS) + ["c", "Z"]
    assert Vocabulary.from_counts(counts, max_size=100) == v
    # insertion order of the counts does not matter
    assert Vocabulary.from_counts(Counter(dict(reversed(list(counts.items()))))) == v


def test_from_counts_keeps_reserved_symbols_within_max_size() -> None:
    counts = Counter({"the": 9, "a": 5, "x": 1})
    v = Vocabulary.from_counts(counts, min_freq=2, reserved=["x", "##x", "a", "<unk>"])
    assert v.itos[4:] == ["the", "a", "x", "##x"]  # seen ones ranked, unseen ones appended, specials once
    small = Vocabulary.from_counts(counts, max_size=3, reserved=["x", "##x"])
    assert small.itos[4:] == ["the", "x", "##x"]  # the reserved symbols take their room first


def test_from_counts_never_duplicates_specials() -> None:
    v = Vocabulary.from_counts(Counter({"<unk>": 50, "<pad>": 9, "x": 2, "</s>": 7}))
    assert v.itos == list(SPECIALS) + ["x"]


def test_encode_decode() -> None:
    v = Vocabulary.from_counts(Counter({"Hund": 3, "Mann": 2}))
    assert v.encode(["Mann", "Hund", "Katze", "<s>"]) == [5, 4, UNK_ID, BOS_ID]
    assert v.decode([4, 5, UNK_ID, EOS_ID]) == ["Hund", "Mann", "<unk>", "</s>"]
    assert v.encode([]) == []


def test_save_load_roundtrip_and_sha(tmp_path: Path) -> None:
    v = Vocabulary.from_counts(Counter({"Straße": 4, "läuft": 4, "über": 3, "😀": 2, ".": 9}))
    path = tmp_path / "src.vocab"
    v.save(path)
    assert path.read_text(encoding="utf-8").splitlines() == v.itos
    assert v.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    loaded = Vocabulary.load(path, sha256=v.sha256)
    assert loaded == v and loaded.sha256 == v.sha256 and loaded.stoi == v.stoi
    assert Vocabulary.load(path) == v
    again = Vocabulary.from_counts(Counter({".": 9, "über": 3, "läuft": 4, "Straße": 4, "😀": 2}))
    assert again.sha256 == v.sha256
    assert Vocabulary.from_counts(Counter({"a": 1})).sha256 != v.sha256


def test_load_with_wrong_sha(tmp_path: Path) -> None:
    v = Vocabulary.from_counts(Counter({"a": 2}))
    v.save(tmp_path / "v")
    with pytest.raises(DataError, match="SHA-256"):
        Vocabulary.load(tmp_path / "v", sha256="0" * 64)


@pytest.mark.parametrize("lines", [
    ["<unk>", "<pad>", "<s>", "</s>", "a"],  # specials in the wrong order
    ["a", "<pad>", "<unk>", "<s>", "</s>"],
    ["<pad>", "<unk>", "<s>"],  # too short
    [],
    ["<pad>", "<unk>", "<s>", "</s>", "a", "b", "a"],  # duplicate
    ["<pad>", "<unk>", "<s>", "</s>", "a", "<unk>"],  # duplicate special
    ["<pad>", "<unk>", "<s>", "</s>", "a", ""],  # empty symbol
    ["<pad>", "<unk>", "<s>", "</s>", "a b"],  # whitespace
], ids=["order", "not-first", "short", "empty-file", "dup", "dup-special", "empty-symbol", "space"])
def test_load_rejects_invalid_files(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "bad.vocab"
    path.write_text("".join(s + "\n" for s in lines), encoding="utf-8")
    with pytest.raises(DataError, match="not a valid vocabulary"):
        Vocabulary.load(path)


def test_constructor_rejects_duplicates_and_bad_specials() -> None:
    with pytest.raises(ValueError, match="more than once"):
        Vocabulary(list(SPECIALS) + ["x", "y", "x"])
    with pytest.raises(ValueError, match="first symbols"):
        Vocabulary(["x"] + list(SPECIALS))


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="file not found"):
        Vocabulary.load(tmp_path / "nope.vocab")
