"""One run of a stage on the same files at a time, on a shared machine.

`dvc repro` holds DVC's own lock on the project, so two `dvc repro` or two scheduled flows never
run a stage twice at once. A stage started by hand (`python -m nmt.train.stage ...`, `nmt train`)
while another run of it is writing the same paths would interleave two runs' outputs and resume
state. `held(name, paths)` takes an exclusive `flock` on a file named by the stage and its
resolved paths, in the system's temporary folder (never beside the outputs, so nothing is added
to the project): the kernel drops the lock when the holder ends, however it ends (SIGKILL, OOM,
power cut), so a lock is never stale. A second run fails at once, naming the first one's PID,
start time and folder.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from nmt.errors import ConfigError

log = logging.getLogger(__name__)

LOCK_DIR_ENV = "NMT_LOCK_DIR"  # where the lock files live (default: <system temp>/nmt-locks-<uid>)


def lock_path(name: str, paths: Iterable[Path | str]) -> Path:
    """The lock file of stage `name` run on `paths` (resolved, so two spellings of one file meet). The
    processes of one distributed run (torchrun's `RANK`) are one run: each rank holds its own lock, so a
    second run on the same files still meets the first at every rank."""
    rank = os.environ.get("RANK", "")
    spec = "\n".join([name, *sorted(str(Path(p).resolve()) for p in paths), *([f"rank {rank}"] if rank else [])])
    root = Path(os.environ.get(LOCK_DIR_ENV) or Path(tempfile.gettempdir()) / f"nmt-locks-{os.getuid()}")
    return root / f"{name}-{hashlib.sha256(spec.encode()).hexdigest()[:16]}.lock"


@contextmanager
def held(name: str, paths: Iterable[Path | str]) -> Iterator[Path]:
    """Hold the lock of stage `name` on `paths` for the block; `ConfigError` if another process holds it."""
    path = lock_path(name, paths)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:  # a read-only or full temporary folder must not stop the stage
        log.warning("cannot make the run lock %s (%s); running without it", path, exc)
        fd = -1
    if fd < 0:
        yield path
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another process"
            raise ConfigError(f"another run of the {name} stage on the same files is under way ({holder}); two at "
                              f"once would mix their outputs: wait for it to end or stop it, then run again "
                              f"(lock: {path})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"PID {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}, in {Path.cwd()}".encode(), 0)
        yield path
    finally:
        os.close(fd)  # closing drops the lock
