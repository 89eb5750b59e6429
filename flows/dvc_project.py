"""The DVC side of the flow: the project's `dvc.yaml` stages, params overrides, running `dvc`.

`read_stages` reads the stages from `dvc.yaml` at run time (file order, the order DVC's graph
is written in); the flow runs each one through `run_dvc` (`dvc repro --single-item STAGE`),
so DVC decides what is up to date and records lineage in `dvc.lock`. `failure_message` turns
a failed stage's output into the stage's own one-line message (`nmt STAGE: error: ...`), e.g.
`raw gate failed: train: aligned: ...`; `stage_ran` tells a stage that ran from one that was
up to date. Params overrides are written into `params.yaml` (like `dvc exp run -S`), so the
workspace, `dvc.lock` and the pushed outputs agree. Nothing here imports Prefect.
"""

from __future__ import annotations

import collections
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
_OUTPUT_TAIL = 400  # lines of DVC output kept for the failure message

_NMT_ERROR = re.compile(r"^nmt [\w-]+: error: (?P<msg>.+)$")


class PipelineError(RuntimeError):
    """The flow cannot run as asked (bad project, stage name or override); the message says why."""


@dataclass(frozen=True)
class StageSpec:
    """One `dvc.yaml` stage: its name, the files it declares, and which of them are metrics."""

    name: str
    outputs: tuple[str, ...]  # outs, metrics and plots paths, relative to the project
    metrics: tuple[str, ...]


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
