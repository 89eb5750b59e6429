"""Stage 2, validate, streaming: a split is read in chunks of `CHUNK_LINES` lines per file,
so these tests make chunks tiny: the output and every exact count are the same whatever the chunk
size, duplicates are found across chunks, a bad line is named by its line in the file, and the
distribution expectations run on a reservoir sample (nmt.data.chunks.Reservoir)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import nmt.data.validate as validate
from nmt.config.data import ValidateConfig
from nmt.data.chunks import Digests, Reservoir
from nmt.errors import GateError
from nmt.files.lines import read_lines
from support.corpus import synthetic_pairs, write_corpus
from support.validate import assert_untouched, report, run_validate, with_sentinel

CFG = ValidateConfig(max_words=20, min_pairs=10, min_train_pairs=100, max_duplicate_rate=0.1, max_filtered_rate=0.1)


def with_problems_and_duplicates() -> dict[str, tuple[list[str], list[str]]]:
    """train: 300 pairs, 3 with row-level problems, pairs repeated far apart (also a bad row repeated); val: 40."""
    de, en = synthetic_pairs(300, seed=1)
    de[10], en[10] = "", "Hello"  # empty de
    de[100], en[100] = "Ein Hund", "A dog runs across the green field in the morning sun"  # ratio 11/3
    de[200], en[200] = " ".join(["Wort"] * 19), " ".join(["word"] * 21)  # en over 20 words
    for src, dst in [(0, 299), (1, 150), (1, 151), (10, 250), (57, 58)]:  # pair 1 three times in all
        de[dst], en[dst] = de[src], en[src]
    return {"train": (de, en), "val": synthetic_pairs(40, seed=2)}


def outputs(clean: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(clean.iterdir())}


def without_chunk_counts(body: dict) -> dict:
    """The report, less what names the chunking (how many chunks the pair count summed)."""
    stats = {split: {k: v for k, v in s.items() if k != "expectations_on"} if isinstance(s, dict) else s
             for split, s in body["stats"].items()}
    return {"checks": body["checks"], "stats": stats}


def test_output_and_report_are_the_same_whatever_the_chunk_size(tmp_path: Path, monkeypatch) -> None:
    corpus = write_corpus(tmp_path / "raw", with_problems_and_duplicates())
    seen = []
    for lines in (20_000, 7, 1):
        monkeypatch.setattr(validate, "CHUNK_LINES", lines)
        gate = run_validate(tmp_path, corpus, CFG)
        assert gate.success
        seen.append((outputs(tmp_path / "clean"), without_chunk_counts(report(tmp_path))))
    assert seen[0] == seen[1] == seen[2]

    files, body = seen[0]
    de, en = with_problems_and_duplicates()["train"]
    keep = [i for i in range(300) if i not in (10, 100, 200, 250)]  # 250 repeats the empty-de row 10
    assert files["train.de"] == "".join(f"{de[i]}\n" for i in keep).encode()
    assert files["train.en"] == "".join(f"{en[i]}\n" for i in keep).encode()
    assert body["stats"]["train"]["rows_with_problems"] == 4 and body["stats"]["train"]["pairs_kept"] == 296
    on = report(tmp_path)["stats"]["train"]["expectations_on"]  # the last run's: one line per chunk
    assert on["pairs"].startswith("per-chunk aggregates: 300 chunk(s) of up to 1 lines")


def test_duplicates_are_counted_exactly_across_chunks(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(validate, "CHUNK_LINES", 7)
    corpus = write_corpus(tmp_path / "raw", with_problems_and_duplicates())
    run_validate(tmp_path, corpus, CFG)
    stats = report(tmp_path)["stats"]
    assert stats["train"]["duplicate_pairs"] == 5  # 299, 150, 151, 250 in other chunks; 58 in the same one
    assert stats["val"]["duplicate_pairs"] == 0
    unique = next(c for c in report(tmp_path)["checks"] if c["name"] == "train: unique pairs")
    assert unique["success"] and unique["observed"] == f"{295 / 300:.4g}"


def test_duplicate_rate_gate_is_exact_at_its_limit(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(validate, "CHUNK_LINES", 16)
    de, en = synthetic_pairs(300, seed=1)
    corpus = write_corpus(tmp_path / "raw", {"train": (de + de[:15], en + en[:15]), "val": synthetic_pairs(40, seed=2)})
    limit = 15 / 315
    gate = run_validate(tmp_path, corpus, ValidateConfig(min_pairs=10, min_train_pairs=100, max_duplicate_rate=limit))
    assert gate.success and gate.stats["train"]["duplicate_pairs"] == 15
    with pytest.raises(GateError, match="train: unique pairs"):
        run_validate(tmp_path, corpus, ValidateConfig(min_pairs=10, min_train_pairs=100,
                                                      max_duplicate_rate=14 / 315))


def test_digests_count_repeats_in_any_order() -> None:
    digests = Digests()
    digests.add(["a\tb", "c\td"])
    digests.add(["a\tb", "é\tx", "c\td", "a\tb"])
    assert digests.count == 6 and digests.distinct() == 3 and digests.repeated() == 3
    assert Digests().repeated() == 0


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_bad_line_is_named_by_its_line_in_the_file(tmp_path: Path, monkeypatch, gz: bool) -> None:
    monkeypatch.setattr(validate, "CHUNK_LINES", 5)
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(40, seed=2)},
                          gz=gz)
    name = "val.en" + (".gz" if gz else "")
    lines = [s.encode("utf-8") for s in synthetic_pairs(40, seed=2)[1]]
    lines[22] = b"A caf\xe9 in Latin-1."  # line 23: in the fifth chunk of 5 lines
    data = b"".join(line + b"\n" for line in lines)
    (tmp_path / "raw" / name).write_bytes(gzip.compress(data) if gz else data)
    sentinel = with_sentinel(tmp_path)
    with pytest.raises(GateError) as err:
        run_validate(tmp_path, corpus)
    assert f"{name}:23: invalid UTF-8 (byte 0xe9 at column 6)" in str(err.value)
    assert [c["name"] for c in report(tmp_path)["checks"] if not c["success"]] == [f"val: {name} readable"]
    assert_untouched(tmp_path, sentinel)


def test_the_first_files_problem_wins_as_in_a_whole_file_read(tmp_path: Path, monkeypatch) -> None:
    """train.en breaks in its first chunk, train.de only in its last: train.de is named, as it
    would be if it were read whole before train.en."""
    monkeypatch.setattr(validate, "CHUNK_LINES", 10)
    de, en = synthetic_pairs(300, seed=1)
    corpus = write_corpus(tmp_path / "raw", {"train": (de, en), "val": synthetic_pairs(40, seed=2)})
    for name, lines, bad in (("train.de.gz", de, 290), ("train.en.gz", en, 2)):
        data = [s.encode() for s in lines]
        data[bad] = b"\xff"
        (tmp_path / "raw" / name).write_bytes(gzip.compress(b"".join(line + b"\n" for line in data)))
    with pytest.raises(GateError) as err:
        run_validate(tmp_path, corpus)
    assert "train.de.gz:291: invalid UTF-8" in str(err.value) and "train.en.gz:3" not in str(err.value)


def test_misaligned_files_are_counted_to_their_ends(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(validate, "CHUNK_LINES", 7)
    de, en = synthetic_pairs(300, seed=1)
    corpus = write_corpus(tmp_path / "raw", {"train": (de[:-20], en), "val": synthetic_pairs(40, seed=2)})
    with pytest.raises(GateError, match="train.de.gz: 280 lines, train.en.gz: 300 lines"):
        run_validate(tmp_path, corpus)
    assert "train" not in report(tmp_path)["stats"]


def test_no_chunk_holds_more_than_chunk_lines_pairs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(validate, "CHUNK_LINES", 64)
    sizes: list[int] = []
    frame = validate.pair_frame

    def recording(lines):
        sizes.append(len(next(iter(lines.values()))))
        return frame(lines)

    monkeypatch.setattr(validate, "pair_frame", recording)
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(40, seed=2)})
    run_validate(tmp_path, corpus)
    assert max(sizes) == 64 and sum(sizes) == 340
    assert len(read_lines(tmp_path / "clean" / "train.de")) == 300


# --- the distribution expectations on a reservoir sample ----------------------------------------------------------


def sample_suite(body: dict, split: str) -> dict:
    """The GX result of `split`'s suite on the sample (the one with the length ratio)."""
    for result in body["great_expectations"]:
        labels = [e["expectation_config"]["meta"]["label"] for e in result["results"]]
        if result["suite_name"] == f"raw-{split}" and "length ratio" in labels:
            return result
    raise AssertionError(f"no sample suite for {split}")


