"""The DVC side of the flow: the stages of `dvc.yaml`, params overrides, running `dvc`.

`read_stages`: dvc.yaml's stages in file order. `run_dvc`: a `dvc` command, its output to a logger (its processes
die with it; a timeout; the locks mended: nmt/files/dvclock.py). `failure_message`: a failed stage's own line.
Params overrides go into params.yaml, comments kept (like `dvc exp run -S`), taken back after the run (`snapshot`,
`restore`); `save_experiment` records a run as a DVC experiment, which `dvc exp show` lists and the registry tags.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from flows.tools import dvc_command, git, tool_env
from nmt.files import dvclock

ROOT = Path(__file__).resolve().parents[1]
_NMT_ERROR = re.compile(r"^nmt [\w-]+: error: (?P<msg>.+)$")
TIMEOUT_ENV, TIMEOUT_S = "NMT_STAGE_TIMEOUT_S", 12 * 3600.0  # the longest one dvc command (a stage) may run, in s
STOP_GRACE_S = 120.0  # a run cancelled or timed out: from SIGTERM (training writes a checkpoint) to SIGKILL
DRAIN_S = 2.0  # dvc has exited: how long its output may still come (a dead stage's leftovers may hold it open)


class PipelineError(RuntimeError):
    """The flow cannot run as asked (bad project, stage name or override); the message says why."""


@dataclass(frozen=True)
class StageSpec:
    """One dvc.yaml stage: its name, the files it declares, and which of them are metrics."""

    name: str
    outputs: tuple[str, ...]  # outs, metrics and plots, relative to the project
    metrics: tuple[str, ...]
    uncached: tuple[str, ...] = ()  # the outputs with `cache: false` (DVC cannot check them out)


def _paths(entries: Any) -> list[str]:
    """Paths of a dvc.yaml `outs` / `metrics` / `plots` list (strings or `{path: options}`)."""
    return [p for e in entries or [] for p in ([e] if isinstance(e, str) else map(str, e))]


def _uncached(entries: Any) -> list[str]:
    return [str(p) for e in entries or [] if isinstance(e, Mapping) for p, opts in e.items()
            if isinstance(opts, Mapping) and opts.get("cache") is False]


def read_stages(project: Path) -> list[StageSpec]:
    path = Path(project) / "dvc.yaml"
    if not path.is_file():
        raise PipelineError(f"{path}: not found; project_dir must be the nmt project root (the folder with dvc.yaml)")
    stages = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("stages")
    if not isinstance(stages, Mapping) or not stages:
        raise PipelineError(f"{path}: no `stages:` to run")
    specs = []
    for name, body in stages.items():
        if "foreach" in body or "matrix" in body:
            raise PipelineError(f"{path}: stage {name!r} uses foreach/matrix, which the flow does not expand")
        metrics = _paths(body.get("metrics"))
        declared = [body.get(kind) for kind in ("outs", "metrics", "plots")]
        specs.append(StageSpec(str(name), tuple(_paths(body.get("outs")) + metrics + _paths(body.get("plots"))),
                               tuple(metrics), tuple(p for entries in declared for p in _uncached(entries))))
    return specs


def select_stages(available: Sequence[StageSpec], requested: Sequence[str] | None) -> list[StageSpec]:
    """`requested` stages in dvc.yaml order (all when None); unknown names are an error naming them."""
    names = [s.name for s in available]
    unknown = [r for r in requested or [] if r not in names]
    if unknown or requested == []:
        raise PipelineError(f"unknown stage(s) {', '.join(map(repr, unknown)) or '(none given)'}; "
                            f"dvc.yaml has: {', '.join(names)}")
    return [s for s in available if requested is None or s.name in requested]


def resolve_project(project_dir: str | Path | None) -> Path:
    """`project_dir`, else the repository this package lives in; checked to be a DVC project."""
    project = Path(project_dir).expanduser().resolve() if project_dir else ROOT
    read_stages(project)
    return project


def apply_param_overrides(params_file: Path, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Write `{"section.key": value}` into params.yaml (comments kept); every key must exist."""
    if not overrides:
        return {}
    from ruamel.yaml import YAML  # a DVC dependency; round-trips comments and key order

    rt = YAML()
    rt.preserve_quotes, rt.width = True, 4096
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
            raise PipelineError(f"params override {key!r}: {params_file.name} has no key {leaf!r} there "
                                f"(known keys: {', '.join(map(str, node)) if isinstance(node, Mapping) else 'none'})")
        node[leaf] = value
    tmp = params_file.with_name(f".{params_file.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        rt.dump(doc, fh)
    os.replace(tmp, params_file)
    return dict(overrides)


SNAPSHOT = Path(".dvc/tmp/nmt-snapshot")  # in the project; DVC's tmp folder is git-ignored


@dataclass(frozen=True)
class Snapshot:
    """What a run with params overrides changes, saved before it so that it can be taken back.
    Kept on disk (`SNAPSHOT`) until taken back, so a killed run is taken back by the next one."""

    root: Path  # copies of the uncached outputs under outputs/, params.yaml and dvc.lock under files/
    files: dict[str, bool]  # params.yaml, dvc.lock -> whether it existed
    outputs: dict[str, bool]  # each uncached output -> whether it existed


def snapshot(project: Path, specs: Sequence[StageSpec]) -> Snapshot:
    """Save params.yaml, dvc.lock and copies of the `cache: false` outputs (reports, checkpoints):
    DVC restores cached outputs from its cache, these only from here."""
    root = project / SNAPSHOT
    shutil.rmtree(root, ignore_errors=True)
    files, outputs = dict[str, bool](), dict[str, bool]()
    for kind, names, found in (("files", ("params.yaml", "dvc.lock"), files),
                               ("outputs", dict.fromkeys(o for s in specs for o in s.uncached), outputs)):
        for rel in names:
            src, dst = project / rel, root / kind / rel
            found[rel] = src.exists()
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst)
            elif src.is_file():
                shutil.copy2(src, dst)
    (root / "manifest.json").write_text(json.dumps({"files": files, "outputs": outputs}))  # last: complete
    return Snapshot(root, files, outputs)


