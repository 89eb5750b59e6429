"""The programs the flows start: DVC through this interpreter, git from PATH.

DVC runs as `python -m dvc` under the interpreter that runs the flow (`sys.executable`), so
`.venv/bin/python -m flows.experiments` finds the venv's DVC with the venv's `bin` not on
PATH; that `bin` also goes first on PATH for the stage commands DVC starts (`python -m
nmt...`). git is a system program. A program that is missing is a `ToolMissing` whose
message says what to install, not a `FileNotFoundError` traceback.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path


class ToolMissing(RuntimeError):
    """DVC is not installed for this interpreter, or git is not on PATH; the message says what to do."""


def tool_env() -> dict[str, str]:
    """This process's environment with the interpreter's `bin` first on PATH and DVC analytics off."""
    bin_dir = Path(sys.executable).parent
    return {**os.environ, "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]),
            "DVC_NO_ANALYTICS": "1"}


def dvc_command(*args: str) -> list[str]:
    """The command line of `dvc ARGS` run by this interpreter."""
    if importlib.util.find_spec("dvc") is None:
        raise ToolMissing(f"dvc is not installed for {sys.executable}: run with the project's venv "
                          "(.venv/bin/python) or `pip install -e .` into this one")
    return [sys.executable, "-m", "dvc", *args]


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git ARGS` in `repo`, output captured, exit code not checked."""
    try:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise ToolMissing("git is not on PATH: install git (DVC experiments and registry versions are "
                          "git commits and tags)") from None
