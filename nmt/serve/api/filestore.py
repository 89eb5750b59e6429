"""The translated files `/translate_file` keeps for `/download_file`: a bounded folder.

Names nobody can guess (`secrets.token_urlsafe`, then the uploaded file's name made safe); a file
expires after `--files-keep-minutes` and is deleted by a purge that runs on a timer (`run_purge`,
started with the app; every quarter of the keep time, at most every minute), when a file is stored,
and at shutdown (`close`), which also removes the folder when it is the server's own temporary one.
The folder holds at most `--files-max` (the oldest go first). A file belongs to the api key that
made it (`owner`): `get` with another key finds nothing. Only files named like ours are ever
deleted. Written atomically (temp file, then rename); a temporary that a killed server left is
deleted by the next purge.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import re
import secrets
import shutil
import tempfile
import time
from pathlib import Path

from nmt.files.atomic import atomic_open, dead_leftovers

log = logging.getLogger("nmt.serve")
STORED = re.compile(r"[A-Za-z0-9_-]{32}\.[\w.-]{1,200}")  # token.original-name
PURGE_EVERY_MAX_S = 60.0


def _digest(key: str | None) -> bytes:
    return b"" if key is None else hashlib.sha256(key.encode()).digest()


class FileStore:
    """The translated files: a folder (a fresh temporary one by default), names unguessable,
    bounded in count and age, each readable with the key that made it."""

    def __init__(self, folder: Path | None, keep_s: float, max_files: int) -> None:
        self.temporary = folder is None
        self.folder = folder if folder is not None else Path(tempfile.mkdtemp(prefix="nmt-files-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        self.keep_s, self.max_files = keep_s, max_files
        self.owners: dict[str, bytes] = {}  # stored name -> sha256 of its key (b"": made without one)

    def _stored(self) -> list[Path]:
        found = []
        for p in self.folder.iterdir():
            try:
                if STORED.fullmatch(p.name) and p.is_file():
                    found.append((p.stat().st_mtime, p))
            except FileNotFoundError:  # deleted meanwhile
                continue
        return [p for _, p in sorted(found)]

    def _delete(self, path: Path) -> None:
        path.unlink(missing_ok=True)
        self.owners.pop(path.name, None)

    def purge(self, room: int = 0) -> int:
        """Expired files, then the oldest beyond `max_files - room`, are deleted, and the temporaries of
        writes a kill cut short (a writer that is gone: `dead_leftovers`); returns how many files."""
        for leftover in dead_leftovers(self.folder, STORED):
            leftover.unlink(missing_ok=True)
        now = time.time()
        stored, gone = self._stored(), 0
        for path in stored:
            try:
                expired = now - path.stat().st_mtime > self.keep_s
            except FileNotFoundError:
                expired = True
            if expired:
                self._delete(path)
                gone += 1
        stored = self._stored()
        for path in stored[:max(0, len(stored) - self.max_files + room)]:
            self._delete(path)
            gone += 1
        return gone

    @property
    def purge_every_s(self) -> float:
        return min(PURGE_EVERY_MAX_S, self.keep_s / 4)

    async def run_purge(self) -> None:
        """Purge every `purge_every_s` until cancelled (started with the app, on a worker thread)."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.purge_every_s)
            try:
                gone = await loop.run_in_executor(None, self.purge)
            except OSError as exc:  # the folder gone or unreadable: said, and tried again next time
                log.warning("translated files in %s not purged: %s", self.folder, exc)
                continue
            if gone:
                log.debug("purged %d translated file(s) from %s", gone, self.folder)

    def close(self) -> None:
        """At shutdown: the server's own temporary folder removed, or the expired files of --files-dir."""
        if self.temporary:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.owners.clear()
            return
        try:
            self.purge()
        except OSError as exc:
            log.warning("translated files in %s not purged at shutdown: %s", self.folder, exc)

    def put(self, original: str, data: bytes, key: str | None = None) -> str:
        """Store `data` for the caller with api key `key` (None: no keys); returns the stored name."""
        self.purge(room=1)
        safe = re.sub(r"[^\w.-]", "_", Path(original).name)[-200:] or "file"
        name = f"{secrets.token_urlsafe(24)}.{safe}"
        with atomic_open(self.folder / name, "wb", encoding=None) as f:
            f.write(data)
        self.owners[name] = _digest(key)
        return name

    def get(self, name: str, key: str | None = None) -> Path | None:
        """The stored file of that name, if it exists, has not expired and was made with `key`
        (a file this process did not store has no owner: found only when `key` is None)."""
        if not STORED.fullmatch(name):
            return None
        if not hmac.compare_digest(self.owners.get(name, b""), _digest(key)):
            return None
        path = self.folder / name
        try:
            if not path.is_file() or time.time() - path.stat().st_mtime > self.keep_s:
                return None
        except FileNotFoundError:
            return None
        return path
