"""The fine-tune benches' child commands (bench/common/finetune_runs.py's `run`) end with the bench: a SIGKILLed
sweep leaves no training running behind it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")

# the bench: run() on a child that writes its pid, then sleeps far longer than the test waits
BENCH = """
import sys
from pathlib import Path
from bench.common.finetune_runs import run
pid_file = sys.argv[1]
run(["python", "-c", f"import os, pathlib, time; pathlib.Path({pid_file!r}).write_text(str(os.getpid())); "
     "time.sleep(600)"], Path.cwd())
"""


def alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_killed_bench_takes_its_stage_command_with_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    root = Path(__file__).resolve().parents[2]
    bench = subprocess.Popen([sys.executable, "-c", BENCH, str(pid_file)], cwd=root)
    try:
        assert wait_for(lambda: pid_file.is_file() and pid_file.read_text().strip() != "", 60), "no child started"
        child = int(pid_file.read_text())
        assert alive(child)
        bench.send_signal(signal.SIGKILL)
        bench.wait(30)
        assert wait_for(lambda: not alive(child), 30), f"child {child} outlived its SIGKILLed bench"
    finally:
        bench.kill()
        if pid_file.is_file() and pid_file.read_text().strip():
            pid = int(pid_file.read_text())
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
