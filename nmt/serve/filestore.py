"""The translated files `/translate_file` keeps for `/download_file`: a bounded folder.

Names nobody can guess (`secrets.token_urlsafe`, then the uploaded file's name made safe); a file
expires after `--files-keep-minutes`; the folder holds at most `--files-max` (the oldest go first).
Only files named like ours are ever deleted. Written atomically (temp file, then rename).
"""

from __future__ import annotations

import re
import secrets
import tempfile
import time
from pathlib import Path

from nmt.files.atomic import atomic_open

STORED = re.compile(r"[A-Za-z0-9_-]{32}\.[\w.-]{1,200}")  # token.original-name


class FileStore:
    """The translated files: a folder (a fresh temporary one by default), names unguessable,
    bounded in count and age."""

    def __init__(self, folder: Path | None, keep_s: float, max_files: int) -> None:
        self.folder = folder if folder is not None else Path(tempfile.mkdtemp(prefix="nmt-files-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        self.keep_s, self.max_files = keep_s, max_files

    def _stored(self) -> list[Path]:
        return sorted((p for p in self.folder.iterdir() if p.is_file() and STORED.fullmatch(p.name)),
                      key=lambda p: p.stat().st_mtime)

    def purge(self) -> None:
        """Expired files, then the oldest beyond `max_files - 1` (room for one more), are deleted."""
        now = time.time()
        stored = self._stored()
        for path in stored:
            if now - path.stat().st_mtime > self.keep_s:
                path.unlink(missing_ok=True)
        stored = self._stored()
        for path in stored[:max(0, len(stored) - self.max_files + 1)]:
            path.unlink(missing_ok=True)

    def put(self, original: str, data: bytes) -> str:
        self.purge()
        safe = re.sub(r"[^\w.-]", "_", Path(original).name)[-200:] or "file"
        name = f"{secrets.token_urlsafe(24)}.{safe}"
        with atomic_open(self.folder / name, "wb", encoding=None) as f:
            f.write(data)
        return name

    def get(self, name: str) -> Path | None:
        """The stored file of that name, if it exists and has not expired."""
        if not STORED.fullmatch(name):
            return None
        path = self.folder / name
        if not path.is_file() or time.time() - path.stat().st_mtime > self.keep_s:
            return None
        return path


