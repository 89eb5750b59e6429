"""docs/lifecycle.md's records from real runs: the promotion record and the drift
report, rendered by the publish stage from what the flows write (tools/publish/lifecycle.py), and
"not run yet" with the command that writes them until they exist."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from nmt.config.drift import DriftConfig
from nmt.drift.report import drift_report as make_report
from nmt.drift.report import markdown
from nmt.translate.traffic import Record, Snapshot, aggregate
from support.scratch import isolate_prefect
from tools.publish.lifecycle import drift_report, promotion_record
from tools.publish.sources import Sources

isolate_prefect()  # before prefect is imported

from flows.drift import write_report
from flows.evidence import decide_by_evidence
from flows.promotion import write_record

REFS = [f"a small dog runs number {i} across the green grass" for i in range(30)]


def test_before_a_run_the_blocks_name_the_command_that_writes_their_source(tmp_path: Path) -> None:
    sources = Sources(tmp_path, tmp_path)
    assert promotion_record(sources).startswith("Not measured on this machine yet: `python -m flows.registry promote")
    assert "Source: `reports/promotion/nmt-de-en.json` (not written yet)." in promotion_record(sources)
    assert "`python -m flows.drift --stats-dir DIR` writes `reports/drift/latest.json`" in drift_report(sources)


def test_a_promotion_record_renders_each_set_with_its_interval_and_the_speed_ratio(tmp_path: Path) -> None:
    worse = [r.replace("green", "red").replace("dog", "cat") for r in REFS]
    decision = decide_by_evidence({"test_2016_flickr": (REFS, REFS, worse)}, 10.0, 9.5, resamples=200)
    record = {"artifact": "nmt-de-en", "artifacts": ["nmt-de-en", "nmt-de-en-onnx"], "version": "v0.0.2",
              "commit": "0123456789abcdef", "stage": "prod", "promoted": decision.promote, "reason": decision.reason,
              "rule": "evidence", "champion_version": "v0.0.1", "champion_commit": "fedcba9876543210",
              "scores": {"champion": None, "challenger": {}}, "config": {}, "evidence": asdict(decision)}
    write_record(tmp_path, "nmt-de-en", record, "# page\n")  # as flows/registry.py writes it
    page = promotion_record(Sources(tmp_path / "reports", tmp_path))
    assert page.startswith("`nmt-de-en` v0.0.2 (commit `01234567`) against the champion v0.0.1 at `prod`: "
                           "**not promoted** (evidence rule). Reason: significantly worse on test_2016_flickr")
    (row,) = [line for line in page.splitlines() if line.startswith("| test_2016_flickr |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "30" and cells[2] == "100.00" and cells[-1] == "significantly worse"
    assert cells[4].startswith("-") and "[" in cells[4]  # the difference and its 95% interval
    assert "ratio 0.950 (at least 0.9 promoted)" in page and page.endswith(
        "Source: `reports/promotion/nmt-de-en.json` (flows/registry.py; its Markdown beside it).")


def test_a_drift_report_renders_each_aggregate_with_its_psi_and_verdict(tmp_path: Path) -> None:
    profile = aggregate([Record(7, 0, 0.8, "de")] * 400, "de")
    traffic = Snapshot(0.0, 86400.0, {"de-en": aggregate([Record(7, 0, 0.8, "en")] * 300, "de")}, parts=24)
    report = make_report({"de-en": profile}, traffic, DriftConfig(), 0.0, 86400.0)
    write_report(tmp_path, report, markdown(report))  # as flows/drift.py writes it
    page = drift_report(Sources(tmp_path / "reports", tmp_path))
    assert page.startswith("Window 1970-01-01T00:00:00+00:00 to 1970-01-02T00:00:00+00:00 (24 snapshots): **drift**.")
    assert "| de-en | pieces | 300 | 0.000 | 0.2 | no drift | `<=8` 100% -> 100% |" in page
    (language,) = [line for line in page.splitlines() if line.startswith("| de-en | language |")]
    assert "| **drift** | `de` 100% -> 0% |" in language
    assert page.endswith("Source: `reports/drift/latest.json` (flows/drift.py; its Markdown beside it).")
