"""Data-validation gates: Great Expectations suites plus plain checks, one report per stage.

A `Gate` collects checks about a stage's output. Expectation suites run through Great
Expectations (ephemeral context, pandas DataFrames); checks GX cannot express (e.g. two
files having the same number of lines) are added directly. `Gate.finish()` writes
`<report_dir>/<stage>.json` (GX results included) and a human-readable `<stage>.md`
(format: `nmt.gates.reports`), then
raises `GateError` naming every failed check if any failed, with the params key that sets its
threshold where the check names one (`key`: what to change when the data is right and the
threshold is not). Stages call it *before* they replace their outputs, so a failed gate leaves
the previous good outputs untouched.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nmt.errors import GateError
from nmt.files.atomic import atomic_write_text
from nmt.gates.reports import render_markdown
from nmt.gates.suite import run_suite

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)


@dataclass
class Check:
    """One gate check: what was required, what was seen, and whether it passed."""

    name: str  # e.g. "train: de words per sentence"
    success: bool
    expected: str  # the requirement, in words
    observed: str  # what the data showed
    key: str = ""  # the params key that sets the threshold (e.g. validate.max_filtered_rate), if one does

    def report(self) -> dict[str, Any]:
        """The check as the reports give it: a failed one with its threshold's key after the requirement."""
        expected = f"{self.expected}; set by {self.key}" if self.key and not self.success else self.expected
        return {"name": self.name, "success": self.success, "expected": expected, "observed": self.observed}


@dataclass
class Gate:
    """The checks of one stage's gate, with statistics worth reporting."""

    stage: str
    checks: list[Check] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    gx_results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return all(c.success for c in self.checks)

    def check(self, name: str, success: bool, expected: str, observed: str, key: str = "") -> bool:
        self.checks.append(Check(name, bool(success), expected, observed, key))
        return bool(success)

    def expect(self, name: str, df: pd.DataFrame, expectations: list[tuple[str, Any]]) -> bool:
        """Run (label, GX expectation) pairs on `df` as one suite; record each as a check."""
        for label, exp in expectations:
            exp.meta = {"label": label}  # results come back labelled, whatever their order
        result = run_suite(f"{self.stage}-{name}", df, [e for _, e in expectations])
        self.gx_results.append(result)
        by_label = {r["expectation_config"]["meta"]["label"]: r for r in result["results"]}
        for label, exp in expectations:
            res = by_label[label]
            self.check(f"{name}: {label}", res["success"], _describe_expectation(exp), _describe_result(res))
        return bool(result["success"])

    def finish(self, report_dir: Path) -> None:
        """Write the reports; raise `GateError` if any check failed."""
        report_dir = Path(report_dir)
        json_path, md_path = report_dir / f"{self.stage}.json", report_dir / f"{self.stage}.md"
        body = {"stage": self.stage, "success": self.success, "checks": [c.report() for c in self.checks],
                "stats": self.stats, "great_expectations": self.gx_results}
        atomic_write_text(json_path, json.dumps(body, indent=2, ensure_ascii=False, default=str) + "\n")
        atomic_write_text(md_path, self.markdown())
        failed = [c.report() for c in self.checks if not c.success]
        if failed:
            reasons = "; ".join(f"{c['name']}: {c['observed']} (expected {c['expected']})" for c in failed)
            raise GateError(f"{self.stage} gate failed: {reasons}. Outputs were not replaced; see {md_path}")
        log.info("%s gate passed (%d checks); report in %s", self.stage, len(self.checks), md_path)

    def markdown(self) -> str:
        return render_markdown(self.stage, self.success, [c.report() for c in self.checks], self.stats)


def _describe_expectation(exp: Any) -> str:
    cfg = exp.configuration.kwargs
    args = ", ".join(f"{k}={v}" for k, v in cfg.items() if k not in ("batch_id",) and v is not None)
    return f"{exp.expectation_type}({args})"


def _describe_result(res: dict[str, Any]) -> str:
    r = res.get("result", {})
    if "observed_value" in r:
        value = r["observed_value"]
        return f"{value:.4g}" if isinstance(value, float) else str(value)
    if "unexpected_count" in r:
        sample = ", ".join(repr(v) for v in r.get("partial_unexpected_list", [])[:5])
        text = (f"{r['unexpected_count']} of {r.get('element_count')} rows outside "
                f"({r.get('unexpected_percent') or 0:.3g}%)")
        return text + (f", e.g. {sample}" if sample else "")
    return json.dumps(r, default=str)[:200]
