"""A command's wall time and the peak memory of its whole process tree (bench/scale.py,
bench/clean_scale.py): the RSS of the command and all its descendants summed, sampled."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil


def run_measured(cmd: str, cwd: Path, sample_s: float) -> tuple[float, float]:
    """Run `cmd` in `cwd`; (wall seconds, peak MiB of the summed RSS of it and all its descendants)."""
    start = time.perf_counter()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # `python`: this one
    proc = subprocess.Popen(cmd, shell=True, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    root = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            total = 0
            for p in tree:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            peak = max(peak, total)
        except psutil.Error:
            pass
        time.sleep(sample_s)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"`{cmd}` failed in {cwd} (exit {proc.returncode}):\n{proc.stderr.read()[-3000:]}")
    return seconds, peak / 2**20
