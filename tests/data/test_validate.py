"""Stage 2, validate: the raw-data gate (nmt.data.validate.validate_corpus) on whole files and corpora:
the real Multi30k, misaligned, empty, truncated, missing or non-UTF-8 files, too few pairs,
duplicate pairs, and the CLI shell. Row-level filtering: test_validate_rows.py."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from nmt.cli import main
from nmt.config.data import ValidateConfig
from nmt.config.params import load_params
from nmt.data.validate import validate_corpus
from nmt.errors import GateError
from nmt.files.lines import read_lines
from support.corpus import ROOT, make_params, synthetic_pairs, write_corpus
from support.validate import assert_untouched, report, run_validate, with_sentinel


def ratio(a: str, b: str) -> float:
    wa, wb = len(a.split()) + 1, len(b.split()) + 1
    return max(wa, wb) / min(wa, wb)


# --- the real corpus ----------------------------------------------------------------------------------------------


def test_multi30k_passes_with_repository_params(mirror: Path, tmp_path: Path) -> None:
    params = ROOT / "params.yaml"
    data = load_params(params).data
    cfg = load_params(params).validate
    gate = validate_corpus(data, cfg, mirror, tmp_path / "clean", tmp_path / "reports")

    assert gate.success
    expected = {"train": 28998, "val": 1014, "test_2016_flickr": 1000}
    for split, n in expected.items():
        de, en = (read_lines(tmp_path / "clean" / f"{split}.{lang}") for lang in ("de", "en"))
        assert len(de) == len(en) == n, split
    assert sorted(p.name for p in (tmp_path / "clean").iterdir()) == sorted(
        f"{s}.{lang}" for s in expected for lang in ("de", "en"))

    # exactly the two extreme-ratio train rows are gone, everything else is kept in order
    raw_de, raw_en = read_lines(mirror / "train.de.gz"), read_lines(mirror / "train.en.gz")
    bad = {i for i, (a, b) in enumerate(zip(raw_de, raw_en)) if ratio(a, b) > cfg.max_length_ratio}
    assert len(bad) == 2
    assert read_lines(tmp_path / "clean" / "train.de") == [s for i, s in enumerate(raw_de) if i not in bad]
    assert read_lines(tmp_path / "clean" / "train.en") == [s for i, s in enumerate(raw_en) if i not in bad]
    # val and test are byte-for-byte the published text
    assert read_lines(tmp_path / "clean" / "val.de") == read_lines(mirror / "val.de.gz")

    body = report(tmp_path)
    assert body["success"] is True and body["stage"] == "raw"
    assert all(c["success"] for c in body["checks"]) and body["checks"]
    stats = body["stats"]
    assert stats["corpus"] == "multi30k"
    assert stats["train"]["pairs"] == 29000 and stats["train"]["pairs_kept"] == 28998
    assert stats["train"]["row_problems"]["length ratio over 3"] == 2
    assert stats["train"]["rows_with_problems"] == 2 and stats["train"]["filtered"] is True
    assert stats["train"]["duplicate_pairs"] == 3
    assert stats["val"]["pairs_kept"] == 1014 and stats["val"]["filtered"] is False
    assert stats["test_2016_flickr"]["pairs_kept"] == 1000
    md = (tmp_path / "reports" / "raw.md").read_text(encoding="utf-8")
    assert md.startswith("# Gate `raw`: PASSED") and "## Statistics" in md


def test_tiny_corpus_passes_and_replaces_previous_output(tiny_corpus: dict, tmp_path: Path) -> None:
    raw = tmp_path / "src_corpus"
    stale = with_sentinel(tmp_path)
    gate = run_validate(tmp_path, tiny_corpus, raw_dir=raw)
    assert gate.success
    assert not stale.exists()  # the whole directory was replaced
    assert sorted(p.name for p in (tmp_path / "clean").iterdir()) == sorted(
        f"{s}.{lang}" for s in ("train", "val", "test") for lang in ("de", "en"))
    de, en = synthetic_pairs(40, seed=2)
    assert read_lines(tmp_path / "clean" / "val.de") == de
    assert read_lines(tmp_path / "clean" / "val.en") == en


# --- corpus-level failures: nothing is written -------------------------------------------------------------------


def test_misaligned_files_fail_naming_both_files_and_counts(tmp_path: Path) -> None:
    de, en = synthetic_pairs(300, seed=1)
    corpus = write_corpus(tmp_path / "raw", {"train": (de, en[:-1]), "val": synthetic_pairs(40, seed=2)})
    sentinel = with_sentinel(tmp_path)

    with pytest.raises(GateError) as err:
        run_validate(tmp_path, corpus)
    msg = str(err.value)
    assert "train.de.gz: 300 lines" in msg and "train.en.gz: 299 lines" in msg
    assert "aligned" in msg and "not replaced" in msg
    assert_untouched(tmp_path, sentinel)

    body = report(tmp_path)
    assert body["success"] is False
    failed = [c for c in body["checks"] if not c["success"]]
    assert [c["name"] for c in failed] == ["train: aligned"]
    assert "FAILED" in (tmp_path / "reports" / "raw.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_invalid_utf8_names_file_and_line(tmp_path: Path, gz: bool) -> None:
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(40, seed=2)},
                          gz=gz)
    name = "val.en" + (".gz" if gz else "")
    lines = [s.encode("utf-8") for s in synthetic_pairs(40, seed=2)[1]]
    lines[6] = b"A caf\xe9 in Latin-1."  # line 7: a lone 0xE9 byte is not UTF-8
    data = b"".join(line + b"\n" for line in lines)
    (tmp_path / "raw" / name).write_bytes(gzip.compress(data) if gz else data)
    sentinel = with_sentinel(tmp_path)

    with pytest.raises(GateError) as err:
        run_validate(tmp_path, corpus)
    msg = str(err.value)
    assert f"{name}:7: invalid UTF-8" in msg
    assert "0xe9" in msg
    assert_untouched(tmp_path, sentinel)
    assert report(tmp_path)["success"] is False


def test_empty_files_fail(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": ([], [])})
    assert (tmp_path / "raw" / "val.de.gz").stat().st_size > 0  # a valid gzip of nothing
    (tmp_path / "raw" / "val.en.gz").write_bytes(b"")  # and a plain empty file
    with pytest.raises(GateError) as err:
        run_validate(tmp_path, corpus)
    assert "val: pairs: 0" in str(err.value)
    body = report(tmp_path)
    assert body["success"] is False and body["stats"]["val"]["pairs"] == 0
    assert not (tmp_path / "clean").exists()


def test_empty_train_fails(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "raw", {"train": ([], []), "val": synthetic_pairs(40, seed=2)})
    with pytest.raises(GateError, match="train: pairs: 0"):
        run_validate(tmp_path, corpus)
    assert not (tmp_path / "clean").exists()


def test_one_empty_side_is_misaligned(tmp_path: Path) -> None:
    de, _ = synthetic_pairs(40, seed=2)
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": (de, [])})
    with pytest.raises(GateError, match="val.de.gz: 40 lines, val.en.gz: 0 lines"):
        run_validate(tmp_path, corpus)


@pytest.mark.parametrize("keep", [2, 10, 0.5, -4], ids=["magic-only", "header-only", "half", "no-trailer"])
def test_truncated_gzip_fails_with_gzip_message(tmp_path: Path, keep) -> None:
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(40, seed=2)})
    path = tmp_path / "raw" / "train.de.gz"
    data = path.read_bytes()
    cut = int(len(data) * keep) if isinstance(keep, float) else keep
    path.write_bytes(data[:cut])
    sentinel = with_sentinel(tmp_path)
    with pytest.raises(GateError) as err:
        run_validate(tmp_path, corpus)
    msg = str(err.value)
    assert "train.de.gz" in msg and "gzip" in msg
    assert_untouched(tmp_path, sentinel)


def test_missing_file_fails(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(40, seed=2)})
    (tmp_path / "raw" / "val.de.gz").unlink()
    with pytest.raises(GateError, match="val.de.gz: file not found"):
        run_validate(tmp_path, corpus)


def test_too_few_train_pairs_fails(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(99, seed=1), "val": synthetic_pairs(40, seed=2)})
    with pytest.raises(GateError, match="train: pairs: 99"):
        run_validate(tmp_path, corpus)


# --- duplicates ---------------------------------------------------------------------------------------------------


def test_duplicate_rate_above_limit_fails(tmp_path: Path) -> None:
    de, en = synthetic_pairs(300, seed=1)
    corpus = write_corpus(tmp_path / "raw", {"train": (de + de[:20], en + en[:20]), "val": synthetic_pairs(40, seed=2)})
    sentinel = with_sentinel(tmp_path)
    with pytest.raises(GateError, match="train: unique pairs") as err:
        run_validate(tmp_path, corpus, ValidateConfig(min_pairs=10, min_train_pairs=100, max_duplicate_rate=0.05))
    assert "rows with problems" not in str(err.value)  # duplicates are corpus-level, not row-level
    assert_untouched(tmp_path, sentinel)
    body = report(tmp_path)
    assert body["stats"]["train"]["duplicate_pairs"] == 20
    assert [c["name"] for c in body["checks"] if not c["success"]] == ["train: unique pairs"]


def test_duplicates_below_limit_pass_and_are_kept(tmp_path: Path) -> None:
    de, en = synthetic_pairs(300, seed=1)
    corpus = write_corpus(tmp_path / "raw", {"train": (de + de[:5], en + en[:5]), "val": synthetic_pairs(40, seed=2)})
    run_validate(tmp_path, corpus, ValidateConfig(min_pairs=10, min_train_pairs=100, max_duplicate_rate=0.05))
    assert report(tmp_path)["stats"]["train"]["duplicate_pairs"] == 5
    assert len(read_lines(tmp_path / "clean" / "train.de")) == 305


def test_duplicates_are_only_checked_in_train(tmp_path: Path) -> None:
    de, en = synthetic_pairs(40, seed=2)
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": (de + de, en + en)})
    gate = run_validate(tmp_path, corpus, ValidateConfig(min_pairs=10, min_train_pairs=100, max_duplicate_rate=0.0))
    assert gate.success and gate.stats["val"]["duplicate_pairs"] == 40


def test_all_failures_are_reported_together(tmp_path: Path) -> None:
    de, en = synthetic_pairs(300, seed=1)
    vde, ven = synthetic_pairs(40, seed=2)
    corpus = write_corpus(tmp_path / "raw", {"train": (de + de[:30], en + en[:30]), "val": (vde, ven[:-1])})
    with pytest.raises(GateError) as err:
        run_validate(tmp_path, corpus)
    assert "train: unique pairs" in str(err.value) and "val: aligned" in str(err.value)


# --- the CLI ------------------------------------------------------------------------------------------------------


def misaligned_corpus(tmp_path: Path) -> dict:
    de, en = synthetic_pairs(300, seed=1)
    return write_corpus(tmp_path / "raw", {"train": (de, en[:-1]), "val": synthetic_pairs(40, seed=2)})


def test_cli_misaligned_exits_1_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    params = make_params(tmp_path, misaligned_corpus(tmp_path))
    rc = main(["validate", "--params", str(params), "--raw", str(tmp_path / "raw"), "--out", str(tmp_path / "clean"),
               "--reports", str(tmp_path / "reports")])
    assert rc == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n")
    assert err.startswith("nmt validate: error: raw gate failed: train: aligned")
    assert "train.de.gz: 300 lines, train.en.gz: 299 lines" in err
    assert "Traceback" not in err
    assert not (tmp_path / "clean").exists()
    assert report(tmp_path)["success"] is False


def test_cli_success_exits_0(tmp_path: Path, tiny_corpus: dict) -> None:
    params = make_params(tmp_path, tiny_corpus)
    rc = main(["validate", "--params", str(params), "--raw", str(tmp_path / "src_corpus"),
               "--out", str(tmp_path / "clean"), "--reports", str(tmp_path / "reports")])
    assert rc == 0
    assert len(read_lines(tmp_path / "clean" / "train.en")) == 300
    assert report(tmp_path)["success"] is True


def test_cli_subprocess_stderr_has_no_traceback(tmp_path: Path) -> None:
    """The real process: logging goes to stderr too, but a failed gate is still one error line."""
    params = make_params(tmp_path, misaligned_corpus(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "nmt.data.validate", "--params", str(params), "--raw", str(tmp_path / "raw"),
         "--out", str(tmp_path / "clean"), "--reports", str(tmp_path / "reports")],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    errors = [line for line in lines if "error" in line.lower()]
    assert len(errors) == 1 and errors[0] == lines[-1]  # the error is the one last line
    assert errors[0].startswith("nmt validate: error: raw gate failed: train: aligned")
    assert "train.en.gz: 299 lines" in errors[0]
