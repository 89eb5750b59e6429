"""The Prefect artifacts of a pipeline run: gate reports, the gates and metrics tables, a summary.

- A gate report is a JSON file a stage declares in `dvc.yaml` with `{"stage", "success",
  "checks"}` (`reports/validation/<gate>.json`); each stage task publishes one markdown
  artifact per gate report of its stage (`gate-raw`, ...).
- Every run publishes a `gates` table, a `metrics` table (every non-gate metrics file of
  `dvc.yaml`, BLEU included) and a `pipeline-summary` markdown, also when the run fails; a
  completed run also publishes its `dvc.lock` (`dvc-lock`), enough to `dvc pull` that model
  version.
- `StageResult` (what one stage task did) and `PipelineReport` (the flow's return value) are
  the records the summary is built from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from flows.dvc_project import StageSpec


@dataclass(frozen=True)
class GateSummary:
    """The result of one gate report (`reports/validation/<gate>.json`)."""

    gate: str
    stage: str
    report: str  # path of the JSON report, relative to the project
    success: bool
    checks: int
    failed: tuple[str, ...]  # "check: observed (expected ...)" of each failed check
    fresh: bool  # written by this run (False: the stage was up to date, report from its last run)


@dataclass(frozen=True)
class StageResult:
    """What one stage task did: ran (DVC re-ran it) or was up to date, and its gates."""

    stage: str
    ran: bool
    seconds: float
    gates: tuple[GateSummary, ...] = ()


@dataclass
class PipelineReport:
    """The flow's return value."""

    project: str
    stages: list[StageResult] = field(default_factory=list)
    overrides: dict[str, Any] = field(default_factory=dict)
    pushed: str | None = None  # DVC's push summary; None when push was off
    started: float | None = None  # time.time() at the start of the run: gate reports newer than this are its own

    @property
    def ran(self) -> list[str]:
        return [s.stage for s in self.stages if s.ran]


# --- gates and metrics ----------------------------------------------------------------------------


def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def _is_gate_report(data: Any) -> bool:
    return isinstance(data, Mapping) and {"stage", "success", "checks"} <= data.keys() and isinstance(data["checks"], list)


def gate_summaries(project: Path, spec: StageSpec, since: float | None = None) -> list[GateSummary]:
    """The gate reports among the stage's declared JSON files (`{"stage", "success", "checks"}`)."""
    gates = []
    for rel in spec.outputs:
        path = project / rel
        if path.suffix != ".json" or not path.is_file():
            continue
        try:
            data = _load(path)
        except (OSError, ValueError):
            continue
        if not _is_gate_report(data):
            continue
        failed = tuple(f"{c.get('name')}: {c.get('observed')} (expected {c.get('expected')})"
                       for c in data["checks"] if isinstance(c, Mapping) and not c.get("success"))
        fresh = since is not None and path.stat().st_mtime >= since - 1.0
        gates.append(GateSummary(str(data["stage"]), spec.name, rel, bool(data["success"]), len(data["checks"]),
                                 failed, fresh))
    return gates


