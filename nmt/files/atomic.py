"""Atomic outputs: a stage's output either appears complete or not at all.

Files are written to a temporary sibling and renamed over the target; directories are
built in a temporary sibling and swapped in. A failure (exception, Ctrl-C) removes the
temporary and leaves the previous output exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read the process umask: temp files are created 0600, outputs should not be
FILE_MODE, DIR_MODE = 0o666 & ~_UMASK, 0o777 & ~_UMASK


@contextlib.contextmanager
def atomic_open(path: Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary sibling of `path` for writing; rename it over `path` on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (UTF-8)."""
    with atomic_open(path, "w") as fh:
        fh.write(text)


@contextlib.contextmanager
def staged_dir(path: Path) -> Iterator[Path]:
    """Yield an empty temporary directory that replaces directory `path` on success.

    The swap is two renames (old -> trash, new -> path), so readers never see a
    half-written directory; on failure the old directory is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    os.chmod(tmp, DIR_MODE)
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    trash = None
    if path.exists():
        trash = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
        os.rmdir(trash)
        os.replace(path, trash)
    os.replace(tmp, path)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)
