"""Atomic outputs: a stage's output either appears complete or not at all.

Files are written to a temporary sibling and renamed over the target; directories are
built in a temporary sibling and swapped in with one atomic exchange (Linux `renameat2`
`RENAME_EXCHANGE`), so the target is the old folder or the new one at every instant; where the
system cannot exchange, two renames (old aside, new in), and a kill between them is undone by the
next write of the target, which puts the old folder back (`sweep`). A failure (exception, Ctrl-C) removes the
temporary and leaves the previous output exactly as it was; a kill cannot run that cleanup, so a
temporary carries its writer's PID and the next write of the same target removes those whose writer
is gone (`sweep`). A full disk (ENOSPC, EDQUOT) is one
`OutOfSpace` line naming the file being written, the space it needed (when known) and the space left.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import glob
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from nmt.errors import OutOfSpace
from nmt.files.killpoints import kill_point

_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?:(?P<pid>\d+)-)?[0-9a-f]{12}\.(?:tmp|old)$")


def _sibling(path: Path, suffix: str) -> Path:
    """A fresh hidden name beside `path`, with this process's PID (the caller creates it exclusively)."""
    return path.parent / f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:12]}{suffix}"


def staging_path(path: Path) -> Path:
    """A hidden name beside `path` to build it under before it is checked and renamed over `path`; what
    killed writers left there before is removed first (`sweep`), as this one will be if it is killed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep(path)
    return _sibling(path, ".tmp")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def sweep(path: Path) -> list[Path]:
    """Remove the temporaries that killed writes of `path` left beside it (their writer is gone, or they
    predate PIDs in the names); returns what was removed. A live writer's temporary is left alone."""
    path, removed = Path(path), []
    for leftover in sorted(path.parent.glob(f".{glob.escape(path.name)}.*")):
        m = _LEFTOVER.match(leftover.name)
        if m is None or m["name"] != path.name or (m["pid"] and _alive(int(m["pid"]))):
            continue
        if leftover.name.endswith(".old") and leftover.is_dir() and not os.path.lexists(path):
            os.replace(leftover, path)  # a swap by two renames killed between them: the old folder back
            continue
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)
        removed.append(leftover)
    return removed


def dead_leftovers(folder: Path, target: re.Pattern[str]) -> list[Path]:
    """The temporaries in `folder` of killed writes of targets whose names match `target` (their writer is
    gone): for a folder whose targets are never written twice (the server's files), which `sweep` of a
    target never reaches."""
    found = []
    for leftover in Path(folder).iterdir():
        m = _LEFTOVER.match(leftover.name)
        if m is not None and target.fullmatch(m["name"]) and not (m["pid"] and _alive(int(m["pid"]))):
            found.append(leftover)
    return found


_FULL = (errno.ENOSPC, errno.EDQUOT)


def _mib(n: float) -> str:
    return f"{n / (1 << 20):,.1f} MiB"


def out_of_space(path: Path, needed: int | None = None) -> OutOfSpace:
    """The one line for a full disk while writing `path`: what, how much, how much is left, what to do."""
    try:
        free = shutil.disk_usage(Path(path).parent).free
    except OSError:
        free = None
    need = f"it needs {_mib(needed)}" if needed is not None else "it did not fit"
    left = f", {_mib(free)} free there" if free is not None else ""
    return OutOfSpace(f"{path}: out of disk space while writing it ({need}{left}); the previous file is kept. "
                      "Free space (old runs under models/checkpoints, `dvc gc` for DVC's cache) and re-run")


@contextlib.contextmanager
def atomic_open(path: Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary sibling of `path` for writing; rename it over `path` on success.

    The temporary is created with mode 0666 filtered by the process umask at that moment, as
    `open()` would create `path` itself (`tempfile.mkstemp` would make it 0600, and reading the
    umask needs `os.umask`, which sets it process-wide: not safe beside other threads)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep(path)
    while True:
        tmp = _sibling(path, ".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno in _FULL:
            raise out_of_space(path) from None
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically; when the disk cannot hold it, one `OutOfSpace` line up front."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if shutil.disk_usage(path.parent).free < len(data):
        raise out_of_space(path, len(data))
    try:
        with atomic_open(path, "wb") as fh:
            fh.write(data)
    except OutOfSpace:
        raise out_of_space(path, len(data)) from None


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (UTF-8)."""
    with atomic_open(path, "w") as fh:
        fh.write(text)


@contextlib.contextmanager
def staged_dir(path: Path) -> Iterator[Path]:
    """Yield an empty temporary directory that replaces directory `path` on success.

    The swap is one atomic exchange where the system has it (`exchange`), else two renames
    (old -> trash, new -> path; a kill between them is undone by the next `sweep`), so readers never
    see a half-written directory; on failure the old directory is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep(path)
    tmp = _fresh_dir(path, ".tmp")
    try:
        yield tmp
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno in _FULL:
            inside = Path(exc.filename) if exc.filename else tmp  # the staged name, told as its final one
            raise out_of_space(path / inside.relative_to(tmp) if inside.is_relative_to(tmp) else path) from None
        raise
    kill_point("staged-swap")
    if path.exists() and exchange(tmp, path):
        kill_point("staged-swapped")
        shutil.rmtree(tmp, ignore_errors=True)  # the old folder, under the temporary's name
        return
    trash = None
    if path.exists():
        trash = _sibling(path, ".old")
        os.replace(path, trash)
        kill_point("staged-aside")
    os.replace(tmp, path)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2
_NO_EXCHANGE = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV)


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step (`renameat2(..., RENAME_EXCHANGE)`, Linux 3.15+ on ext4, XFS,
    Btrfs, tmpfs ...); False where the C library or the file system cannot, nothing changed then."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in _NO_EXCHANGE:
        return False
    raise OSError(err, os.strerror(err), str(b))


def _fresh_dir(path: Path, suffix: str) -> Path:
    """Create a new empty directory beside `path`, mode 0777 filtered by the umask (as `mkdir`)."""
    while True:
        tmp = _sibling(path, suffix)
        try:
            tmp.mkdir(0o777)
            return tmp
        except FileExistsError:
            continue