def _artifact_key(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-") or "unnamed"


def gate_markdown(project: Path, gate: GateSummary) -> str:
    """The gate's markdown report (its sibling `.md`), else one built from the summary."""
    md = (project / gate.report).with_suffix(".md")
    if md.is_file():
        return md.read_text(encoding="utf-8")
    lines = [f"# Gate `{gate.gate}`: {'PASSED' if gate.success else 'FAILED'}", "", f"{gate.checks} checks."]
    lines += [f"- FAILED {f}" for f in gate.failed]
    return "\n".join(lines) + "\n"


def publish_gate(project: Path, gate: GateSummary) -> None:
    status = "PASSED" if gate.success else "FAILED"
    origin = "this run" if gate.fresh else "the last run (stage up to date)"
    create_markdown_artifact(gate_markdown(project, gate), key=f"gate-{_artifact_key(gate.gate)}",
                             description=f"Gate `{gate.gate}` of stage `{gate.stage}`: {status}; report from {origin}")


def _flatten(prefix: str, value: Any, out: list[tuple[str, Any]]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(value, (bool, int, float)) or (isinstance(value, str) and len(value) <= 200):
        out.append((prefix, value))


def metrics_rows(project: Path, specs: Sequence[StageSpec]) -> list[dict[str, Any]]:
    """Every scalar of every non-gate metrics file in dvc.yaml: [{stage, file, metric, value}]."""
    rows: list[dict[str, Any]] = []
    for spec in specs:
        for rel in spec.metrics:
            path = project / rel
            if path.suffix not in (".json", ".yaml", ".yml") or not path.is_file():
                continue
            try:
                data = _load(path)
            except (OSError, ValueError, yaml.YAMLError):
                continue
            if _is_gate_report(data):
                continue
            flat: list[tuple[str, Any]] = []
            _flatten("", data, flat)
            rows += [{"stage": spec.name, "file": rel, "metric": k, "value": v} for k, v in flat]
    return rows


def _is_headline(metric: str) -> bool:
    last = metric.rsplit(".", 1)[-1].lower()
    return "bleu" in last or "chrf" in last


def summary_markdown(report: PipelineReport, selected: Sequence[StageSpec], gates: Sequence[GateSummary],
                     metrics: Sequence[Mapping[str, Any]], error: str | None) -> str:
    done = {s.stage: s for s in report.stages}
    failed = next((s.name for s in selected if s.name not in done), None) if error else None
    lines = [f"# nmt pipeline: {'FAILED' if error else 'COMPLETED'}", "", f"Project: `{report.project}`", ""]
    if error:
        lines += [f"**Error:** {error}", ""]
    lines += ["| stage | result | seconds |", "| --- | --- | --- |"]
    for spec in selected:
        if (s := done.get(spec.name)) is not None:
            lines.append(f"| {spec.name} | {'ran' if s.ran else 'up to date'} | {s.seconds:.1f} |")
        else:
            lines.append(f"| {spec.name} | {'**failed**' if spec.name == failed else 'not run'} |  |")
    lines += ["", "## Gates", ""]
    lines += [f"- `{g.gate}` ({g.stage}): {'PASSED' if g.success else 'FAILED'}, {g.checks} checks"
              + ("" if g.fresh else ", up to date") + "".join(f"\n  - {f}" for f in g.failed) for g in gates]
    if not gates:
        lines.append("- none reported")
    headline = [m for m in metrics if _is_headline(str(m["metric"]))]
    lines += ["", "## BLEU / chrF", ""]
    lines += [f"- `{m['file']}` {m['metric']}: {m['value']}" for m in headline] or ["- none yet (no evaluate metrics)"]
    if report.overrides:
        lines += ["", "## Params overrides", ""] + [f"- `{k}` = `{v!r}`" for k, v in report.overrides.items()]
    lines += ["", f"DVC push: {report.pushed if report.pushed is not None else 'off' if not error else 'not reached'}"]
    return "\n".join(lines) + "\n"


def publish_run_artifacts(project: Path, all_specs: Sequence[StageSpec], selected: Sequence[StageSpec],
                          report: PipelineReport, error: str | None) -> None:
    """The run's `gates` table, `metrics` table and `pipeline-summary` markdown."""
    gates: list[GateSummary] = []
    by_stage = {s.stage: s for s in report.stages}
    for spec in all_specs:
        known = by_stage.get(spec.name)
        gates += list(known.gates) if known else gate_summaries(project, spec, since=report.started)
    gate_rows = [{"gate": g.gate, "stage": g.stage, "result": "PASSED" if g.success else "FAILED",
                  "checks": g.checks, "failed": "; ".join(g.failed), "from this run": g.fresh} for g in gates]
    if gate_rows:
        create_table_artifact(gate_rows, key="gates", description="Data-validation gates of the pipeline")
    metrics = metrics_rows(project, all_specs)
    if metrics:
        create_table_artifact(metrics, key="metrics",
                              description="Metrics files of dvc.yaml (BLEU, training) as they stand after this run")
    create_markdown_artifact(summary_markdown(report, selected, gates, metrics, error), key="pipeline-summary",
                             description="Stages, gates, BLEU and push of this pipeline run")
    lock = Path(report.project) / "dvc.lock"
    if error is None and lock.is_file():  # the exact versions this run produced (and pushed)
        create_markdown_artifact(
            "Restore this run's outputs: save the block below as `dvc.lock`, then `dvc pull` "
            f"(or `dvc checkout` while the local cache has them).\n\n```yaml\n{lock.read_text(encoding='utf-8')}```\n",
            key="dvc-lock", description="dvc.lock after this run: the hashes of every output, model included")
