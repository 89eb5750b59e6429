"""The DVC pipeline as a Prefect flow: one task per dvc.yaml stage, gates as artifacts, then push.

Each task runs `dvc repro --single-item STAGE` (stages read from dvc.yaml at run time, in
file order), so DVC decides what is up to date. A failed stage, a gate included, fails its
task and the run with the stage's own message (`stage 'validate' failed: raw gate failed:
...`). Only download retries (network). Two runs never overlap: each holds the one-slot
global concurrency limit `nmt-pipeline`. Run once without a server: `python -m flows.pipeline --help`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import yaml
from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
from prefect.tasks import Task

from flows.artifacts import PipelineReport, StageResult, publish_gate, publish_run_artifacts, stage_gates
from flows.dvc_project import (
    StageSpec,
    apply_param_overrides,
    failure_message,
    read_stages,
    resolve_project,
    run_dvc,
    select_stages,
    stage_ran,
)

PIPELINE_LIMIT = "nmt-pipeline"  # Prefect global concurrency limit: one pipeline run at a time
DOWNLOAD_RETRIES = 2  # the only stage that talks to the network
DOWNLOAD_RETRY_DELAYS_S = [30, 120]


class StageFailed(RuntimeError):
    """A DVC stage (or `dvc push`) exited non-zero; the message is the stage's own."""


class PipelineBusy(RuntimeError):
    """Another pipeline run holds the `nmt-pipeline` concurrency slot."""


def ensure_pipeline_limit() -> None:
    """Create the one-slot global concurrency limit `nmt-pipeline` if missing (re-arm it if changed)."""
    with get_client(sync_client=True) as client:
        try:
            existing = client.read_global_concurrency_limit_by_name(PIPELINE_LIMIT)
        except ObjectNotFound:
            try:
                client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=PIPELINE_LIMIT, limit=1))
            except ObjectAlreadyExists:  # another first run created it meanwhile
                pass
            return
        if existing.limit != 1 or not existing.active:
            client.update_global_concurrency_limit(PIPELINE_LIMIT, GlobalConcurrencyLimitUpdate(limit=1, active=True))


@contextmanager
def pipeline_lock(timeout_s: float | None) -> Iterator[None]:
    """Hold the `nmt-pipeline` slot for the block; wait up to `timeout_s` (None: forever)."""
    ensure_pipeline_limit()
    stack = ExitStack()
    try:
        stack.enter_context(concurrency(PIPELINE_LIMIT, occupy=1, timeout_seconds=timeout_s, strict=True,
                                        raise_on_lease_renewal_failure=False))
    except TimeoutError:
        raise PipelineBusy(f"another nmt pipeline run holds the Prefect concurrency limit {PIPELINE_LIMIT!r} "
                           f"(waited {timeout_s:g} s); nothing was run. Wait for it to finish (Prefect UI: Runs, "
                           "Concurrency) or pass a larger lock_timeout_s") from None
    with stack:
        yield


@task(cache_policy=NO_CACHE)
def run_stage(project: Path, spec: StageSpec) -> StageResult:
    """`dvc repro --single-item STAGE`; publish its gate reports; fail with the stage's message."""
    logger, started = get_run_logger(), time.time()
    code, lines = run_dvc(project, ["repro", "--single-item", spec.name], logger)
    gates = stage_gates(project, spec, since=started)
    for gate in gates:
        if code == 0 or gate.fresh:  # a failed stage's stale report would describe the last good run
            publish_gate(gate)
    if code != 0:
        raise StageFailed(f"stage '{spec.name}' failed: {failure_message(lines)}")
    return StageResult(spec.name, stage_ran(lines, spec.name), time.time() - started, tuple(gates))


def stage_task(stage: str) -> Task[..., StageResult]:
    """The task of one stage, named after it; only download retries."""
    retries = DOWNLOAD_RETRIES if stage == "download" else 0
    return run_stage.with_options(name=stage, task_run_name=stage, retries=retries,
                                  retry_delay_seconds=DOWNLOAD_RETRY_DELAYS_S if retries else 0)


@task(name="dvc-push", task_run_name="dvc-push", cache_policy=NO_CACHE)
def push_outputs(project: Path, stages: list[str], remote: str | None) -> str:
    code, lines = run_dvc(project, ["push", *(["--remote", remote] if remote else []), *stages], get_run_logger())
    if code != 0:
        raise StageFailed(f"dvc push failed: {failure_message(lines)}. The outputs are built and in the local DVC "
                          "cache; fix the remote (`dvc remote list`) and run `dvc push` again")
    return lines[-1] if lines else "pushed"


@flow(name="nmt-pipeline", description="Weekly retraining: the dvc.yaml stages through DVC, gates and BLEU "
      "as artifacts, then dvc push.", validate_parameters=True)
def pipeline(stages: list[str] | None = None, params: dict[str, Any] | None = None, push: bool = True,
             remote: str | None = None, project_dir: str | None = None,
             lock_timeout_s: float | None = 600.0) -> PipelineReport:
    """Run the DVC pipeline stage by stage, then push its outputs.

    Args:
        stages: dvc.yaml stages to run (in dvc.yaml order); None runs all of them.
        params: overrides such as `{"train.max_steps": 1000}`, written into params.yaml first.
        push: `dvc push` the run's outputs after a successful run.
        remote: DVC remote to push to; None uses the project's default (`.dvcstore/`).
        project_dir: the project (folder with dvc.yaml); None is the repository of this file.
        lock_timeout_s: how long to wait for another running pipeline to finish (None: forever).
    """
    logger = get_run_logger()
    project = resolve_project(project_dir)
    specs = read_stages(project)
    selected = select_stages(specs, stages)
    report = PipelineReport(project=str(project), started=time.time())
    with pipeline_lock(lock_timeout_s):
        error: str | None = None
        try:
            report.overrides = apply_param_overrides(project / "params.yaml", params or {})
            if report.overrides:
                logger.warning("params.yaml now holds the overrides %s (commit or revert them)", report.overrides)
            for spec in selected:
                report.stages.append(stage_task(spec.name)(project, spec))
            if push:
                report.pushed = push_outputs(project, [s.name for s in selected], remote)
        except BaseException as exc:
            error = str(exc) or type(exc).__name__
            raise
        finally:
            publish_run_artifacts(project, specs, selected, report, error)
    logger.info("done: ran %s", ", ".join(report.ran) or "nothing (everything up to date)")
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m flows.pipeline`: one run now (ephemeral Prefect unless PREFECT_API_URL is set)."""
    parser = argparse.ArgumentParser(prog="python -m flows.pipeline", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stages", nargs="+", help="stages to run (default: all, in dvc.yaml order)")
    parser.add_argument("--set", "-S", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="params override, e.g. -S train.max_steps=100 (value parsed as YAML)")
    parser.add_argument("--no-push", action="store_true", help="do not dvc push after the run")
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
                     project_dir=args.project, return_state=True)
    if state.is_failed():
        print(f"nmt pipeline: error: {state.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
