"""The DVC pipeline as a Prefect flow: one task per dvc.yaml stage, gates as artifacts, the
run saved as a DVC experiment, the model registered and promoted if not worse, then push.

Each task runs `dvc repro --single-item STAGE` (stages read from dvc.yaml at run time, in
file order), so DVC decides what is up to date. A failed stage, a gate included, fails its
task and the run with the stage's own message (`stage 'validate' failed: raw gate failed:
...`). Only download retries (network). Two runs never overlap: each holds the one-slot
global concurrency limit `nmt-pipeline`.

A full run that retrained something is saved as a DVC experiment (`dvc exp save`: `dvc exp
show` lists it with its BLEU) and registered (flows/registry.py): a new version of the
dvc.yaml artifacts on the experiment's commit, and the stage `prod` only if champion /
challenger says so (promotion by evidence: both ONNX packages decode the test sets side by side,
flows/promotion.py; the record in reports/promotion/ and the run's artifacts); a challenger
that is not promoted ends the run `Completed` in the state `Not promoted`, with the reason.
Params overrides are an experiment's, not an edit: they are written into params.yaml for the
run and taken back afterwards, outputs included.
Run once without a server: `python -m flows.pipeline --help`.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run
from prefect.states import Completed, State
from prefect.tasks import Task

from flows.artifacts import (
    PipelineReport,
    Promotion,
    StageResult,
    publish_gate,
    publish_promotion,
    publish_run_artifacts,
    report_digests,
    stage_gates,
    written_reports,
)
from flows.concurrency import pipeline_lock
from flows.decision import markdown
from flows.dvc_project import (
    STOP_GRACE_S,
    PipelineError,
    StageSpec,
    apply_param_overrides,
    check_git_ready,
    failure_message,
    read_stages,
    recover,
    resolve_project,
    restore,
    run_dvc,
    save_experiment,
    select_stages,
    snapshot,
    stage_ran,
    stage_timeout_s,
)
from flows.models import declared_artifacts
from flows.registry import promote_commit, promote_config
from nmt.config.promote import PromoteConfig
from nmt.files.atomic import atomic_write_text

NOT_PROMOTED = "Not promoted"  # final state (type Completed) of a run whose model did not take prod
DOWNLOAD_RETRIES = 2  # the only stage that talks to the network
DOWNLOAD_RETRY_DELAYS_S: list[float] = [30, 120]
TASK_TIMEOUT_MARGIN_S = STOP_GRACE_S + 60  # a stage task's own timeout: run_dvc's, then its stop, then this much
Logger = logging.Logger | logging.LoggerAdapter  # the run logger Prefect gives a flow


class StageFailed(RuntimeError):
    """A DVC stage (or `dvc push`) exited non-zero; the message is the stage's own."""


@contextmanager
def overrides_taken_back(project: Path, specs: Sequence[StageSpec], params: dict[str, Any] | None,
                         logger: Logger) -> Iterator[None]:
    """With params overrides: params.yaml, dvc.lock and the uncached outputs saved before the
    block and put back after it (the cached outputs checked out again), however it ends."""
    if not params:
        yield
        return
    saved = snapshot(project, specs)
    try:
        yield
    finally:
        restore(project, saved, logger)
        logger.info("params.yaml, dvc.lock and the outputs are back as before the run")


@contextmanager
def artifacts_published(project: Path, specs: Sequence[StageSpec], selected: Sequence[StageSpec],
                        report: PipelineReport, logger: Logger) -> Iterator[None]:
    """After the block, however it ends: the run's artifacts, with its error if it raised one.
    A Prefect API failure here is logged, never raised (what comes after must still happen)."""
    error: str | None = None
    try:
        yield
    except BaseException as exc:
        error = str(exc) or type(exc).__name__
        raise
    finally:
        try:
            publish_run_artifacts(project, specs, selected, report, error)
        except Exception as exc:
            logger.warning("could not publish the run's artifacts: %s", exc)


