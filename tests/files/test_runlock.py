"""Two runs of a stage on the same files at once: the second fails at once, naming the first; a killed
holder's lock is free again (nmt/files/runlock.py, used by every stage's `stage_main`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from nmt.data import vocab
from nmt.errors import ConfigError
from nmt.files.runlock import LOCK_DIR_ENV, held

pytestmark = pytest.mark.fault

HOLDER = """
import sys, time
from pathlib import Path
from nmt.files.runlock import held
with held(sys.argv[1], [Path(p) for p in sys.argv[2:]]):
    print("holding", flush=True)
    time.sleep(120)
"""


@pytest.fixture()
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    return tmp_path / "locks"


def hold(name: str, *paths: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, name, *map(str, paths)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
    return proc


def test_a_second_run_on_the_same_files_fails_naming_the_first_and_a_killed_one_leaves_no_lock(
        tmp_path: Path, lock_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "data" / "tokens", tmp_path / "data" / "vocab"
    first = hold("vocab", a, b)
    try:
        monkeypatch.chdir(tmp_path)
        with pytest.raises(ConfigError, match=rf"another run of the vocab stage .*PID {first.pid}, started .*"
                                              rf"in .*wait for it to end or stop it"):
            with held("vocab", [Path("data/vocab"), Path("data/../data/tokens")]):  # the same files, spelt otherwise
                pass
        with held("vocab", [a, tmp_path / "other"]), held("binarize", [a, b]):  # other files, another stage: free
            pass
    finally:
        os.kill(first.pid, signal.SIGKILL)  # as an OOM kill ends it: no cleanup
        first.wait()
    with held("vocab", [a, b]) as path:  # the kernel dropped the dead holder's lock
        assert path.parent == lock_dir and f"PID {os.getpid()}" in path.read_text()


def test_every_stage_takes_the_lock_on_its_paths(tmp_path: Path, lock_dir: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    tokens, out, reports = tmp_path / "tokens", tmp_path / "vocab", tmp_path / "reports"
    first = hold("vocab", tokens, out, reports)
    try:
        status = vocab.main(["--tokens", str(tokens), "--out", str(out), "--reports", str(reports)])
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    err = capsys.readouterr().err
    assert status == 1 and f"nmt vocab: error: another run of the vocab stage on the same files is under way " \
                           f"(PID {first.pid}" in err
    assert not out.exists()  # it stopped before reading anything


def test_the_ranks_of_one_distributed_run_are_one_run(tmp_path: Path, lock_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """torchrun starts the train stage once per rank on the same files: each rank its own lock."""
    a = tmp_path / "model.pt"
    monkeypatch.setenv("RANK", "0")
    with held("train", [a]):
        monkeypatch.setenv("RANK", "1")
        with held("train", [a]):  # rank 1 of the same run
            monkeypatch.setenv("RANK", "0")
            with pytest.raises(ConfigError, match="another run of the train stage"):  # a second run's rank 0
                with held("train", [a]):
                    pass
