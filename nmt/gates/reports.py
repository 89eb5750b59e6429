"""Gate reports, written and read back in one format (torch-free).

`Gate.finish()` writes `<report_dir>/<stage>.json`, `{"stage", "success", "checks": [{"name",
"success", "expected", "observed"}], "stats", "great_expectations"}`, and `<stage>.md`, the
same checks as a table (`render_markdown`). `read_gate_report(path)` gives a `GateReport`, or
None for a JSON file that is not a gate report (a metrics file beside them); the evaluate
report page and the Prefect flow both read gates through it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class GateReport:
    """One gate report as written by `Gate.finish()`."""

    stage: str  # the gate's name, e.g. "raw", "vocab", "export"
    success: bool
    checks: tuple[Mapping[str, Any], ...]  # {"name", "success", "expected", "observed"}
    path: Path  # the JSON file

    @property
    def failed(self) -> list[str]:
        """"check: observed (expected ...)" for every failed check."""
        return [f"{c.get('name')}: {c.get('observed')} (expected {c.get('expected')})"
                for c in self.checks if not c.get("success")]

    def markdown(self) -> str:
        """The report's markdown twin (`<stage>.md`), or the same table rendered from the JSON."""
        md = self.path.with_suffix(".md")
        if md.is_file():
            return md.read_text(encoding="utf-8")
        return render_markdown(self.stage, self.success, self.checks)


def read_gate_report(path: Path) -> GateReport | None:
    """The gate report in `path`; None when it is unreadable or not a gate report."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(data, Mapping) and {"stage", "success", "checks"} <= data.keys()
            and isinstance(data["checks"], list)):
        return None
    checks = tuple(c for c in data["checks"] if isinstance(c, Mapping))
    return GateReport(str(data["stage"]), bool(data["success"]), checks, path)


def read_gate_reports(folder: Path) -> list[GateReport]:
    """Every gate report in `folder`, by file name."""
    found = (read_gate_report(p) for p in sorted(Path(folder).glob("*.json")))
    return [r for r in found if r is not None]


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(stage: str, success: bool, checks: Sequence[Mapping[str, Any]],
                    stats: Mapping[str, Any] | None = None) -> str:
    """A gate report as markdown: status, one table row per check, statistics as JSON."""
    lines = [f"# Gate `{stage}`: {'PASSED' if success else 'FAILED'}", "",
             "| check | result | expected | observed |", "| --- | --- | --- | --- |"]
    for c in checks:
        result = "ok" if c.get("success") else "**FAILED**"
        lines.append(f"| {c.get('name')} | {result} | {c.get('expected')} | {_cell(c.get('observed'))} |")
    if stats:
        lines += ["", "## Statistics", "", "```json", json.dumps(stats, indent=2, ensure_ascii=False), "```"]
    return "\n".join(lines) + "\n"
