"""The schedule sweep's own rules (bench/finetune_schedule.py): its --config syntax and its choice; the
sweep end to end through the pipeline's commands: tests/test_pipeline_finetune.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.finetune_schedule import choose, dev_sets, parse_config


def test_a_config_is_section_key_value_pairs_read_as_yaml() -> None:
    assert parse_config("finetune.lr=5e-5 finetune.replay=0.3 train.patience=20") == {
        "finetune.lr": 5e-5, "finetune.replay": 0.3, "train.patience": 20}
    assert parse_config("train.device=cpu") == {"train.device": "cpu"}
    for bad in ("lr=1e-4", "finetune.lr", ""):
        with pytest.raises(SystemExit):
            parse_config(bad)


def row(domain: float, general: float) -> dict:
    return {"scores": {"val": domain, "news": general}}


def test_the_best_domain_score_among_those_that_keep_the_general_set() -> None:
    parent = {"val": 40.0, "news": 20.0}
    rows = [row(43.0, 18.5), row(42.0, 19.2), row(41.5, 19.9), row(42.0, 19.0)]
    assert choose(parent, rows, 1.0) == 1  # 43.0 loses 1.5 on news; 42.0 ties: the earlier
    assert choose(parent, rows, 2.0) == 0


def test_when_none_keeps_the_general_set_the_one_that_loses_least() -> None:
    parent = {"val": 40.0, "news": 20.0}
    assert choose(parent, [row(44.0, 15.0), row(41.0, 17.0), row(42.0, 17.0)], 1.0) == 1


def test_dev_sets_need_both_sides_and_equal_lengths(tmp_path: Path) -> None:
    (tmp_path / "a.de").write_text("eins\nzwei\n")
    (tmp_path / "a.en").write_text("one\ntwo\n")
    assert dev_sets([f"a={tmp_path / 'a'}"], tmp_path / "val", None, "de", "en") == {
        "a": (["eins", "zwei"], ["one", "two"])}
    (tmp_path / "a.en").write_text("one\n")
    with pytest.raises(SystemExit, match="2 source lines but 1 reference"):
        dev_sets([f"a={tmp_path / 'a'}"], tmp_path / "val", None, "de", "en")
    with pytest.raises(SystemExit, match="NMT_DATA_MIRROR"):
        dev_sets([], tmp_path / "val", None, "de", "en")
    with pytest.raises(SystemExit, match="b.de"):
        dev_sets([f"b={tmp_path / 'b'}"], tmp_path / "val", None, "de", "en")
