"""The checks bench/tokenize_cache.py and bench/decode_speed.py enforce before they report a speed:
warm output byte-equal to cold output, and cached search output equal to uncached output."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.decode_speed import compare
from bench.tokenize_cache import differing_files


def test_warm_output_must_equal_cold_output_byte_for_byte(tmp_path: Path) -> None:
    cold, warm = tmp_path / "cold", tmp_path / "warm"
    for folder in (cold, warm):
        folder.mkdir()
        (folder / "train.de.tsv").write_bytes(b"Ein Hund .\t1100\n")
    assert differing_files(cold, warm) == []
    (warm / "train.de.tsv").write_bytes(b"Ein Hund .\t1100\r\n")  # one byte more
    (cold / "val.de.tsv").write_bytes(b"x\t1\n")  # missing from the warm run
    assert differing_files(cold, warm) == ["train.de.tsv", "val.de.tsv"]


def measured(beam_no_cache: list[list[int]]) -> dict[str, dict]:
    same = [[5, 6, 7], [8]]
    runs = {"greedy": same, "greedy_no_cache": same, "greedy_no_cache_all_positions": same,
            "beam": same, "beam_no_cache": beam_no_cache, "beam_no_cache_all_positions": same}
    return {name: {"sentences_per_s": 10.0 if name in ("greedy", "beam") else 2.0, "outputs": out}
            for name, out in runs.items()}


def test_cache_speedups_need_identical_outputs() -> None:
    rows = compare(measured([[5, 6, 7], [8]]))
    assert [(r["cached"], r["baseline"], r["ratio"]) for r in rows] == [
        ("greedy", "greedy_no_cache", 5.0), ("greedy", "greedy_no_cache_all_positions", 5.0),
        ("beam", "beam_no_cache", 5.0), ("beam", "beam_no_cache_all_positions", 5.0)]
    with pytest.raises(SystemExit, match="beam_no_cache: 1 of 2 outputs differ"):
        compare(measured([[5, 6, 7], [9]]))
