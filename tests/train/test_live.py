"""Training metrics without DVCLive (a plain PyTorch image on a GPU machine): the same files as DVCLive's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nmt.train.live import MetricFiles, log_live, open_live

RECORDS = [{"step": 1, "train_loss": 2.5, "lr": 1e-4}, {"step": 2, "train_loss": 2.25, "lr": 2e-4},
           {"step": 2, "epoch": 0, "val_loss": 3.0}]


def files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def log_all(live, records) -> None:
    for record in records:
        log_live(live, record)
    live.end()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """A git repository with a commit (DVCLive reads the revision), as the working directory."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"],
                   cwd=tmp_path, check=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_without_dvclive_the_metric_files_are_dvclives(repo: Path, monkeypatch) -> None:
    pytest.importorskip("dvclive")
    log_all(open_live(repo / "dvclive", resume=False), RECORDS)
    monkeypatch.setitem(sys.modules, "dvclive", None)  # `import dvclive` now raises ImportError
    live = open_live(repo / "plain", resume=False)
    assert isinstance(live, MetricFiles)
    log_all(live, RECORDS)
    theirs, ours = files(repo / "dvclive"), files(repo / "plain")
    assert set(ours) == {"metrics.json", "plots/metrics/train_loss.tsv", "plots/metrics/lr.tsv",
                         "plots/metrics/epoch.tsv", "plots/metrics/val_loss.tsv"}
    assert {k: theirs[k] for k in ours} == ours


def test_a_resumed_run_appends_and_a_new_one_starts_over(tmp_path: Path) -> None:
    log_all(MetricFiles(tmp_path, resume=False), RECORDS[:1])
    log_all(MetricFiles(tmp_path, resume=True), RECORDS[1:2])
    assert (tmp_path / "plots/metrics/train_loss.tsv").read_text() == "step\ttrain_loss\n1\t2.5\n2\t2.25\n"
    log_all(MetricFiles(tmp_path, resume=False), RECORDS[1:2])
    assert (tmp_path / "plots/metrics/train_loss.tsv").read_text() == "step\ttrain_loss\n2\t2.25\n"


@pytest.mark.fault
@pytest.mark.parametrize("with_dvclive", [True, False])
def test_a_resume_drops_the_rows_logged_after_the_last_checkpoint(repo: Path, monkeypatch, with_dvclive: bool) -> None:
    """Killed at update 3 after its checkpoint at update 2: the resumed run logs update 3 again, once."""
    if with_dvclive:
        pytest.importorskip("dvclive")
    else:
        monkeypatch.setitem(sys.modules, "dvclive", None)
    steps = [{"step": s, "train_loss": 3.0 - s / 10} for s in (1, 2, 3)]
    first = open_live(repo / "live", resume=False)
    for record in steps:
        log_live(first, record)  # no end(): killed
    with (repo / "live" / "plots" / "metrics" / "train_loss.tsv").open("a") as fh:
        fh.write("4\t2.")  # a row torn by the kill
    log_all(open_live(repo / "live", resume=True, step=2), steps[2:])
    rows = (repo / "live" / "plots" / "metrics" / "train_loss.tsv").read_text().splitlines()
    col = rows[0].split("\t").index("step")
    assert [int(r.split("\t")[col]) for r in rows[1:]] == [1, 2, 3]
