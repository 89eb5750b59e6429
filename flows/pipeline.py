"""The DVC pipeline as a Prefect flow: one task per `dvc.yaml` stage, gates as first-class results.

`pipeline` reads the stages from `dvc.yaml` at run time (file order) and runs each one as its
own Prefect task through `dvc repro --single-item STAGE`, so DVC decides what is up to date
and records lineage in `dvc.lock`; Prefect never bypasses DVC, and no stage calls Prefect.
The DVC side (dvc.yaml, params overrides, running `dvc`) is `flows/dvc_project.py`; the
artifacts are `flows/artifacts.py`.

- A stage that fails (a gate included) fails its task and the flow run, with the stage's
  own one-line message (`nmt STAGE: error: ...`), e.g.
  `stage 'validate' failed: raw gate failed: train: aligned: ...`.
- Every run publishes artifacts (gate reports, `gates` and `metrics` tables,
  `pipeline-summary`), also when it fails; a completed run also its `dvc.lock` (`dvc-lock`).
- Parameters: which stages (default: all), params overrides (written into `params.yaml`,
  like `dvc exp run -S`, so the workspace, `dvc.lock` and the pushed outputs agree), and
  whether to `dvc push` after a successful run (default: yes, to the default remote).
- Only the download task retries (transient network failures).
- Two runs never overlap: the flow holds the Prefect global concurrency limit
  `nmt-pipeline` (one slot, created on first use) for its whole duration; a second run
  waits up to `lock_timeout_s` and then fails saying another run holds the slot.

Run once without a server (ephemeral Prefect): `python -m flows.pipeline --help`.
"""

from __future__ import annotations

import argparse
import logging
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
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
from prefect.tasks import Task

from flows.artifacts import (
    PipelineReport,
    StageResult,
    gate_summaries,
    publish_gate,
    publish_run_artifacts,
)
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
DOWNLOAD_STAGE = "download"
DOWNLOAD_RETRIES = 2
DOWNLOAD_RETRY_DELAYS_S = [30, 120]
DEFAULT_LOCK_TIMEOUT_S = 600.0

log = logging.getLogger(__name__)


class StageFailed(RuntimeError):
    """A DVC stage exited non-zero; the message is the stage's own (a failed gate included)."""


class PipelineBusy(RuntimeError):
    """Another pipeline run holds the `nmt-pipeline` concurrency slot."""


# --- concurrency ------------------------------------------------------------------------------------


def ensure_pipeline_limit() -> None:
    """Create the one-slot global concurrency limit `nmt-pipeline` if missing (and re-arm it)."""
    from prefect.client.schemas.actions import (
        GlobalConcurrencyLimitCreate,
        GlobalConcurrencyLimitUpdate,
    )

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
            log.warning("concurrency limit %r was limit=%s active=%s; resetting to one active slot",
                        PIPELINE_LIMIT, existing.limit, existing.active)
            client.update_global_concurrency_limit(PIPELINE_LIMIT, GlobalConcurrencyLimitUpdate(limit=1, active=True))


@contextmanager
def pipeline_lock(timeout_s: float | None) -> Iterator[None]:
    """Hold the `nmt-pipeline` slot for the block; wait up to `timeout_s` (None: forever) for it."""
    ensure_pipeline_limit()
    stack = ExitStack()
    try:
        stack.enter_context(concurrency(PIPELINE_LIMIT, occupy=1, timeout_seconds=timeout_s, strict=True,
                                        raise_on_lease_renewal_failure=False))
    except TimeoutError:
        raise PipelineBusy(
            f"another nmt pipeline run holds the Prefect concurrency limit {PIPELINE_LIMIT!r} "
            f"(waited {timeout_s:g} s); nothing was run. Wait for it to finish (Prefect UI: Runs, "
            f"Concurrency) or pass a larger lock_timeout_s") from None
    with stack:
        yield


# --- tasks and flow --------------------------------------------------------------------------------