def test_a_split_larger_than_the_sample_is_checked_on_a_reservoir_sample(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(validate, "SAMPLE_ROWS", 50)
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(40, seed=2)})
    results = []
    for lines in (20_000, 7):
        monkeypatch.setattr(validate, "CHUNK_LINES", lines)
        assert run_validate(tmp_path, corpus).success
        results.append(sample_suite(report(tmp_path), "train"))
    assert results[0] == results[1]  # the same sample whatever the chunking
    assert {r["result"]["element_count"] for r in results[0]["results"]} == {50}

    body = report(tmp_path)
    on = body["stats"]["train"]["expectations_on"]
    assert on["words per sentence, length ratio"] == "reservoir sample of 50 of 300 rows (algorithm R, seed 29)"
    assert on["pairs"].startswith("per-chunk aggregates")
    assert body["stats"]["val"]["expectations_on"]["words per sentence, length ratio"].startswith("all 40 rows")
    assert {r["result"]["element_count"] for r in sample_suite(body, "val")["results"]} == {40}
    pairs = next(c for c in body["checks"] if c["name"] == "train: pairs")
    assert pairs["observed"] == "300"  # exact, summed over chunks, not the sample's size
    assert body["stats"]["train"]["pairs"] == 300


def test_a_failing_distribution_fails_on_the_sample_and_exactly(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(validate, "SAMPLE_ROWS", 50)
    monkeypatch.setattr(validate, "CHUNK_LINES", 16)
    de, en = synthetic_pairs(300, seed=1)
    de = ["" if i % 3 == 0 else s for i, s in enumerate(de)]  # a third of the rows: empty de
    corpus = write_corpus(tmp_path / "raw", {"train": (de, en), "val": synthetic_pairs(40, seed=2)})
    sentinel = with_sentinel(tmp_path)
    with pytest.raises(GateError):
        run_validate(tmp_path, corpus)
    body = report(tmp_path)
    failed = {c["name"]: c["observed"] for c in body["checks"] if not c["success"]}
    assert set(failed) == {"train: de words per sentence", "train: length ratio", "train: rows with problems"}
    assert " of 50 rows outside" in failed["train: de words per sentence"]
    assert failed["train: rows with problems"] == "100 of 300 (33.333%)"
    assert_untouched(tmp_path, sentinel)


def test_reservoir_keeps_a_short_stream_whole_and_is_chunking_invariant() -> None:
    short = Reservoir(10, seed=1)
    short.extend([[1, 2, 3], ["a", "b", "c"]])
    short.extend([[4], ["d"]])
    assert short.rows == [(1, "a"), (2, "b"), (3, "c"), (4, "d")] and short.seen == 4

    samples = []
    for chunk in (1000, 33, 1):
        r = Reservoir(10, seed=7)
        for start in range(0, 1000, chunk):
            r.extend([list(range(start, min(start + chunk, 1000)))])
        samples.append(r.rows)
    assert samples[0] == samples[1] == samples[2] and len(samples[0]) == 10
    assert len(set(samples[0])) == 10 and max(samples[0])[0] >= 10  # later rows do get in
    assert json.dumps(Reservoir(3, seed=0).columns(2)) == "[[], []]"


def test_reservoir_is_uniform() -> None:
    """Each of 100 rows lands in a 10-row sample about 10% of the time over many seeds."""
    hits = [0] * 100
    for seed in range(2000):
        r = Reservoir(10, seed=seed)
        r.extend([list(range(100))])
        for (row,) in r.rows:
            hits[row] += 1
    assert all(140 <= h <= 260 for h in hits)  # expected 200 each; binomial sd about 13
