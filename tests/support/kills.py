"""A stage SIGKILLed at a named point through DVC, and what it must leave: for the fault tests of every pipeline.

`killed_leaves_outputs(project, env, stage, point)`: `dvc repro --force --single-item STAGE` with
`NMT_KILL_AT=POINT` fails with the signal; `dvc.lock` and every output are as they were (the train
stages' checkpoints and metric series are their resume state, written as they go); no process of the
run is left. `files`, `leftovers` and `processes_in` are the checks' pieces.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from nmt.files.killpoints import ENV
from support.scratch import dvc

RESUME_STATE = ("checkpoints/", "/live/")  # the train stages write these as they go: path parts they contain


def files(project: Path) -> dict[str, str]:
    """Every file of the workspace (not git's or DVC's own) by path: its SHA-256."""
    out = {}
    for path in sorted(project.rglob("*")):
        rel = path.relative_to(project).as_posix()
        if path.is_file() and not rel.startswith((".git/", ".dvc/")):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def leftovers(project: Path) -> list[str]:
    return [p for p in files(project) if Path(p).name.startswith(".") and Path(p).name.endswith((".tmp", ".old"))
            or ".tmp/" in p or ".old/" in p]


def processes_in(project: Path) -> list[int]:
    """PIDs whose working directory is in the project (a stage, its pool, DVC)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")).is_relative_to(project):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def killed_leaves_outputs(project: Path, env: dict, stage: str, point: str, lock: str = "dvc.lock") -> None:
    """Kill `stage` at `point` and check what it left (see the module's docstring)."""
    before, locked = files(project), (project / lock).read_text()
    killed = dvc(project, {**env, ENV: point}, "repro", "--force", "--single-item", stage)
    said = killed.stdout + killed.stderr  # DVC runs the command through $SHELL or /bin/sh: bash execs it (-9),
    assert killed.returncode != 0 and re.search(r"exited with (-9|137)\b", said), said  # dash reports 128 + 9
    assert (project / lock).read_text() == locked
    after = files(project)
    changed = sorted(k for k in {*before, *after} if before.get(k) != after.get(k)
                     and not any(part.startswith(".") for part in Path(k).parts)
                     and not any(s in k for s in RESUME_STATE))
    assert changed == [], f"outputs changed by the killed run at {point}: {changed}"
    assert processes_in(project) == []
