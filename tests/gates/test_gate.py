"""Gates: reports written and read back in one format, and deterministic for the same data."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from nmt.errors import GateError
from nmt.gates.gate import Gate
from nmt.gates.reports import read_gate_report, read_gate_reports


def _gate(tmp_path: Path, rows: int, name: str = "demo") -> Gate:
    import great_expectations as gx

    gate = Gate(name)
    gate.expect("train", pd.DataFrame({"n": range(rows)}), [
        ("rows", gx.expectations.ExpectTableRowCountToBeBetween(min_value=3)),
        ("values", gx.expectations.ExpectColumnValuesToBeBetween(column="n", min_value=0, max_value=100)),
    ])
    gate.check("plain check", True, "anything", "fine")
    return gate


def test_same_data_gives_byte_identical_reports(tmp_path: Path) -> None:
    """No Great Expectations uuids or timestamps in the report: a forced re-run of a stage on
    unchanged data leaves its DVC-tracked report, and so dvc.lock, unchanged."""
    _gate(tmp_path, 5).finish(tmp_path / "a")
    _gate(tmp_path, 5).finish(tmp_path / "b")
    first, second = (tmp_path / "a" / "demo.json").read_text(), (tmp_path / "b" / "demo.json").read_text()
    assert first == second
    assert '"id"' not in first and "validation_time" not in first and "run_time" not in first


def test_report_reads_back_with_its_failures_and_markdown(tmp_path: Path) -> None:
    with pytest.raises(GateError, match="demo gate failed: train: rows"):
        _gate(tmp_path, 2).finish(tmp_path)
    report = read_gate_report(tmp_path / "demo.json")
    assert report is not None and report.stage == "demo" and not report.success and len(report.checks) == 3
    assert len(report.failed) == 1 and report.failed[0].startswith("train: rows: 2 (expected ")
    assert report.markdown() == (tmp_path / "demo.md").read_text()
    (tmp_path / "demo.md").unlink()  # without its twin, the same table is rendered from the JSON
    assert report.markdown().startswith("# Gate `demo`: FAILED") and "| train: rows | **FAILED** |" in report.markdown()


def test_other_json_is_not_a_gate_report(tmp_path: Path) -> None:
    (tmp_path / "metrics.json").write_text(json.dumps({"test": {"sacrebleu": 38.0}}))
    (tmp_path / "broken.json").write_text("{")
    _gate(tmp_path, 5).finish(tmp_path)
    assert [r.stage for r in read_gate_reports(tmp_path)] == ["demo"]