def recover(project: Path, logger: logging.Logger | logging.LoggerAdapter) -> bool:
    """Take back the overrides of a run that was killed before it could; True if there was one."""
    root = project / SNAPSHOT
    manifest = root / "manifest.json"
    if not manifest.is_file():
        shutil.rmtree(root, ignore_errors=True)  # a snapshot cut short: the run never started
        return False
    data = json.loads(manifest.read_text())
    logger.warning("an earlier run with params overrides did not finish: putting params.yaml, dvc.lock and "
                   "the outputs back as they were before it")
    restore(project, Snapshot(root, data["files"], data["outputs"]), logger)
    return True


def restore(project: Path, saved: Snapshot, logger: logging.Logger | logging.LoggerAdapter) -> None:
    """Put back what `snapshot` saved, then `dvc checkout` the cached outputs dvc.lock records."""
    for kind, entries in (("files", saved.files), ("outputs", saved.outputs)):
        for rel, existed in entries.items():
            path, copy = project / rel, saved.root / kind / rel
            if existed and not copy.exists():
                continue  # already moved back by an earlier, interrupted restore
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
            if existed:
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(copy, path)
    code, lines = run_dvc(project, ["checkout", "--force", "--quiet"], logger)
    shutil.rmtree(saved.root, ignore_errors=True)
    if code != 0:
        logger.warning("params.yaml and dvc.lock are back as before the run, but `dvc checkout` failed (%s): "
                       "run `dvc checkout` (or `dvc pull`) to bring the outputs in line", failure_message(lines))


def run_files(project: Path, specs: Sequence[StageSpec]) -> list[str]:
    """The files a run adds that git should keep: dvc.lock, DVC's .gitignore files, and the
    declared outputs git tracks (`cache: false` metrics and reports) that it does not yet."""
    declared = [o.rstrip("/") for s in specs for o in s.outputs]
    new = [f for f in _git(project, "ls-files", "--others", "--exclude-standard", "-z").split("\0") if f]
    return [f for f in new if f == "dvc.lock" or f.endswith(".gitignore")
            or any(f == o or f.startswith(o + "/") for o in declared)]


def save_experiment(project: Path, name: str, specs: Sequence[StageSpec],
                    logger: logging.Logger | logging.LoggerAdapter) -> str:
    """`dvc exp save -n NAME` of the workspace and the run's new files; returns the experiment's commit."""
    files = [a for f in run_files(project, specs) for a in ("--include-untracked", f)]
    code, lines = run_dvc(project, ["exp", "save", "--force", "-n", name, *files], logger)
    if code != 0:
        raise PipelineError(f"dvc exp save failed: {failure_message(lines)}")
    baseline = _git(project, "rev-parse", "HEAD").strip()
    return _git(project, "rev-parse", "--verify", f"refs/exps/{baseline[:2]}/{baseline[2:]}/{name}").strip()


def check_git_ready(project: Path) -> None:
    """Saving an experiment and tagging a version commit: a repository with a commit and an identity."""
    _git(project, "rev-parse", "--verify", "HEAD")
    for key in ("user.name", "user.email"):
        if not _git(project, "config", "--get", key, check=False).strip():
            raise PipelineError(f"git {key} is not set in {project}: experiments and registry tags are commits; "
                                f"`git config {key} ...` (or pass registry=False / --no-register)")


