"""A stage records the params it ran with, and an edit of params.yaml while it runs fails it (DVC
would record the edited values as built)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from nmt.command import run_reporting_errors, run_with_params
from nmt.config.data import VocabConfig
from nmt.errors import ConfigError
from support.corpus import repo_params

pytestmark = pytest.mark.fault


@dataclass(frozen=True)
class VocabOnly:
    vocab: VocabConfig


def write(path: Path, merges: int) -> None:
    params = repo_params()
    params["vocab"]["bpe_merges"] = merges
    path.write_text(yaml.safe_dump(params, sort_keys=False))


def test_the_values_a_stage_ran_with_are_logged_and_an_unchanged_file_passes(tmp_path: Path, caplog) -> None:
    params, seen = tmp_path / "params.yaml", []
    write(params, 4000)
    with caplog.at_level(logging.INFO):
        run_with_params(params, VocabOnly, lambda p: seen.append(p.vocab.bpe_merges))
    assert seen == [4000] and "running with vocab.kind='bpe'" in caplog.text and "vocab.bpe_merges=4000" in caplog.text


def test_an_edit_while_the_stage_runs_fails_it_naming_the_key(tmp_path: Path, capsys) -> None:
    params, seen = tmp_path / "params.yaml", []
    write(params, 4000)

    def stage(p: VocabOnly) -> None:
        seen.append(p.vocab.bpe_merges)
        write(params, 3000)  # six seconds into vocab, someone edits the file

    code = run_reporting_errors("vocab", lambda: run_with_params(params, VocabOnly, stage))
    err = capsys.readouterr().err
    assert code == 1 and seen == [4000]  # the stage itself ran with what it read
    assert "changed while the stage ran (vocab.bpe_merges: 4000 -> 3000)" in err and "re-run `dvc repro`" in err


def test_an_edit_that_breaks_the_file_fails_it_too(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    write(params, 4000)
    with pytest.raises(ConfigError, match="changed while the stage ran and no longer loads"):
        run_with_params(params, VocabOnly, lambda p: params.write_text("vocab: {kind: bpe}\n"))
