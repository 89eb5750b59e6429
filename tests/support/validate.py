"""Helpers for the validate tests: the gate run on a small corpus, its JSON report, and a previous
good output directory that a failed gate must leave untouched."""

from __future__ import annotations

import json
from pathlib import Path

from nmt.config.data import ValidateConfig
from nmt.data.validate import validate_corpus
from support.corpus import data_config

SMALL = ValidateConfig(min_pairs=10, min_train_pairs=100)  # the repository gate, sized for tiny corpora


def run_validate(tmp_path: Path, corpus: dict, cfg: ValidateConfig = SMALL, raw_dir: Path | None = None):
    """validate_corpus on `corpus`, whose files write_corpus put in `raw_dir` (default: tmp_path/raw)."""
    return validate_corpus(data_config(corpus), cfg, raw_dir or tmp_path / "raw", tmp_path / "clean",
                           tmp_path / "reports")


def report(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "reports" / "raw.json").read_text(encoding="utf-8"))


def with_sentinel(tmp_path: Path) -> Path:
    """A previous good output directory holding one file, to show a failed gate leaves it alone."""
    (tmp_path / "clean").mkdir()
    sentinel = tmp_path / "clean" / "SENTINEL"
    sentinel.write_text("previous good output\n")
    return sentinel


def assert_untouched(tmp_path: Path, sentinel: Path) -> None:
    assert sentinel.read_text() == "previous good output\n"
    assert sorted(p.name for p in (tmp_path / "clean").iterdir()) == ["SENTINEL"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".clean.")]  # no leftover temp dirs