def _git(project: Path, *args: str, check: bool = True) -> str:
    result = git(project, *args)
    if result.returncode != 0 and check:
        raise PipelineError(f"git {' '.join(args)} in {project}: {result.stderr.strip()} (the registry needs the "
                            "project to be a git repository with a first commit)")
    return result.stdout


def stage_timeout_s() -> float:
    """The timeout of one dvc command (one stage): env NMT_STAGE_TIMEOUT_S in seconds, else `TIMEOUT_S`."""
    raw = os.environ.get(TIMEOUT_ENV) or str(TIMEOUT_S)
    if not re.fullmatch(r"\d+(\.\d*)?", raw.strip()) or not float(raw) > 0:
        raise PipelineError(f"{TIMEOUT_ENV}={raw!r}: expected a number of seconds > 0")
    return float(raw)


def run_dvc(project: Path, args: Sequence[str], logger: logging.Logger | logging.LoggerAdapter,
            timeout_s: float | None = None) -> tuple[int, list[str]]:
    """`dvc ARGS` in `project` by this interpreter, its bin first on PATH (stages find the venv's python:
    flows/tools.py); output to `logger`. Returns (exit code, last 400 lines). DVC runs in a process group of its own,
    killed once DVC has exited (no dead stage's leftovers hold the output); past `timeout_s` stopped like a cancel."""
    limit, name = stage_timeout_s() if timeout_s is None else timeout_s, " ".join(["dvc", *args])
    dvclock.mend_all(project)  # a lock cut short by a run killed while DVC wrote it: mended from its copy
    logger.info("$ %s  (in %s)", name, project)
    tail: collections.deque[str] = collections.deque(maxlen=400)
    proc = subprocess.Popen(dvc_command(*args), cwd=project, env=tool_env(), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, errors="replace", bufsize=1, start_new_session=True)
    reader = threading.Thread(target=contextvars.copy_context().run, args=(_read, proc.stdout, tail, logger),
                              daemon=True)  # in this run's context: Prefect's logger needs it
    reader.start()
    try:
        proc.wait(timeout=limit)
        reader.join(DRAIN_S)  # the rest of the output; not for ever: a dead stage's leftovers may hold it open
        if proc.returncode < 0 and not any(x.startswith("ERROR:") for x in list(tail)):  # dvc itself killed
            tail.append(f"ERROR: {name}: exited with {proc.returncode}")
    except subprocess.TimeoutExpired:
        _stop(proc, reader, STOP_GRACE_S)
        tail.append(f"nmt flow: error: {name} timed out after {limit:g} s ({TIMEOUT_ENV}); stopped")
    finally:  # cancelled: SIGTERM lets training write a checkpoint; then what is left of the run (a stage's pool)
        _stop(proc, reader, STOP_GRACE_S if proc.poll() is None else 0)
        dvclock.mend_all(project)
    return proc.returncode, list(tail)



def _read(stream: Any, tail: collections.deque[str], logger: logging.Logger | logging.LoggerAdapter) -> None:
    for raw in stream:  # the reader thread: each line (a progress line's last state) to `tail` and `logger`
        if line := raw.rstrip("\n").split("\r")[-1].rstrip():
            tail.append(line)
            logger.info("%s", line)


def _stop(proc: subprocess.Popen, reader: threading.Thread, grace_s: float) -> None:
    """SIGTERM to the run's processes, up to `grace_s` for them to end (the output's end), then SIGKILL."""
    try:
        with contextlib.suppress(ProcessLookupError):  # none left
            os.killpg(proc.pid, signal.SIGTERM)
            reader.join(grace_s)
    finally:  # a second Ctrl-C during the wait included
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def failure_message(lines: Sequence[str]) -> str:
    """The stage's own error (`nmt STAGE: error: MSG` -> MSG), else DVC's last `ERROR:` line (a killed one's signal)."""
    for line in reversed(lines):
        if m := _NMT_ERROR.match(line):
            return m.group("msg")
    errors = [line.removeprefix("ERROR:").strip() for line in lines if line.startswith("ERROR:")]
    message = errors[-1] if errors else (lines[-1] if lines else "no output")
    if not (m := re.search(r"exited with (-\d+|137)(?!\d)", message)):  # DVC's words for a signal (137: a shell's)
        return message
    number = signal.SIGKILL if m[1] == "137" else -int(m[1])
    name = next((s.name for s in signal.Signals if s == number), f"signal {number}")
    return f"killed by {name}{' (out of memory?)' if number == signal.SIGKILL else ''}: {message[:m.end()]}"


def stage_ran(lines: Sequence[str], stage: str) -> bool:
    """Whether DVC executed the stage's command (False: it was up to date)."""
    return any(line.startswith(f"Running stage '{stage}'") for line in lines)
