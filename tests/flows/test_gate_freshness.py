"""Which gate reports a run counts as its own (flows/artifacts.py: `written_reports`, `run_gates`).

From what the run did, never from file times: a stage DVC did not run wrote nothing, one that
ran and passed wrote its gate, one that failed wrote what it changed (content digests before
and after). Each case pits file times against the truth: a report copied in or written under
a clock that runs ahead, a coarse or skewed mtime, a touched file with the same bytes. The
stage task's body runs with `dvc repro` replaced, no Prefect server needed.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from support.scratch import isolate_prefect

isolate_prefect()  # before prefect is imported

from flows import artifacts as fa
from flows import dvc_project as dp
from flows import pipeline as pl

RAW = "reports/validation/raw.json"
VALIDATE = dp.StageSpec("validate", ("data/validated", "reports/validation/raw.md", RAW), (RAW,))
RAN = ["Running stage 'validate':", "> python -m nmt.data.validate"]  # what `dvc repro` printed
UP_TO_DATE = ["Stage 'validate' didn't change, skipping"]
HOUR = 3600.0


def write_raw_gate(project: Path, success: bool, mtime: float | None = None) -> None:
    path = project / RAW
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"stage": "raw", "success": success, "checks": [{"name": "pairs", "success": success}]}))
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def run_validate_task(project: Path, monkeypatch: pytest.MonkeyPatch,
                      dvc_repro: Callable[[], tuple[int, list[str]]]) -> tuple[object, list[fa.GateSeen]]:
    """The `validate` task's body with `dvc repro` replaced by `dvc_repro`: (its result or error, gates published)."""
    published: list[fa.GateSeen] = []
    monkeypatch.setattr(pl, "get_run_logger", lambda: logging.getLogger("test"))
    monkeypatch.setattr(pl, "run_dvc", lambda project, args, logger: dvc_repro())
    monkeypatch.setattr(pl, "publish_gate", published.append)
    try:
        return pl.run_stage.fn(project, VALIDATE), published
    except pl.StageFailed as exc:
        return exc, published


def test_an_up_to_date_stage_s_gate_is_the_last_run_s_whatever_its_mtime(tmp_path: Path, monkeypatch) -> None:
    """A report copied in, or written on a machine whose clock runs ahead, has a future mtime."""
    write_raw_gate(tmp_path, success=True, mtime=time.time() + HOUR)
    result, published = run_validate_task(tmp_path, monkeypatch, lambda: (0, UP_TO_DATE))
    assert not result.ran and [g.fresh for g in result.gates] == [False]
    assert [g.fresh for g in published] == [False]  # published, as the last run's


def test_a_failed_gate_s_report_is_this_run_s_even_with_an_old_mtime(tmp_path: Path, monkeypatch) -> None:
    """Coarse or skewed file times: the report the failed gate wrote reads as older than the run."""
    write_raw_gate(tmp_path, success=True)

    def gate_fails() -> tuple[int, list[str]]:
        write_raw_gate(tmp_path, success=False, mtime=time.time() - HOUR)
        return 1, [*RAN, "nmt validate: error: raw gate failed: pairs"]

    error, published = run_validate_task(tmp_path, monkeypatch, gate_fails)
    assert "stage 'validate' failed: raw gate failed: pairs" in str(error)
    assert [(g.report.success, g.fresh) for g in published] == [(False, True)]  # the failure, as this run's


def test_a_stage_that_failed_before_its_gate_publishes_no_stale_report(tmp_path: Path, monkeypatch) -> None:
    """The last run's PASSED report, untouched in content but with a new mtime, is not this run's."""
    write_raw_gate(tmp_path, success=True, mtime=time.time() - HOUR)

    def crashes() -> tuple[int, list[str]]:
        os.utime(tmp_path / RAW)  # touched (copied over, checked out), same bytes
        return 1, [*RAN, "nmt validate: error: data/raw/train.de.gz: not found"]

    error, published = run_validate_task(tmp_path, monkeypatch, crashes)
    assert "data/raw/train.de.gz: not found" in str(error)
    assert published == []


def test_a_stage_that_ran_and_passed_wrote_its_gate_even_if_unchanged(tmp_path: Path, monkeypatch) -> None:
    """A deterministic gate re-run (a code edit) writes the same bytes: still this run's report."""
    write_raw_gate(tmp_path, success=True)

    def gate_passes_again() -> tuple[int, list[str]]:
        write_raw_gate(tmp_path, success=True)
        return 0, RAN

    result, _ = run_validate_task(tmp_path, monkeypatch, gate_passes_again)
    assert result.ran and [g.fresh for g in result.gates] == [True]


def test_the_run_s_gates_table_counts_a_failed_stage_s_report_only_if_the_run_changed_it(tmp_path: Path) -> None:
    """A failed stage has no result: the flow compares its reports with their digests at the start."""
    write_raw_gate(tmp_path, success=True)
    report = fa.PipelineReport(project=str(tmp_path), digests={"validate": fa.report_digests(tmp_path, VALIDATE)})
    os.utime(tmp_path / RAW)  # touched, same bytes: the stage failed before its gate
    assert [g.fresh for g in fa.run_gates(tmp_path, VALIDATE, report)] == [False]
    write_raw_gate(tmp_path, success=False, mtime=time.time() - HOUR)  # the gate failed; the file time is off
    assert [(g.report.success, g.fresh) for g in fa.run_gates(tmp_path, VALIDATE, report)] == [(False, True)]
