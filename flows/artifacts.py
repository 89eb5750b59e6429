"""The Prefect artifacts of a pipeline run, published also when it fails.

Per gate report a stage declares in dvc.yaml: a `gate-<name>` markdown artifact. Per run: a
`gates` table, a `metrics` table (every scalar of dvc.yaml's other metrics files, BLEU
included), a `pipeline-summary` markdown and, when it completed, its `dvc.lock` (`dvc-lock`),
enough to `dvc pull` that model version. When the run registered its model: a `promotion`
table (champion and challenger scores) and a `promotion-decision` markdown (the reason).
Gate reports are read with `nmt.gates.reports`; a report is this run's when the run wrote it
(`written_reports`: DVC ran its stage, and it passed or changed the report; content digests,
never file times), else the last run's.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from flows.decision import Decision, table
from flows.dvc_project import StageSpec
from nmt.gates.reports import GateReport, read_gate_report

CELL_CHARS = 160  # longer table cells are cut (the gate's markdown artifact has the whole text)


@dataclass(frozen=True)
class GateSeen:
    """A gate report of a stage, and whether this run wrote it (else: from the last run)."""

    report: GateReport
    stage: str
    fresh: bool


@dataclass(frozen=True)
class StageResult:
    """What one stage task did: ran (DVC re-ran it) or was up to date, and its gates."""

    stage: str
    ran: bool
    seconds: float
    gates: tuple[GateSeen, ...] = ()


@dataclass(frozen=True)
class Promotion:
    """What the registry did with the run's model."""

    artifact: str  # the dvc.yaml artifact whose versions are counted (nmt-de-en)
    version: str  # the version registered for this run, e.g. v0.0.3
    commit: str  # the DVC experiment commit the version tags point at
    stage: str  # the stage the champion holds (prod)
    promoted: bool
    reason: str


@dataclass
class PipelineReport:
    """The flow's return value."""

    project: str
    stages: list[StageResult] = field(default_factory=list)
    # stage -> report_digests() as the run began: a stage that failed wrote the reports it changed
    digests: dict[str, dict[str, str | None]] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    pushed: str | None = None  # DVC's push summary; None when push was off or not reached
    experiment: str | None = None  # the DVC experiment the run was saved as
    promotion: Promotion | None = None  # None: the run registered nothing

    @property
    def ran(self) -> list[str]:
        return [s.stage for s in self.stages if s.ran]


def report_digests(project: Path, spec: StageSpec) -> dict[str, str | None]:
    """sha256 of each JSON file the stage declares (gate report candidates), None when absent."""
    def digest(path: Path) -> str | None:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None

    return {rel: digest(project / rel) for rel in spec.outputs if rel.endswith(".json")}


def changed_reports(project: Path, spec: StageSpec, before: Mapping[str, str | None]) -> set[str]:
    """The stage's JSON files whose content is not what `report_digests` saw in `before`."""
    return {rel for rel, digest in report_digests(project, spec).items()
            if digest is not None and digest != before.get(rel)}


def written_reports(project: Path, spec: StageSpec, before: Mapping[str, str | None], ran: bool,
                    succeeded: bool) -> set[str]:
    """The stage's JSON files this run wrote, from what the run did, never from clocks or mtimes:
    none if DVC did not run the stage; all if it ran and succeeded (it passed its gate, which
    wrote the report); if it ran and failed, those whose content changed (a stage can fail
    before its gate writes anything, leaving the last run's report)."""
    if not ran:
        return set()
    if succeeded:
        return {rel for rel, digest in report_digests(project, spec).items() if digest is not None}
    return changed_reports(project, spec, before)


def stage_gates(project: Path, spec: StageSpec, written: Collection[str]) -> list[GateSeen]:
    """The gate reports among the files the stage declares; fresh: among `written`, this run's."""
    found = [(read_gate_report(project / rel), rel) for rel in spec.outputs if rel.endswith(".json")]
    return [GateSeen(r, spec.name, rel in written) for r, rel in found if r is not None]


def publish_gate(gate: GateSeen) -> None:
    status = "PASSED" if gate.report.success else "FAILED"
    origin = "this run" if gate.fresh else "the last run (stage up to date)"
    create_markdown_artifact(gate.report.markdown(), key=f"gate-{_key(gate.report.stage)}",
                             description=f"Gate `{gate.report.stage}` of stage `{gate.stage}`: {status}; from {origin}")


def publish_promotion(promotion: Promotion, decision: Decision, page: str) -> None:
    """The champion/challenger `promotion` table and the `promotion-decision` markdown."""
    verdict = f"promoted to {promotion.stage}" if promotion.promoted else "NOT PROMOTED"
    create_table_artifact(table(decision, promotion.version) or [{"reason": decision.reason}], key="promotion",
                          description=f"{promotion.artifact} {promotion.version}: {verdict}: {decision.reason}")
    create_markdown_artifact(page, key="promotion-decision",
                             description=f"{promotion.artifact} {promotion.version}: {verdict}")


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-") or "unnamed"


def _cell(text: str) -> str:
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS - 1] + "…"


