"""A stage that dies or hangs does not hang the flow (flows/dvc_project.py `run_dvc`).

A SIGKILLed (OOM-killed) data stage left its pool processes alive, holding DVC's stdout open:
`run_dvc` read that output to its end and waited for ever, and no alert came. Now DVC runs in a
process group of its own: `run_dvc` returns once DVC has exited (its output drained for a moment),
kills what is left of the group, and the failure says which signal killed the stage. A command
that runs past its timeout is stopped (SIGTERM first: training checkpoints) and the failure says so.
Here a small script stands in for `dvc`, and one test runs real DVC on a stage that kills itself
with its pool running. The pool processes' own death with their parent: tests/data/test_tokenize_shards.py.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows import dvc_project as dp
from flows.tools import dvc_command, tool_env

pytestmark = [pytest.mark.fault,
              pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")]
LOG = logging.getLogger("test-stage-death")

# a `dvc` whose stage leaves a process behind holding the output open, then dies: the stage's
# leftover prints its pid; with `hang`, the command sleeps (until the timeout) instead of dying
FAKE_DVC = '''
import os, signal, subprocess, sys, time
leftover = ("import os, signal, sys, time; "
            "signal.signal(signal.SIGTERM, lambda *_: (print('checkpoint written', flush=True), sys.exit(0))); "
            "print('leftover', os.getpid(), flush=True); time.sleep(60)")
subprocess.Popen([sys.executable, "-c", leftover])
time.sleep(0.5)  # the leftover's pid is out first
print("Running stage 'tokenize':", flush=True)
if sys.argv[1] == "hang":
    time.sleep(60)
print("ERROR: failed to reproduce 'tokenize': failed to run: python -m nmt.data.tokenize, exited with -9", flush=True)
if sys.argv[1] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
sys.exit(255)
'''

# a stage with a pool of 2 (nmt.data.shards) that kills itself once both workers are busy
POOL_STAGE = '''
import os, signal, threading, time
from pathlib import Path
from nmt.data import shards

class Busy:
    def __call__(self, job):
        Path("pids", str(os.getpid())).touch()
        time.sleep(60)

def die_when_busy():
    while len(os.listdir("pids")) < 2:
        time.sleep(0.05)
    print("nmt tokenize: warning: about to be killed", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

if __name__ == "__main__":
    os.makedirs("pids", exist_ok=True)
    threading.Thread(target=die_when_busy, daemon=True).start()
    for _ in shards.ordered_map((shards.ShardJob("x", "en", i, 1, b"a\\n") for i in range(4)), Busy, (), 2):
        pass
'''


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


def wait_dead(pids: list[int], timeout_s: float = 10) -> list[int]:
    """The pids still alive after up to `timeout_s` (killed then, so that no test leaks them)."""
    deadline = time.monotonic() + timeout_s
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [p for p in pids if alive(p)]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    return survivors


def fake_dvc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str) -> None:
    script = tmp_path / "fake_dvc.py"
    script.write_text(FAKE_DVC)
    monkeypatch.setattr(dp, "dvc_command", lambda *args: [sys.executable, str(script), mode])


def leftover_pid(lines: list[str]) -> int:
    return next(int(line.split()[1]) for line in lines if line.startswith("leftover "))


@pytest.mark.parametrize("mode", ["exits", "killed"])
def test_run_dvc_returns_when_dvc_ends_though_a_leftover_holds_its_output(
        mode: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`exits`: DVC reports the stage's death and exits; `killed`: DVC itself is SIGKILLed after its report."""
    fake_dvc(monkeypatch, tmp_path, mode)
    started = time.monotonic()
    code, lines = dp.run_dvc(tmp_path, ["repro", "--single-item", "tokenize"], LOG, timeout_s=60)
    took = time.monotonic() - started
    assert took < 10, f"run_dvc took {took:.1f} s"
    assert code == (255 if mode == "exits" else -signal.SIGKILL)
    assert not wait_dead([leftover_pid(lines)], timeout_s=1), "the stage's leftover outlived the run"
    message = dp.failure_message(lines)
    assert message.startswith("killed by SIGKILL (out of memory?): failed to reproduce 'tokenize'"), message


