"""The drift check as a Prefect flow: the served traffic of a window against the training data's
profile (docs/lifecycle.md: Drift check).

The server's snapshots in `--stats-dir` (`nmt serve --stats-dir DIR`: counts, no text) of the last
`drift.hours` are summed (`nmt.translate.traffic.read_snapshots`) and compared, direction by direction,
with the profile the profile stage wrote (`reports/profile.json`; general/dvc.yaml: one per
direction) by the population stability index of each aggregate (nmt/drift/report.py; thresholds and
minimums: params.yaml `drift:`). The report is written atomically to `reports/drift/latest.json` and
`.md`, and is the run's `drift-report` Markdown artifact (Prefect keeps every run's). A window with
too little traffic is "not enough data" (the run's state `Not enough data`), never drift. On drift
the run ends in the state `Drifted` (type Completed), which the `nmt-drift` automation turns into a
message on the alert webhook (`python -m flows.alerts`), and, with `drift.retrain_on_drift` (or the
`retrain` parameter), starts a run of the retraining deployment (`drift.retrain_deployment`); the
report says which run. `prefect.yaml` deploys it as `nmt-drift/daily-drift`.

    python -m flows.drift --stats-dir DIR [--profile reports/profile.json] [--hours 24]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import FlowRun
from prefect.states import Completed, State

from nmt.config.drift import DriftConfig
from nmt.config.loader import load_sections
from nmt.drift.profile import read_profile
from nmt.drift.report import DRIFT, NOT_ENOUGH, DriftReport, drift_report, markdown
from nmt.errors import DataError
from nmt.files.atomic import atomic_write_text
from nmt.translate.traffic import read_snapshots

ROOT = Path(__file__).resolve().parents[1]
DRIFTED = "Drifted"  # final state (type Completed) of a run that found drift: the alert automation's trigger
NOT_ENOUGH_DATA = "Not enough data"  # final state (type Completed) of a run whose window had too little traffic
DEFAULT_PROFILE = "reports/profile.json"  # the profile stage's output (dvc.yaml)
REPORTS = Path("reports") / "drift"  # latest.json and latest.md, relative to the project
ARTIFACT = "drift-report"
DRIFT_EXIT = 3  # `python -m flows.drift`'s exit status on drift (0: no drift or not enough data)


@dataclass(frozen=True)
class DriftParams:
    """The params.yaml section the flow reads."""

    drift: DriftConfig  # thresholds, minimums, window, retraining


def report_paths(project: Path) -> tuple[Path, Path]:
    """Where the latest report goes: (JSON, Markdown) under reports/drift/."""
    return Path(project) / REPORTS / "latest.json", Path(project) / REPORTS / "latest.md"


def _under(project: Path, path: str | Path) -> Path:
    return Path(path) if Path(path).is_absolute() else project / path


@task(name="drift-report", task_run_name="drift-report", cache_policy=NO_CACHE)
def measure(stats_dir: Path, profiles: list[Path], cfg: DriftConfig, hours: float, end: float) -> DriftReport:
    """The report of the window of `hours` ending at `end` (unix seconds) against `profiles`."""
    references, sources = {}, dict[str, str]()
    for path in profiles:
        profile = read_profile(path)
        if profile.direction in references:
            raise DataError(f"{path} and {sources[profile.direction]} are both profiles of {profile.direction}")
        references[profile.direction], sources[profile.direction] = profile.reference(), str(path)
    if not Path(stats_dir).is_dir():
        raise DataError(f"--stats-dir {stats_dir}: not a folder; start the server with `nmt serve --stats-dir "
                        f"{stats_dir}` (docs/serving.md: Watching the traffic)")
    start = end - hours * 3600.0
    return drift_report(references, read_snapshots(stats_dir, start, end), cfg, start, end, sources)


@task(name="retrain", task_run_name="retrain", cache_policy=NO_CACHE)
def start_retraining(deployment: str) -> dict[str, Any]:
    """A run of `deployment` (FLOW/DEPLOYMENT), scheduled now and not waited for; what happened."""
    from prefect.deployments import run_deployment

    try:
        run = cast(FlowRun, run_deployment(deployment, timeout=0, tags=["drift"]))
    except Exception as exc:  # a missing deployment must not hide the drift: reported, alerted with it
        get_run_logger().error("retraining not started: %s: %s", type(exc).__name__, exc)
        return {"deployment": deployment, "started": False,
                "message": f"not started: {type(exc).__name__}: {exc} (deploy it: prefect --no-prompt deploy --all)"}
    return {"deployment": deployment, "started": True, "flow_run_id": str(run.id), "flow_run_name": run.name,
            "message": f"started a run of {deployment}: {run.name} ({run.id})"}


def write_report(project: Path, report: DriftReport, page: str) -> tuple[Path, Path]:
    """`report` as JSON and `page` as Markdown, each written atomically (`report_paths`)."""
    json_path, md_path = report_paths(project)
    atomic_write_text(json_path, json.dumps(report.to_json(), indent=1) + "\n")
    atomic_write_text(md_path, page)
    return json_path, md_path


@flow(name="nmt-drift", description="Drift check: the served traffic of a window (nmt serve --stats-dir snapshots) "
      "against the training data's profile, PSI per aggregate; alert and optional retraining on drift.",
      validate_parameters=True)
def drift_check(stats_dir: str, profiles: list[str] | None = None, hours: float | None = None,
                project_dir: str | None = None, retrain: bool | None = None,
                retrain_deployment: str | None = None) -> DriftReport | State:
    """Compare the last `hours` of served traffic with the profiles; report, and act on drift.

    Args:
        stats_dir: the server's `--stats-dir` (relative paths: to the project).
        profiles: the profile files (default: reports/profile.json), one per direction.
        hours: the window; None: params.yaml `drift.hours`.
        project_dir: the project (params.yaml, reports/); None: the repository of this file.
        retrain: on drift, start a run of the retraining deployment; None: `drift.retrain_on_drift`.
        retrain_deployment: FLOW/DEPLOYMENT to start; None: `drift.retrain_deployment`.
    """
    logger = get_run_logger()
    project = Path(project_dir).expanduser().resolve() if project_dir else ROOT
    cfg = load_sections(project / "params.yaml", DriftParams).drift
    paths = [_under(project, p) for p in (profiles or [DEFAULT_PROFILE])]
    report = measure(_under(project, stats_dir), paths, cfg, hours or cfg.hours, time.time())
    if report.status == DRIFT and (cfg.retrain_on_drift if retrain is None else retrain):
        report = replace(report, retrain=start_retraining(retrain_deployment or cfg.retrain_deployment))
    page = markdown(report)
    json_path, _ = write_report(project, report, page)
    create_markdown_artifact(key=ARTIFACT, markdown=page, description=report.summary()[:500])
    logger.info("%s; report: %s", report.summary(), json_path)
    if report.status == DRIFT:
        retrained = f"; retraining {report.retrain['message']}" if report.retrain else ""
        return Completed(name=DRIFTED, data=report, message=report.summary() + retrained)
    if report.status == NOT_ENOUGH:
        return Completed(name=NOT_ENOUGH_DATA, data=report, message=report.summary())
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m flows.drift`: one check now (ephemeral Prefect unless PREFECT_API_URL is set)."""
    parser = argparse.ArgumentParser(prog="python -m flows.drift", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stats-dir", required=True, help="the server's --stats-dir (its traffic snapshots)")
    parser.add_argument("--profile", action="append", dest="profiles", metavar="PATH",
                        help=f"a profile (repeatable, one per direction; default: {DEFAULT_PROFILE})")
    parser.add_argument("--hours", type=float, help="the window in hours (default: params.yaml drift.hours)")
    parser.add_argument("--project", help="project folder (default: this repository)")
    parser.add_argument("--retrain", action=argparse.BooleanOptionalAction, default=None,
                        help="on drift, start a run of drift.retrain_deployment (default: drift.retrain_on_drift)")
    args = parser.parse_args(argv)
    if args.hours is not None and not args.hours > 0:
        parser.error(f"--hours {args.hours:g}: must be a positive number of hours")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    state = drift_check(stats_dir=args.stats_dir, profiles=args.profiles, hours=args.hours, project_dir=args.project,
                        retrain=args.retrain, return_state=True)
    if not state.is_completed():
        print(f"nmt drift: error: {state.name}: {state.message}", file=sys.stderr)
        return 1
    report = cast(DriftReport, state.result())
    print(markdown(report))
    return DRIFT_EXIT if report.status == DRIFT else 0


if __name__ == "__main__":
    sys.exit(main())
