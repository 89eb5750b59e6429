"""Stage 2, validate: row-level filtering: empty sides, too many words and extreme length ratios
dropped from the filtered splits (train) and kept elsewhere, counted once per row, and the gate
on the share of such rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt.config.data import ValidateConfig
from nmt.errors import GateError
from nmt.files.lines import read_lines
from support.corpus import synthetic_pairs, write_corpus
from support.validate import assert_untouched, report, run_validate, with_sentinel

# --- row-level filtering -----------------------------------------------------------------------------------------

# one row per problem, each with exactly one problem under ValidateConfig(max_words=20, max_length_ratio=3)
EMPTY_DE = ("", "Hello")  # ratio 2/1
LONG_EN = (" ".join(["Wort"] * 19), " ".join(["word"] * 21))  # en over 20 words, ratio 22/20
EXTREME = ("Ein Hund", "A dog runs across the green field in the morning sun")  # (10+1)/(2+1) > 3
BAD_ROWS = [EMPTY_DE, LONG_EN, EXTREME]


def insert_rows(pairs: tuple[list[str], list[str]], rows, at: list[int]) -> tuple[list[str], list[str]]:
    de, en = list(pairs[0]), list(pairs[1])
    for pos, (a, b) in sorted(zip(at, rows), reverse=True):
        de.insert(pos, a)
        en.insert(pos, b)
    return de, en


def test_bad_rows_are_dropped_from_train_and_kept_in_val(tmp_path: Path) -> None:
    train = insert_rows(synthetic_pairs(300, seed=1), BAD_ROWS, [0, 150, 300])
    val = insert_rows(synthetic_pairs(100, seed=2), BAD_ROWS, [5, 50, 99])
    corpus = write_corpus(tmp_path / "raw", {"train": train, "val": val})
    cfg = ValidateConfig(max_words=20, max_length_ratio=3.0, min_pairs=10, min_train_pairs=100)

    gate = run_validate(tmp_path, corpus, cfg)
    assert gate.success

    clean = tmp_path / "clean"
    good = synthetic_pairs(300, seed=1)
    assert read_lines(clean / "train.de") == good[0]
    assert read_lines(clean / "train.en") == good[1]
    # val is not in filter_splits: every row stays, line by line
    assert read_lines(clean / "val.de") == val[0]
    assert read_lines(clean / "val.en") == val[1]
    assert read_lines(clean / "val.de")[5] == "" and read_lines(clean / "val.en")[5] == "Hello"

    stats = report(tmp_path)["stats"]
    expected_problems = {"empty de": 1, "de over 20 words": 0, "empty en": 0, "en over 20 words": 1,
                         "length ratio over 3": 1}
    assert stats["train"]["row_problems"] == expected_problems
    assert stats["train"] | {"row_problems": None, "expectations_on": None} == {
        "pairs": 303, "pairs_kept": 300, "row_problems": None, "rows_with_problems": 3, "filtered": True,
        "duplicate_pairs": 0, "expectations_on": None}
    assert stats["val"]["row_problems"] == expected_problems
    assert stats["val"]["pairs"] == stats["val"]["pairs_kept"] == 103
    assert stats["val"]["filtered"] is False


def test_filter_splits_is_configurable(tmp_path: Path) -> None:
    val = insert_rows(synthetic_pairs(100, seed=2), BAD_ROWS, [5, 50, 99])
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": val})
    cfg = ValidateConfig(max_words=20, min_pairs=10, min_train_pairs=100, filter_splits=("train", "val"))
    run_validate(tmp_path, corpus, cfg)
    assert read_lines(tmp_path / "clean" / "val.de") == synthetic_pairs(100, seed=2)[0]
    assert report(tmp_path)["stats"]["val"]["pairs_kept"] == 100


def test_a_row_with_several_problems_is_counted_once(tmp_path: Path) -> None:
    both = ("", " ".join(["word"] * 25))  # empty de, long en, extreme ratio
    train = insert_rows(synthetic_pairs(300, seed=1), [both], [10])
    corpus = write_corpus(tmp_path / "raw", {"train": train, "val": synthetic_pairs(40, seed=2)})
    cfg = ValidateConfig(max_words=20, min_pairs=10, min_train_pairs=100)
    run_validate(tmp_path, corpus, cfg)
    stats = report(tmp_path)["stats"]["train"]
    assert stats["row_problems"]["empty de"] == stats["row_problems"]["en over 20 words"] == 1
    assert stats["row_problems"]["length ratio over 3"] == 1
    assert stats["rows_with_problems"] == 1 and stats["pairs_kept"] == 300


def test_whitespace_only_side_counts_as_empty(tmp_path: Path) -> None:
    train = insert_rows(synthetic_pairs(300, seed=1), [(" \t ", "x")], [3])
    corpus = write_corpus(tmp_path / "raw", {"train": train, "val": synthetic_pairs(40, seed=2)})
    run_validate(tmp_path, corpus)
    assert report(tmp_path)["stats"]["train"]["row_problems"]["empty de"] == 1
    assert len(read_lines(tmp_path / "clean" / "train.de")) == 300


@pytest.mark.parametrize("split", ["train", "val"])
def test_too_many_bad_rows_fail_the_gate(tmp_path: Path, split: str) -> None:
    splits = {"train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(100, seed=2)}
    n = len(splits[split][0])
    empty_de = [("", f"Hello {i}") for i in range(n // 10)]  # distinct, so not duplicates too
    splits[split] = insert_rows(splits[split], empty_de, list(range(0, n, 10)))  # ~9% bad
    corpus = write_corpus(tmp_path / "raw", splits)
    sentinel = with_sentinel(tmp_path)
    with pytest.raises(GateError) as err:
        run_validate(tmp_path, corpus, ValidateConfig(min_pairs=10, min_train_pairs=100, max_filtered_rate=0.05))
    msg = str(err.value)
    assert f"{split}: rows with problems: {n // 10} of {n + n // 10}" in msg
    assert "share <= 0.05" in msg
    assert_untouched(tmp_path, sentinel)
    # the same data passes with a looser limit
    run_validate(tmp_path, corpus, ValidateConfig(min_pairs=10, min_train_pairs=100, max_filtered_rate=0.1))
    assert len(read_lines(tmp_path / "clean" / f"{split}.de")) == (n if split == "train" else n + n // 10)