def test_run_dvc_times_out_stopping_the_run_sigterm_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_dvc(monkeypatch, tmp_path, "hang")
    started = time.monotonic()
    code, lines = dp.run_dvc(tmp_path, ["repro", "--single-item", "tokenize"], LOG, timeout_s=2)
    took = time.monotonic() - started
    assert 2 <= took < 10, f"run_dvc took {took:.1f} s"
    assert code != 0
    assert "checkpoint written" in lines  # SIGTERM first: training gets to write its checkpoint
    assert not wait_dead([leftover_pid(lines)], timeout_s=1)
    assert dp.failure_message(lines) == ("dvc repro --single-item tokenize timed out after 2 s "
                                         f"({dp.TIMEOUT_ENV}); stopped")


def test_stage_timeout_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(dp.TIMEOUT_ENV, raising=False)
    assert dp.stage_timeout_s() == dp.TIMEOUT_S
    monkeypatch.setenv(dp.TIMEOUT_ENV, "90.5")
    assert dp.stage_timeout_s() == 90.5
    for bad in ("0", "-5", "1h", "nan"):
        monkeypatch.setenv(dp.TIMEOUT_ENV, bad)
        with pytest.raises(dp.PipelineError, match=f"{dp.TIMEOUT_ENV}='{bad}': expected a number of seconds > 0"):
            dp.stage_timeout_s()


@pytest.mark.parametrize("line,expected", [
    ("ERROR: failed to reproduce 'binarize': failed to run: sh -c x, exited with 137",
     "killed by SIGKILL (out of memory?): failed to reproduce 'binarize'"),
    ("ERROR: failed to reproduce 'train': failed to run: python -m nmt.train, exited with -15",
     "killed by SIGTERM: failed to reproduce 'train'"),
    ("ERROR: failed to reproduce 'train': failed to run: python -m nmt.train, exited with 1",
     "failed to reproduce 'train'"),
    # unbuffered stderr: the pool's resource tracker wrote into DVC's line before its newline
    ("ERROR: failed to reproduce 'vocab': failed to run: python -m nmt.data.vocab, exited with -9/usr/lib/python3.11/"
     "multiprocessing/resource_tracker.py:254: UserWarning: resource_tracker: There appear to be 5 leaked semaphores",
     "killed by SIGKILL (out of memory?): failed to reproduce 'vocab': failed to run: python -m nmt.data.vocab, "
     "exited with -9"),
])
def test_failure_message_names_the_signal_that_killed_a_stage(line: str, expected: str) -> None:
    message = dp.failure_message(["Running stage 'x':", line])
    assert message.startswith(expected) and "exited with" in message and "UserWarning" not in message


def test_a_stage_killed_with_its_pool_running_fails_at_once_leaving_nothing(tmp_path: Path) -> None:
    """Real DVC, a real pool (nmt.data.shards): the issue's OOM kill of a data stage."""
    (tmp_path / "stage.py").write_text(POOL_STAGE)
    (tmp_path / "dvc.yaml").write_text("stages:\n  tokenize:\n    cmd: python stage.py\n")
    init = subprocess.run(dvc_command("init", "--no-scm", "-q"), cwd=tmp_path, env=tool_env(), capture_output=True,
                          text=True, timeout=60, check=False)
    assert init.returncode == 0, init.stderr
    started = time.monotonic()
    code, lines = dp.run_dvc(tmp_path, ["repro", "--single-item", "tokenize"], LOG, timeout_s=120)
    took = time.monotonic() - started
    workers = [int(p.name) for p in (tmp_path / "pids").iterdir()]
    assert len(workers) == 2
    assert not wait_dead(workers, timeout_s=2), "pool processes outlived the stage"
    assert code != 0 and took < 30, (code, took, lines)
    message = dp.failure_message(lines)
    assert message.startswith("killed by SIGKILL (out of memory?): failed to reproduce 'tokenize': "), message
    assert re.search(r"exited with (-9|137)$", message), message  # not what the stage's leftovers wrote after it
