"""Opt-in sampling of the texts the server is asked, for a future evaluation set
(`--sample-inputs RATE --sample-dir DIR`; off by default: without them no text is written anywhere).

A sampled text is appended to the day's JSONL file in the folder (`inputs-YYYY-MM-DD.jsonl`, UTC),
one line {"date", "direction", "text"}: the source text, its direction and the day only, never an
api key, a client address or a header. The folder stays bounded: files last written more than
`--sample-max-days` ago are deleted (at start, then hourly), and a sample that would take the
files over `--sample-max-mb` first deletes the oldest other days' files, or, when today's file
alone is that large, is not written (counted as `full`). Only this module's `inputs-*.jsonl`
files are ever deleted.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from nmt.errors import DataError

log = logging.getLogger("nmt.serve")
PATTERN = "inputs-*.jsonl"
PRUNE_EVERY_S = 3600.0  # how often files past their age are looked for, besides at start
DAY_S = 86400.0


def _day(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d")


class InputSampler:
    """Each text is written with probability `rate` (seeded: the same texts in the same order are
    sampled alike); thread-safe."""

    def __init__(self, folder: Path, rate: float, max_bytes: int, max_days: float, seed: int = 0) -> None:
        self.folder, self.rate, self.max_bytes, self.max_age_s = Path(folder), rate, max_bytes, max_days * DAY_S
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DataError(f"--sample-dir {folder}: cannot create it ({exc.strerror or exc})") from None
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._pruned = 0.0
        self._full = False  # the last sample found no room (warned once)
        self.size = 0  # bytes in the folder's sample files
        self.prune()

    def _files(self) -> list[Path]:
        """The sample files, oldest day first."""
        return sorted(self.folder.glob(PATTERN))

    def prune(self, now: float | None = None) -> None:
        """Delete the files last written longer than --sample-max-days ago; count what is left."""
        now = time.time() if now is None else now
        size = 0
        for path in self._files():
            stat = path.stat()
            if now - stat.st_mtime > self.max_age_s:
                path.unlink(missing_ok=True)
                log.info("sampled inputs: deleted %s (older than --sample-max-days)", path.name)
            else:
                size += stat.st_size
        self.size, self._pruned = size, now

    def _make_room(self, need: int, today: Path) -> bool:
        """Delete the oldest other days' files until `need` more bytes fit; whether they do."""
        for path in self._files():
            if self.size + need <= self.max_bytes:
                break
            if path != today:
                self.size -= path.stat().st_size
                path.unlink(missing_ok=True)
                log.info("sampled inputs: deleted %s (the folder reached --sample-max-mb)", path.name)
        return self.size + need <= self.max_bytes

    def offer(self, direction: str, texts: Sequence[str], now: float | None = None) -> tuple[int, int]:
        """Sample among `texts` (sent to `direction`); returns (written, not written for lack of room)."""
        now = time.time() if now is None else now
        full = 0
        with self._lock:
            chosen = [t for t in texts if self._rng.random() < self.rate and t.strip()]
            if not chosen:
                return 0, 0
            if now - self._pruned > PRUNE_EVERY_S:
                self.prune(now)
            day = _day(now)
            today = self.folder / f"inputs-{day}.jsonl"
            lines, pending = [], 0
            for text in chosen:
                line = json.dumps({"date": day, "direction": direction, "text": text}, ensure_ascii=False) + "\n"
                size = len(line.encode("utf-8"))
                if self._make_room(pending + size, today):
                    lines.append(line)
                    pending += size
                else:
                    full += 1
            if lines:
                with today.open("a", encoding="utf-8") as fh:
                    fh.write("".join(lines))
                self.size += pending
            if full and not self._full:
                log.warning("sampled inputs: %s is at --sample-max-mb; samples are dropped until it has room",
                            self.folder)
            self._full = bool(full)
        return len(lines), full
