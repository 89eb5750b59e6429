"""The DVC pipeline as a Prefect flow: one task per `dvc.yaml` stage, gates as first-class results.

`pipeline` reads the stages from `dvc.yaml` at run time (file order) and runs each one as its
own Prefect task through `dvc repro --single-item STAGE`, so DVC decides what is up to date
and records lineage in `dvc.lock`; Prefect never bypasses DVC, and no stage calls Prefect.

- A stage that fails (a gate included) fails its task and the flow run, with the stage's
  own one-line message (`nmt STAGE: error: ...`), e.g.
  `stage 'validate' failed: raw gate failed: train: aligned: ...`.
- Every run publishes artifacts: one markdown artifact per gate report (`gate-raw`, ...), a
  `gates` table, a `metrics` table (every non-gate metrics file of `dvc.yaml`, BLEU
  included) and a `pipeline-summary` markdown, also when the run fails; a completed run
  also publishes its `dvc.lock` (`dvc-lock`), enough to `dvc pull` that model version.
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
import collections
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectNotFound
from prefect.tasks import Task

ROOT = Path(__file__).resolve().parents[1]
PIPELINE_LIMIT = "nmt-pipeline"  # Prefect global concurrency limit: one pipeline run at a time
DOWNLOAD_STAGE = "download"
DOWNLOAD_RETRIES = 2
DOWNLOAD_RETRY_DELAYS_S = [30, 120]
DEFAULT_LOCK_TIMEOUT_S = 600.0
_OUTPUT_TAIL = 400  # lines of DVC output kept for the failure message

_NMT_ERROR = re.compile(r"^nmt [\w-]+: error: (?P<msg>.+)$")

log = logging.getLogger(__name__)


class PipelineError(RuntimeError):
    """The flow cannot run as asked (bad project, stage name or override); the message says why."""


class StageFailed(RuntimeError):
    """A DVC stage exited non-zero; the message is the stage's own (a failed gate included)."""


class PipelineBusy(RuntimeError):
    """Another pipeline run holds the `nmt-pipeline` concurrency slot."""


@dataclass(frozen=True)
class StageSpec:
    """One `dvc.yaml` stage: its name, the files it declares, and which of them are metrics."""

    name: str
    outputs: tuple[str, ...]  # outs, metrics and plots paths, relative to the project
    metrics: tuple[str, ...]


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

    @property
    def ran(self) -> list[str]:
        return [s.stage for s in self.stages if s.ran]


# --- dvc.yaml ---------------------------------------------------------------------------------


def _entry_paths(entries: Any) -> list[str]:
    """Paths of a dvc.yaml `outs`/`metrics`/`plots` list (plain strings or `{path: options}`)."""
    paths: list[str] = []
    for entry in entries or []:
        if isinstance(entry, str):
            paths.append(entry)
        elif isinstance(entry, Mapping):
            paths.extend(str(k) for k in entry)
    return paths


def read_stages(project: Path) -> list[StageSpec]:
    """The stages of `project/dvc.yaml`, in file order (the order DVC's graph is written in)."""
    path = Path(project) / "dvc.yaml"
    if not path.is_file():
        raise PipelineError(f"{path}: not found; project_dir must be the nmt project root (the folder with dvc.yaml)")
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    stages = doc.get("stages") if isinstance(doc, Mapping) else None
    if not isinstance(stages, Mapping) or not stages:
        raise PipelineError(f"{path}: no `stages:` to run")
    specs = []
    for name, body in stages.items():
        body = body or {}
        if "foreach" in body or "matrix" in body:
            raise PipelineError(f"{path}: stage {name!r} uses foreach/matrix, which the flow does not expand; "
                                "list its stages explicitly")
        metrics = _entry_paths(body.get("metrics"))
        outputs = _entry_paths(body.get("outs")) + metrics + _entry_paths(body.get("plots"))
        specs.append(StageSpec(str(name), tuple(outputs), tuple(metrics)))
    return specs


def select_stages(available: Sequence[StageSpec], requested: Sequence[str] | None) -> list[StageSpec]:
    """`requested` stages in dvc.yaml order (all when None); unknown names are an error naming them."""
    if requested is None:
        return list(available)
    names = [s.name for s in available]
    unknown = [r for r in requested if r not in names]
    if unknown:
        raise PipelineError(f"unknown stage(s) {', '.join(map(repr, unknown))}; dvc.yaml has: {', '.join(names)}")
    if not requested:
        raise PipelineError(f"no stages selected; pass stages=None for all, or some of: {', '.join(names)}")
    return [s for s in available if s.name in set(requested)]


