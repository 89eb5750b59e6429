"""Stages SIGKILLed at named points of their write windows (nmt/files/killpoints.py), through DVC, in a
scratch copy of the project with the smoke configuration.

For each point: the killed `dvc repro` fails; the stage's previous outputs and dvc.lock are as they
were (a train stage's checkpoints and metric series are its resume state, written as it goes); no
process of the run is left (killed: hidden temporaries may stay); the re-run passes, leaves no
temporary behind, and ends with the outputs of the uninterrupted run that built the project.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
import yaml

from support.kills import files, killed_leaves_outputs, leftovers
from support.scratch import build_project, commit_project, copy_project, project_env
from support.scratch import dvc as _dvc

pytestmark = [pytest.mark.slow, pytest.mark.fault]
POINTS = [("shard-done", "tokenize"), ("shard-done", "vocab"), ("shard-done", "binarize"),  # their pools running
          ("train-update:7", "train"), ("checkpoint-saved:2", "train"), ("model-staged", "train"),
          ("evaluate-plots", "evaluate"), ("export-graphs", "export")]
VOLATILE = ("dvc.lock", "reports/validation/", "reports/train/curves.png", "reports/index.html",
            "models/onnx/model.json", "reports/export.json")  # durations, dates, the graphs' digests and sizes


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> tuple[Path, dict]:
    """The smoke project through export; checkpoints every 5 updates, so a kill has one to resume from."""
    env = project_env(mirror)
    project = build_project(tmp_path_factory.mktemp("kill"))
    params = yaml.safe_load((project / "params.yaml").read_text())
    params["train"]["save_every"] = 5
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    commit_project(project, env)
    result = _dvc(project, env, "repro", "export")
    assert result.returncode == 0, result.stderr + result.stdout
    return project, env


def prepared(built: tuple[Path, dict], stage: str, where: Path) -> Path:
    """A copy of the built project ready to run `stage` again (train: from scratch, no checkpoints)."""
    project = copy_project(built[0], where)
    if stage == "tokenize":  # no cache: the pool tokenizes, as on a first run
        shutil.rmtree(project / ".cache" / "tokenize")
    if stage == "train":
        shutil.rmtree(project / "models" / "checkpoints")
        (project / "models" / "checkpoints").mkdir()
    return project


def same_outputs(stage: str, got: Path, want: Path) -> None:
    if stage == "train":
        a, b = (torch.load(p / "models/model.pt", weights_only=True)["model"] for p in (got, want))
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        return
    mine, theirs = files(got), files(want)  # ONNX graphs are not byte for byte the same from one export to the next:
    keys = {k for k in (*mine, *theirs) if not k.startswith(VOLATILE) and not k.endswith(".onnx")}  # their parity,
    # identity with torch and scores (reports/export.json but the graphs' size) are compared instead
    if stage == "export":
        a, b = (json.loads((p / "reports/export.json").read_text()) for p in (got, want))
        assert a.pop("size_mb") and b.pop("size_mb") and a == b
    assert {k: mine.get(k) for k in keys} == {k: theirs.get(k) for k in keys}


@pytest.mark.parametrize(("point", "stage"), POINTS, ids=[f"{stage}@{point}" for point, stage in POINTS])
def test_a_stage_killed_mid_write_leaves_its_outputs_and_the_rerun_ends_as_an_uninterrupted_run(
        point: str, stage: str, built: tuple[Path, dict], tmp_path: Path) -> None:
    env = built[1]
    project = prepared(built, stage, tmp_path / "p")
    killed_leaves_outputs(project, env, stage, point)
    again = _dvc(project, env, "repro", "--force", "--single-item", stage)
    assert again.returncode == 0, again.stderr + again.stdout
    assert leftovers(project) == []
    same_outputs(stage, project, built[0])  # the built project ran each stage from the same inputs, unbroken