@task(cache_policy=NO_CACHE)
def run_stage(project: Path, spec: StageSpec) -> StageResult:
    """`dvc repro --single-item STAGE`; publish its gate reports; fail with the stage's message."""
    logger, started = get_run_logger(), time.monotonic()
    before = report_digests(project, spec)
    code, lines = run_dvc(project, ["repro", "--single-item", spec.name], logger)
    ran = stage_ran(lines, spec.name)
    gates = stage_gates(project, spec, written_reports(project, spec, before, ran, succeeded=code == 0))
    for gate in gates:
        if code == 0 or gate.fresh:  # a failed stage's stale report would describe the last good run
            publish_gate(gate)
    if code != 0:
        raise StageFailed(f"stage '{spec.name}' failed: {failure_message(lines)}")
    return StageResult(spec.name, ran, time.monotonic() - started, tuple(gates))


def stage_task(stage: str) -> Task[..., StageResult]:
    """The task of one stage, named after it; only download retries. Its timeout backs up run_dvc's own
    (`NMT_STAGE_TIMEOUT_S`), which stops the stage and fails the task first, with a message saying so."""
    retries = DOWNLOAD_RETRIES if stage == "download" else 0
    return run_stage.with_options(name=stage, task_run_name=stage, retries=retries,
                                  retry_delay_seconds=DOWNLOAD_RETRY_DELAYS_S if retries else 0,
                                  timeout_seconds=stage_timeout_s() + TASK_TIMEOUT_MARGIN_S)


@task(name="dvc-push", task_run_name="dvc-push", cache_policy=NO_CACHE)
def push_outputs(project: Path, stages: list[str], remote: str | None) -> str:
    code, lines = run_dvc(project, ["push", *(["--remote", remote] if remote else []), *stages], get_run_logger())
    if code != 0:
        raise StageFailed(f"dvc push failed: {failure_message(lines)}. The outputs are built and in the local DVC "
                          "cache; fix the remote (`dvc remote list`) and run `dvc push` again")
    return lines[-1] if lines else "pushed"


@task(name="dvc-exp-save", task_run_name="dvc-exp-save", cache_policy=NO_CACHE)
def record_experiment(project: Path, name: str, specs: list[StageSpec]) -> str:
    """Save the run as the DVC experiment `name`; returns its commit."""
    return save_experiment(project, name, specs, get_run_logger())


@task(name="register", task_run_name="register", cache_policy=NO_CACHE)
def register_model(project: Path, commit: str, gates_passed: bool, cfg: PromoteConfig) -> Promotion:
    """A new registry version on `commit`; the stage `cfg.stage` if not worse than the champion (by
    evidence where the champion's package can be decoded: its record goes to reports/promotion/)."""
    decision, version, registry = promote_commit(project, commit, cfg.max_bleu_drop, cfg.stage, gates_passed, rule=cfg)
    page = markdown(decision, version, registry.artifact, cfg.stage)
    (project / "reports").mkdir(exist_ok=True)
    atomic_write_text(project / "reports" / "promotion.md", page)
    promotion = Promotion(registry.artifact, version, commit, cfg.stage, decision.promote, decision.reason)
    publish_promotion(promotion, decision, page)
    return promotion


@flow(name="nmt-pipeline", description="Weekly retraining: the dvc.yaml stages through DVC, gates and BLEU "
      "as artifacts, the run saved as a DVC experiment and registered, prod only if not worse, then dvc push.",
      validate_parameters=True)