@task(cache_policy=NO_CACHE)
def run_stage(project: Path, spec: StageSpec) -> StageResult:
    """Run one stage with `dvc repro --single-item`; publish its gate reports; fail with its message."""
    logger = get_run_logger()
    started = time.time()
    code, lines = run_dvc(project, ["repro", "--single-item", spec.name], logger)
    seconds = time.time() - started
    gates = gate_summaries(project, spec, since=started)
    for gate in gates:
        if code == 0 or gate.fresh:  # a failed stage's stale report would describe the last good run
            publish_gate(project, gate)
    if code != 0:
        raise StageFailed(f"stage '{spec.name}' failed: {failure_message(lines)}")
    ran = stage_ran(lines, spec.name)
    logger.info("stage %s %s in %.1f s", spec.name, "ran" if ran else "was up to date", seconds)
    return StageResult(spec.name, ran, seconds, tuple(gates))


def stage_task(stage: str) -> Task[..., StageResult]:
    """The Prefect task of one stage, named after it; only download retries (network)."""
    retries = DOWNLOAD_RETRIES if stage == DOWNLOAD_STAGE else 0
    return run_stage.with_options(name=stage, task_run_name=stage, retries=retries,
                                  retry_delay_seconds=DOWNLOAD_RETRY_DELAYS_S if retries else 0)


@task(name="dvc-push", task_run_name="dvc-push", cache_policy=NO_CACHE)
def push_outputs(project: Path, stages: list[str], remote: str | None) -> str:
    """`dvc push` the outputs of `stages` to `remote` (default: the project's default remote)."""
    logger = get_run_logger()
    args = ["push", *(["--remote", remote] if remote else []), *stages]
    code, lines = run_dvc(project, args, logger)
    if code != 0:
        raise StageFailed(f"dvc push failed: {failure_message(lines)}. The outputs are built and in the local DVC "
                          "cache; fix the remote (`dvc remote list`) and run `dvc push` again")
    return lines[-1] if lines else "pushed"


@flow(name="nmt-pipeline", description="Weekly retraining: the dvc.yaml stages through DVC, gates and BLEU "
      "as artifacts, then dvc push.", validate_parameters=True)
def pipeline(stages: list[str] | None = None, params: dict[str, Any] | None = None, push: bool = True,
             remote: str | None = None, project_dir: str | None = None,
             lock_timeout_s: float | None = DEFAULT_LOCK_TIMEOUT_S) -> PipelineReport:
    """Run the DVC pipeline stage by stage, then push its outputs.

    Args:
        stages: dvc.yaml stages to run (they run in dvc.yaml order); None runs all of them.
        params: overrides such as `{"train.max_steps": 1000}`, written into params.yaml first.
        push: `dvc push` the run's outputs after a successful run.
        remote: DVC remote to push to; None uses the project's default (`.dvcstore/`).
        project_dir: the project (folder with dvc.yaml); None is the repository of this file.
        lock_timeout_s: how long to wait for another running pipeline to finish (None: forever).
    """
    logger = get_run_logger()
    project = resolve_project(project_dir)
    all_specs = read_stages(project)
    selected = select_stages(all_specs, stages)
    report = PipelineReport(project=str(project), started=time.time())
    with pipeline_lock(lock_timeout_s):
        error: str | None = None
        try:
            report.overrides = apply_param_overrides(project / "params.yaml", params or {})
            if report.overrides:
                logger.warning("params.yaml now holds the overrides %s (commit or revert them)", report.overrides)
            logger.info("stages: %s", ", ".join(s.name for s in selected))
            for spec in selected:
                report.stages.append(stage_task(spec.name)(project, spec))
            if push:
                report.pushed = push_outputs(project, [s.name for s in selected], remote)
                logger.info("dvc push: %s", report.pushed)
        except BaseException as exc:
            error = str(exc) or type(exc).__name__
            raise
        finally:
            publish_run_artifacts(project, all_specs, selected, report, error)
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
