"""A dvc.lock a kill cannot cut short (nmt/files/dvclock.py, issue 78): a run killed while DVC writes the lock
loses no entry of the stages it did not run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from nmt.errors import DataError
from nmt.files import dvclock
from support.scratch import dvc, project_env

STAGES = {name: {"cmd": f"python -c \"open('{name}.out', 'w').write(open('{name}.in').read())\"",
                 "deps": [f"{name}.in"], "outs": [f"{name}.out"]} for name in ("a", "b", "c")}
# DVC's YAML writer made slow in the dvc process: it writes half the lock, says so, and waits to be killed
SLOW_WRITE = """\
import os, io, pathlib, time
if os.environ.get("NMT_TEST_SLOW_LOCK"):
    import dvc.utils.serialize._yaml as y
    dump = y._dump
    def slow(data, stream):
        if not str(getattr(stream, "name", "")).endswith("dvc.lock"):
            return dump(data, stream)
        buf = io.StringIO(); dump(data, buf); text = buf.getvalue()
        stream.write(text[: len(text) // 2]); stream.flush()
        pathlib.Path(os.environ["NMT_TEST_SLOW_LOCK"]).write_text("half written")
        time.sleep(120)
    y._dump = slow
"""


def _project(root: Path) -> tuple[Path, dict]:
    root.mkdir()
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": STAGES}))
    for name in STAGES:
        (root / f"{name}.in").write_text(f"{name}\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    env = project_env()
    assert dvc(root, env, "init", "-q").returncode == 0
    return root, env


def _guard(root: Path, env: dict, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "nmt.files.dvclock", "--lock", "dvc.lock", "--",
                             str(Path(sys.executable).parent / "dvc"), *args], cwd=root, env=env,
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


@pytest.mark.fault
def test_a_dvc_repro_killed_while_it_writes_the_lock_loses_no_entry(tmp_path: Path) -> None:
    root, env = _project(tmp_path / "project")
    first = _guard(root, env, "repro")
    assert first.wait(timeout=300) == 0, first.stdout.read()
    whole = yaml.safe_load((root / "dvc.lock").read_text())["stages"]
    assert set(whole) == {"a", "b", "c"}
    (root / "c.in").write_text("changed\n")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SLOW_WRITE)
    marker = tmp_path / "writing"
    run = _guard(root, env | {"PYTHONPATH": str(hooks), "NMT_TEST_SLOW_LOCK": str(marker)}, "repro", "c")
    deadline = time.monotonic() + 300
    while not marker.exists():
        assert run.poll() is None and time.monotonic() < deadline, run.stdout.read() if run.stdout else ""
        time.sleep(0.2)
    os.killpg(run.pid, signal.SIGKILL)  # the whole run, the guard with it, in the middle of the lock's write
    run.wait(timeout=60)
    cut = (root / "dvc.lock").read_text()
    assert len(cut) < len(yaml.safe_dump({"stages": whole}))  # what the kill left: the lock cut short
    again = _guard(root, env, "status", "a", "b")
    out = again.communicate(timeout=300)[0]
    assert again.returncode == 0, out
    mended = yaml.safe_load((root / "dvc.lock").read_text())["stages"]
    assert mended["a"] == whole["a"] and mended["b"] == whole["b"]  # the untouched stages' entries, as they were
    assert "up to date" in out and "taken back from its verified copy" in out


def test_a_cut_lock_is_mended_from_the_verified_copy_and_good_entries_kept(tmp_path: Path) -> None:
    lock = tmp_path / "dvc.lock"
    entries = {n: {"cmd": s["cmd"], "deps": [{"path": d, "md5": "0" * 32} for d in s["deps"]],
                   "outs": [{"path": o, "md5": "1" * 32} for o in s["outs"]]} for n, s in STAGES.items()}
    lock.write_text(yaml.safe_dump({"schema": "2.0", "stages": entries}, sort_keys=False))
    assert dvclock.mend(tmp_path, lock) == []  # whole: saved as the verified copy
    newer = dict(entries, c={**entries["c"], "outs": [{"path": "c.out", "md5": "2" * 32}]})
    text = yaml.safe_dump({"schema": "2.0", "stages": newer}, sort_keys=False)
    lock.write_text(text[: text.index("  b:")] + "  b:\n    cmd: x\n    deps:\n    - path: b.in\n")  # cut inside b
    assert dvclock.mend(tmp_path, lock) == ["b", "c"]
    assert yaml.safe_load(lock.read_text())["stages"] == entries  # a kept, b and c from the copy
    lock.write_text(yaml.safe_dump({"schema": "2.0", "stages": newer}, sort_keys=False))
    assert dvclock.mend(tmp_path, lock) == [] and yaml.safe_load(lock.read_text())["stages"] == newer


def test_a_damaged_lock_without_a_verified_copy_is_refused_with_the_recovery(tmp_path: Path) -> None:
    lock = tmp_path / "pairs" / "dvc.lock"
    lock.parent.mkdir()
    lock.write_text("schema: '2.0'\nstages:\n  a:\n    cmd: [unclosed\n")
    with pytest.raises(DataError, match=r"pairs/dvc.lock: damaged .* `git checkout pairs/dvc.lock`"):
        dvclock.mend(tmp_path, lock)
    copy = dvclock.copy_of(tmp_path, lock)  # a copy whose SHA-256 does not match is no copy
    copy.parent.mkdir(parents=True)
    copy.write_text("# sha256: " + "0" * 64 + "\nschema: '2.0'\nstages: {}\n")
    with pytest.raises(DataError, match="no verified copy"):
        dvclock.mend(tmp_path, lock)