def pipeline(stages: list[str] | None = None, params: dict[str, Any] | None = None, push: bool = True,
             remote: str | None = None, project_dir: str | None = None,
             lock_timeout_s: float | None = 600.0, registry: bool = True,
             experiment: str | None = None) -> PipelineReport | State:
    """Run the DVC pipeline stage by stage; save, register and maybe promote the model; push.

    Args:
        stages: dvc.yaml stages to run (in dvc.yaml order); None runs all of them.
        params: overrides such as `{"train.max_steps": 1000}`: this run's experiment only; params.yaml
            and the outputs are back as before once the run is over.
        push: `dvc push` the run's outputs after a successful run.
        remote: DVC remote to push to; None uses the project's default (`.dvcstore/`).
        project_dir: the project (folder with dvc.yaml); None is the repository of this file.
        lock_timeout_s: how long to wait for another running pipeline to finish (None: forever).
        registry: save a full run that retrained something as a DVC experiment and register it
            (dvc.yaml `artifacts:`, GTO tags); promote it if not worse than the one at `prod`.
        experiment: the experiment's name; None: this flow run's name.
    """
    logger = get_run_logger()
    project = resolve_project(project_dir)
    specs = read_stages(project)
    selected = select_stages(specs, stages)
    report = PipelineReport(project=str(project))
    with pipeline_lock(lock_timeout_s):
        recover(project, logger)  # a run killed before it could take its overrides back
        report.digests = {spec.name: report_digests(project, spec) for spec in specs}  # to tell this run's reports
        # the rule as committed (an override cannot loosen it), checked before hours of training
        rule = registry_preflight(project, experiment) if registry and declared_artifacts(project) else None
        # leaving the block: first the artifacts, while the workspace holds this run's reports; then the take-back
        with overrides_taken_back(project, specs, params, logger), \
                artifacts_published(project, specs, selected, report, logger):
            report.overrides = apply_param_overrides(project / "params.yaml", params or {})
            if report.overrides:
                logger.info("params overrides for this run only: %s", report.overrides)
            for spec in selected:
                report.stages.append(stage_task(spec.name)(project, spec))
            if push:  # first: a version is registered only once its data is in the remote
                report.pushed = push_outputs(project, [s.name for s in selected], remote)
            if rule is not None and _registrable(specs, selected, report, logger):
                report.experiment = experiment or str(flow_run.name or "nmt-run")
                commit = record_experiment(project, report.experiment, specs)
                gates_passed = all(g.report.success for s in report.stages for g in s.gates)
                report.promotion = register_model(project, commit, gates_passed, rule)
    logger.info("done: ran %s", ", ".join(report.ran) or "nothing (everything up to date)")
    if report.promotion is not None and not report.promotion.promoted:
        return Completed(name=NOT_PROMOTED, data=report,
                         message=f"{report.promotion.artifact} {report.promotion.version} not promoted: "
                                 f"{report.promotion.reason}")
    return report


def registry_preflight(project: Path, experiment: str | None) -> PromoteConfig:
    """What registering needs, checked before the stages run: the `promote` rule, a git
    repository with a commit, a git identity (experiments and tags are commits), a valid name."""
    cfg = promote_config(project / "params.yaml")
    check_git_ready(project)
    if experiment is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", experiment):
        raise PipelineError(f"experiment name {experiment!r}: use letters, digits, '.', '_' and '-' "
                            "(it becomes a git ref)")
    return cfg


def _registrable(specs: Sequence[StageSpec], selected: Sequence[StageSpec], report: PipelineReport,
                 logger) -> bool:
    """Whether this run makes a new registry version: the whole pipeline ran, something retrained."""
    if len(selected) != len(specs):
        logger.info("not registered: only some stages were selected (%s)", ", ".join(s.name for s in selected))
        return False
    if not report.ran:
        logger.info("not registered: every stage was up to date (the model is the one already registered)")
        return False
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m flows.pipeline`: one run now (ephemeral Prefect unless PREFECT_API_URL is set)."""
    parser = argparse.ArgumentParser(prog="python -m flows.pipeline", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stages", nargs="+", help="stages to run (default: all, in dvc.yaml order)")
    parser.add_argument("--set", "-S", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="params override for this run's experiment, e.g. -S train.max_steps=100 (value "
                             "parsed as YAML); params.yaml is back as committed afterwards")
    parser.add_argument("--no-push", action="store_true", help="do not dvc push after the run")
    parser.add_argument("--no-register", action="store_true",
                        help="do not save the run as a DVC experiment nor register / promote its model")
    parser.add_argument("--experiment", help="the DVC experiment's name (default: the flow run's name)")
    parser.add_argument("--remote", help="DVC remote to push to (default: the project's default remote)")
    parser.add_argument("--project", help="project folder (default: this repository)")
    args = parser.parse_args(argv)
    overrides = {}
    for item in args.overrides:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--set {item!r}: expected KEY=VALUE")
        overrides[key] = yaml.safe_load(value)
    state = pipeline(stages=args.stages, params=overrides or None, push=not args.no_push, remote=args.remote,
                     project_dir=args.project, registry=not args.no_register, experiment=args.experiment,
                     return_state=True)
    if not state.is_completed():
        print(f"nmt pipeline: error: {state.name}: {state.message}", file=sys.stderr)
        return 1
    if state.name == NOT_PROMOTED:
        print(f"nmt pipeline: {state.message}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