def resolve_project(project_dir: str | Path | None) -> Path:
    """The project to run: `project_dir`, else the repository this flows package lives in."""
    project = Path(project_dir).expanduser().resolve() if project_dir else ROOT
    read_stages(project)  # fails early, naming the path, if it is not a DVC project
    return project


# --- params overrides ---------------------------------------------------------------------------


def apply_param_overrides(params_file: Path, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Write `{"section.key": value}` overrides into params.yaml, keeping its comments.

    Like `dvc exp run -S`, the new values stay in params.yaml, so DVC re-runs exactly the
    stages that depend on them and `dvc.lock` records them. Every key must already exist
    (a typo is an error naming the known keys); stages check the types when they load it.
    Returns the applied overrides.
    """
    if not overrides:
        return {}
    from ruamel.yaml import YAML  # a DVC dependency; round-trips comments and key order

    params_file = Path(params_file)
    if not params_file.is_file():
        raise PipelineError(f"{params_file}: not found; cannot apply params overrides")
    rt = YAML()
    rt.preserve_quotes = True
    rt.width = 4096
    doc = rt.load(params_file.read_text(encoding="utf-8"))
    for key, value in overrides.items():
        *parents, leaf = str(key).split(".")
        node: Any = doc
        for depth, part in enumerate(parents):
            if not isinstance(node, MutableMapping) or part not in node:
                where = ".".join(parents[:depth]) or "the top level"
                raise PipelineError(f"params override {key!r}: {params_file.name} has no {part!r} under {where}")
            node = node[part]
        if not isinstance(node, MutableMapping) or leaf not in node:
            known = ", ".join(map(str, node)) if isinstance(node, Mapping) else "none"
            raise PipelineError(f"params override {key!r}: {params_file.name} has no key {leaf!r} there "
                                f"(known keys: {known})")
        node[leaf] = value
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=params_file.parent, prefix=".params-",
                                     suffix=".yaml", delete=False) as tmp:
        rt.dump(doc, tmp)
    os.replace(tmp.name, params_file)
    return dict(overrides)


# --- running DVC --------------------------------------------------------------------------------


def _dvc_executable() -> str:
    local = Path(sys.executable).with_name("dvc")  # the venv's dvc, next to the Python running the flow
    if local.is_file():
        return str(local)
    found = shutil.which("dvc")
    if not found:
        raise PipelineError("dvc not found next to the Python running the flow nor on PATH; install the project "
                            "(`make install`) and start Prefect workers from its .venv")
    return found


def stage_env() -> dict[str, str]:
    """The environment for DVC: the flow's own, with its venv's bin first so stages find `nmt`."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.setdefault("DVC_NO_ANALYTICS", "1")
    return env


def run_dvc(project: Path, args: Sequence[str], logger: logging.Logger | logging.LoggerAdapter) -> tuple[int, list[str]]:
    """Run `dvc ARGS` in `project`, streaming its output to `logger`; return (exit code, last lines)."""
    cmd = [_dvc_executable(), *args]
    logger.info("$ dvc %s  (in %s)", " ".join(args), project)
    tail: collections.deque[str] = collections.deque(maxlen=_OUTPUT_TAIL)
    proc = subprocess.Popen(cmd, cwd=project, env=stage_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", bufsize=1)
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip("\n").split("\r")[-1].rstrip()  # keep the last state of progress lines
            if line:
                tail.append(line)
                logger.info("%s", line)
        return proc.wait(), list(tail)
    finally:
        if proc.poll() is None:  # the flow was cancelled or interrupted: let the stage stop cleanly
            proc.terminate()  # SIGTERM: training writes a checkpoint and exits
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def failure_message(lines: Sequence[str]) -> str:
    """The stage's own error (`nmt STAGE: error: MSG` -> MSG), else DVC's last `ERROR:` line."""
    for line in reversed(lines):
        if m := _NMT_ERROR.match(line):
            return m.group("msg")
    for line in reversed(lines):
        if line.startswith("ERROR:"):
            return line.removeprefix("ERROR:").strip()
    return lines[-1] if lines else "no output"


def stage_ran(lines: Sequence[str], stage: str) -> bool:
    """Whether DVC executed the stage's command (False: it was up to date)."""
    return any(line.startswith(f"Running stage '{stage}'") for line in lines)


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
        gates += list(known.gates) if known else gate_summaries(project, spec)
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


# --- concurrency ------------------------------------------------------------------------------------


def ensure_pipeline_limit() -> None:
    """Create the one-slot global concurrency limit `nmt-pipeline` if missing (and re-arm it)."""
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate

    with get_client(sync_client=True) as client:
        try:
            existing = client.read_global_concurrency_limit_by_name(PIPELINE_LIMIT)
        except ObjectNotFound:
            client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=PIPELINE_LIMIT, limit=1))
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
    report = PipelineReport(project=str(project))
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