def _flatten(prefix: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, Mapping):
        return [kv for k, v in value.items() for kv in _flatten(f"{prefix}.{k}" if prefix else str(k), v)]
    keep = isinstance(value, (bool, int, float)) or (isinstance(value, str) and len(value) <= 200)
    return [(prefix, value)] if keep else []


def metrics_rows(project: Path, specs: Sequence[StageSpec]) -> list[dict[str, Any]]:
    """Every scalar of every metrics file of dvc.yaml that is not a gate report."""
    rows = []
    for spec in specs:
        for rel in spec.metrics:
            path = project / rel
            if not path.is_file() or read_gate_report(path) is not None:
                continue
            try:
                data = json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
            except (OSError, ValueError, yaml.YAMLError):
                continue
            rows += [{"stage": spec.name, "file": rel, "metric": k, "value": v} for k, v in _flatten("", data)]
    return rows


def _rounded(value: Any) -> Any:
    return round(value, 2) if isinstance(value, float) else value


def summary_markdown(report: PipelineReport, selected: Sequence[StageSpec], gates: Sequence[GateSeen],
                     metrics: Sequence[Mapping[str, Any]], error: str | None) -> str:
    done = {s.stage: s for s in report.stages}
    failed = next((s.name for s in selected if s.name not in done), None) if error else None
    lines = [f"# nmt pipeline: {'FAILED' if error else 'COMPLETED'}", "", f"Project: `{report.project}`", ""]
    lines += [f"**Error:** {error}", ""] if error else []
    lines += ["| stage | result | seconds |", "| --- | --- | --- |"]
    for spec in selected:
        s = done.get(spec.name)
        result = ("ran" if s.ran else "up to date") if s else ("**failed**" if spec.name == failed else "not run")
        lines.append(f"| {spec.name} | {result} | {f'{s.seconds:.1f}' if s else ''} |")
    lines += ["", "## Gates", ""] + [
        f"- `{g.report.stage}` ({g.stage}): {'PASSED' if g.report.success else 'FAILED'}, {len(g.report.checks)} checks"
        + ("" if g.fresh else ", up to date") + "".join(f"\n  - {f}" for f in g.report.failed) for g in gates]
    lines += [] if gates else ["- none reported"]
    headline = [m for m in metrics if re.search(r"bleu|chrf", str(m["metric"]).rsplit(".", 1)[-1], re.I)]
    lines += ["", "## BLEU / chrF", ""]
    lines += [f"- `{m['file']}` {m['metric']}: {_rounded(m['value'])}" for m in headline] or ["- none yet"]
    if report.overrides:
        lines += ["", "## Params overrides (this run's experiment only)", ""]
        lines += [f"- `{k}` = `{v!r}`" for k, v in report.overrides.items()]
    if report.promotion is not None:
        p = report.promotion
        verdict = f"promoted to `{p.stage}`" if p.promoted else "**not promoted**"
        lines += ["", "## Registry", "", f"DVC experiment `{report.experiment}` ({p.commit[:8]}): {p.artifact} "
                  f"{p.version}, {verdict}: {p.reason}."]
    pushed = report.pushed if report.pushed is not None else "not reached" if error else "off"
    return "\n".join(lines + ["", f"DVC push: {pushed}"]) + "\n"


def run_gates(project: Path, spec: StageSpec, report: PipelineReport) -> list[GateSeen]:
    """A stage's gates as the run left them: those of its result; with none (the stage failed or
    never started), its reports, this run's if the run changed them."""
    result = next((s for s in report.stages if s.stage == spec.name), None)
    if result is not None:
        return list(result.gates)
    before = report.digests.get(spec.name)
    return stage_gates(project, spec, changed_reports(project, spec, before) if before is not None else ())


def publish_run_artifacts(project: Path, specs: Sequence[StageSpec], selected: Sequence[StageSpec],
                          report: PipelineReport, error: str | None) -> None:
    """The run's `gates` and `metrics` tables, `pipeline-summary` and (completed runs) `dvc-lock`."""
    gates = [g for spec in specs for g in run_gates(project, spec, report)]
    if gates:
        create_table_artifact([{"gate": g.report.stage, "stage": g.stage,
                                "result": "PASSED" if g.report.success else "FAILED", "checks": len(g.report.checks),
                                "failed": _cell("; ".join(g.report.failed)), "from this run": g.fresh}
                               for g in gates], key="gates", description="Data-validation gates of the pipeline")
    metrics = metrics_rows(project, specs)
    if metrics:
        create_table_artifact(metrics, key="metrics", description="dvc.yaml metrics files after this run")
    create_markdown_artifact(summary_markdown(report, selected, gates, metrics, error), key="pipeline-summary",
                             description="Stages, gates, BLEU and push of this pipeline run")
    lock = project / "dvc.lock"
    if error is None and lock.is_file():
        create_markdown_artifact(
            "Restore this run's outputs: save the block below as `dvc.lock`, then `dvc pull`.\n\n"
            f"```yaml\n{lock.read_text(encoding='utf-8')}```\n",
            key="dvc-lock", description="dvc.lock after this run: the hashes of every output, model included")
