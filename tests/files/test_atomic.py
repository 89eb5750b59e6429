"""nmt.files.atomic: outputs appear whole or not at all, with the modes `open()` would give them."""

from __future__ import annotations

import importlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nmt.files import atomic


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    """Set the process umask for one test and put the old one back."""
    old = os.umask(0o022)
    os.umask(old)

    def set_umask(value: int) -> None:
        os.umask(value)

    yield set_umask
    os.umask(old)


def test_import_leaves_the_process_umask_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Setting the umask is process-wide: another thread creating a file meanwhile would get it."""
    calls: list[int] = []
    real = os.umask
    monkeypatch.setattr(os, "umask", lambda mask: calls.append(mask) or real(mask))
    importlib.reload(atomic)
    assert calls == []


def test_modes_follow_the_umask_in_force_when_writing(tmp_path: Path, umask) -> None:
    umask(0o077)  # set after the module was imported
    atomic.atomic_write_text(tmp_path / "out.txt", "x")
    with atomic.staged_dir(tmp_path / "outdir") as tmp:
        (tmp / "f").write_text("y")
    assert stat.S_IMODE((tmp_path / "out.txt").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "outdir").stat().st_mode) == 0o700
    umask(0o022)
    atomic.atomic_write_text(tmp_path / "out.txt", "z")
    with atomic.staged_dir(tmp_path / "outdir") as tmp:
        (tmp / "f").write_text("w")
    assert stat.S_IMODE((tmp_path / "out.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "outdir").stat().st_mode) == 0o755
    assert (tmp_path / "out.txt").read_text() == "z" and (tmp_path / "outdir" / "f").read_text() == "w"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("good")
    with pytest.raises(RuntimeError), atomic.atomic_open(target) as fh:
        fh.write("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "good"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_failed_directory_leaves_the_old_one_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    (target / "old").write_text("good")
    with pytest.raises(RuntimeError), atomic.staged_dir(target) as tmp:
        (tmp / "new").write_text("half")
        raise RuntimeError("interrupted")
    assert [p.name for p in target.iterdir()] == ["old"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    with atomic.staged_dir(target) as tmp:
        (tmp / "new").write_text("whole")
    assert [p.name for p in target.iterdir()] == ["new"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # the old directory went too


@pytest.mark.fault
def test_a_killed_writers_temporaries_go_with_the_next_write_a_live_ones_stay(tmp_path: Path) -> None:
    """A SIGKILL runs no cleanup: the file's and the folder's temporaries stay until the next write of the
    same target removes them; a temporary whose writer still runs is left alone."""
    import signal
    import subprocess
    import sys

    script = ("import os, signal, sys\nfrom pathlib import Path\nfrom nmt.files import atomic\n"
              "root = Path(sys.argv[1])\n"
              "with atomic.staged_dir(root / 'out') as d:\n    (d / 'part').write_text('half')\n"
              "    with atomic.atomic_open(root / 'out.json') as fh:\n        fh.write('{')\n"
              "        fh.flush(); os.kill(os.getpid(), signal.SIGKILL)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path)], timeout=60)
    assert proc.returncode == -signal.SIGKILL
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 2 and all(n.startswith((".out.", ".out.json.")) for n in left)
    live = tmp_path / f".out.json.{os.getpid()}-0123456789ab.tmp"  # a writer that is still running: this one
    live.write_text("in progress")
    atomic.atomic_write_text(tmp_path / "out.json", "{}")
    with atomic.staged_dir(tmp_path / "out") as d:
        (d / "part").write_text("whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", "out.json", live.name])
    assert atomic.sweep(tmp_path / "out.json") == []  # the live one stays


_SWAP = ("import sys\nfrom pathlib import Path\nfrom nmt.files import atomic\n"
         "if sys.argv[2] == 'renames':\n    atomic.exchange = lambda a, b: False  # a system without the exchange\n"
         "with atomic.staged_dir(Path(sys.argv[1]) / 'out') as d:\n    (d / 'part').write_text('new')\n")


@pytest.mark.fault
@pytest.mark.parametrize(("way", "point", "after"), [
    ("exchange", "staged-swap", "old"), ("exchange", "staged-swapped", "new"),
    ("renames", "staged-swap", "old"), ("renames", "staged-aside", None)])
def test_a_folder_swap_killed_at_any_point_leaves_old_or_new(tmp_path: Path, way: str, point: str,
                                                              after: str | None) -> None:
    """A SIGKILL inside the swap: with the atomic exchange the folder is the old one or the new one at
    every instant; with two renames a kill between them leaves no folder for a moment (`after` None) and
    the next write of the target puts the old one back before anything else (issue 80: before, that
    write's sweep deleted the old folder and a reader found nothing)."""
    import signal
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()
    (out / "part").write_text("old")
    env = {**os.environ, "NMT_KILL_AT": point}
    proc = subprocess.run([sys.executable, "-c", _SWAP, str(tmp_path), way], env=env, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    if after is None:
        assert not out.exists()
    else:
        assert (out / "part").read_text() == after
    atomic.sweep(out)  # what the next write of `out` does first
    assert (out / "part").read_text() == (after or "old")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary of the killed writer left


def test_the_exchange_swaps_two_folders_in_one_step(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "x").write_text("a"), (b / "x").write_text("b")
    if not atomic.exchange(a, b):
        pytest.skip("this file system has no RENAME_EXCHANGE (staged_dir falls back to two renames)")
    assert (a / "x").read_text() == "b" and (b / "x").read_text() == "a"
