"""The sweep's table (flows/experiments.py) and the committed reports/experiments.md.

The table is built from `dvc exp show --json`, with DVC run by this interpreter (the venv's
bin need not be on PATH); the committed report must hold the sweep and name the defaults it
chose, and those must be what params.yaml says."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from flows import experiments as fe
from flows.experiments import experiments, replace_block, shared_changes, table_markdown
from support.corpus import ROOT
from support.scratch import build_tiny_project, dvc, project_env

REPORT = ROOT / "reports" / "experiments.md"


def _rev(name: str, params: dict, bleu: float | None) -> dict:
    metrics = {"reports/metrics.json": {"data": {"val": {"sacrebleu": bleu, "chrf": 50.0, "nltk_bleu": bleu,
                                                          "unk_rate": 0.0, "length_ratio": 0.97}}}} if bleu else {}
    metrics["reports/train/live/metrics.json"] = {"data": {"step": 700, "epoch": 3, "tokens_per_s": 1500.0,
                                                           "val_loss": 2.1}}
    return {"rev": "f" * 40, "name": name, "data": {"params": {"params.yaml": {"data": params}}, "metrics": metrics}}


SHOW = [{"rev": "a" * 40, "data": {"params": {"params.yaml": {"data": {
            "vocab": {"kind": "bpe", "bpe_merges": 8000}, "train": {"epochs": 10, "lr_factor": 0.7}}}}},
         "experiments": [{"revs": [
             _rev("p-word", {"vocab": {"kind": "word", "bpe_merges": 8000},
                             "train": {"epochs": 3, "lr_factor": 0.7}}, 20.5),
             _rev("p-4k", {"vocab": {"kind": "bpe", "bpe_merges": 4000},
                           "train": {"epochs": 3, "lr_factor": 0.7}}, 21.5),
             _rev("p-lr", {"vocab": {"kind": "bpe", "bpe_merges": 8000},
                           "train": {"epochs": 3, "lr_factor": 1.0}}, None),
             _rev("other", {"vocab": {"kind": "bpe", "bpe_merges": 8000},
                            "train": {"epochs": 10, "lr_factor": 0.7}}, 30.0),
         ]}]}]


def test_rows_hold_the_changes_against_the_baseline_and_the_shared_settings_once() -> None:
    rows = experiments(SHOW, "val", "p-*")
    assert [r.name for r in rows] == ["p-word", "p-4k", "p-lr"]
    assert rows[0].changes == {"vocab.kind": "word", "train.epochs": 3}
    assert shared_changes(rows) == {"train.epochs": 3}
    md = table_markdown(rows, "val")
    assert "Every run here: `train.epochs=3`." in md
    body = [line for line in md.splitlines() if line.startswith("| p-")]
    assert [line.split(" | ")[0] for line in body] == ["| p-4k", "| p-word", "| p-lr"]  # best first, unscored last
    assert body[0].split(" | ")[1] == "`vocab.bpe_merges=4000`" and "21.50" in body[0]
    assert body[2].split(" | ")[2] == "-"  # a failed or unfinished run has no score


def test_replace_block_keeps_the_prose_around_the_table() -> None:
    text = "# Sweep\n\nintro\n\n<!-- experiments:a -->\nold\n<!-- /experiments:a -->\n\nconclusion\n"
    new = replace_block(text, "a", "new\n")
    assert new == "# Sweep\n\nintro\n\n<!-- experiments:a -->\nnew\n<!-- /experiments:a -->\n\nconclusion\n"
    assert replace_block("", "b", "t\n") == "<!-- experiments:b -->\nt\n<!-- /experiments:b -->\n"


def _param(params: dict, key: str):
    for part in key.split("."):
        params = params[part]
    return params


def test_committed_sweep_table_is_present_and_its_chosen_defaults_are_params_yaml() -> None:
    text = REPORT.read_text(encoding="utf-8")
    table = text[text.index("<!-- experiments:proxy -->"):text.index("<!-- /experiments:proxy -->")]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| experiment")]
    assert len(rows) >= 8 and sum(bool(re.search(r"\| \d+\.\d\d \|", r)) for r in rows) >= 8
    chosen = text[text.index("## Defaults chosen"):]
    chosen = chosen[: chosen.find("\n## ", 1)] if "\n## " in chosen[1:] else chosen
    pairs = re.findall(r"`([a-z_]+\.[a-z_.]+)=([^`]+)`", chosen)
    assert len(pairs) >= 3
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    for key, text_value in pairs:
        try:
            value = json.loads(text_value)  # numbers, true/false, null, lists
        except ValueError:
            value = text_value  # a bare word such as bpe
        assert _param(params, key) == value, f"{key}: params.yaml has {_param(params, key)!r}, the report {value!r}"


def test_the_table_is_made_without_the_venv_bin_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`.venv/bin/python -m flows.experiments` with the venv not activated died with
    FileNotFoundError: 'dvc'. Here PATH holds git and nothing else."""
    project = build_tiny_project(tmp_path / "tiny", project_env(), tmp_path / "remote")
    ran = dvc(project, project_env(), "exp", "run", "-n", "fewer", "-S", "prepare.lines=4")
    assert ran.returncode == 0, ran.stderr
    only_git = tmp_path / "bin"
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git"))
    monkeypatch.setenv("PATH", str(only_git))
    monkeypatch.setattr(fe, "ROOT", project)
    out = tmp_path / "experiments.md"
    assert fe.main(["--id", "t", "--split", "test", "--revs", "1", "--out", str(out)]) == 0
    table = out.read_text()
    assert "Every run here: `prepare.lines=4`." in table  # the params DVC reported
    assert "| fewer | (baseline) | 2.00 |" in table  # and the metric (the tiny score: 4 lines / 2)
