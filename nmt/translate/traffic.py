"""What is translated, as counts with no text in them: per direction, the aggregates of the sentences
translated and the languages detected (docs/serving.md: Watching the traffic). The record schema the
server counts its traffic in and the drift check counts the training data in (`nmt.drift`), here
beside the text path so that the drift stage depends on no server code.

An `Aggregate` is one direction's counts: sentences, the histogram of their lengths in source
pieces (as the model reads them, </s> included), the <unk> pieces (running total, and the
histogram of each sentence's share of them), the histogram of the translations' confidence, the
languages detected in its texts (`source: auto`, and a sample of the others) and the sentences
the loop guard changed. The bucket edges are the constants below, upper bounds as Prometheus's
`le` (a value lands in the first bucket whose edge is >= it; the last bucket is above the last
edge), so `/metrics`, the snapshots and the training data's profile (`aggregate()`) count alike.

`Traffic` holds the aggregates since its last `take()` for every served direction, thread-safe
(the batcher's inference threads add to it); `take()` hands them over as a `Snapshot` (its
window and its aggregates), `write_snapshot()` writes one atomically into `--stats-dir` keeping
the newest `--stats-keep`, and `read_snapshots()` sums a folder's snapshots within a time window.
"""

from __future__ import annotations

import bisect
import json
import math
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from nmt.errors import DataError
from nmt.files.atomic import atomic_write_text
from nmt.text.langid import UNDETERMINED

PIECES_EDGES = (2, 4, 8, 16, 32, 64, 128, 256)  # source pieces per sentence, </s> included
UNKNOWN_EDGES = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)  # a sentence's share of <unk> pieces
CONFIDENCE_EDGES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)  # a translation's confidence, 0-1
SNAPSHOT_GLOB = "traffic-*.json"
FORMAT = 1  # the snapshot's layout version


class Record(NamedTuple):
    """One sentence: its source pieces (</s> included), how many are <unk>, its translation's
    confidence (NaN: not scored) and the language detected in it (None: not detected)."""

    pieces: int
    unknown: int
    confidence: float = math.nan
    detected: str | None = None


def off_source(language: str, source: str) -> bool:
    """Whether a text detected as `language` is not in `source` (a text without letters is in any)."""
    return language not in (source, UNDETERMINED)


def bucket(edges: Sequence[float], value: float) -> int:
    """The bucket of `value`: the first whose edge is >= it; len(edges) above the last edge."""
    return bisect.bisect_left(edges, value)


def _zeros(edges: Sequence[float]) -> list[int]:
    return [0] * (len(edges) + 1)


def _histogram(edges: Sequence[float], counts: list[int]) -> dict[str, list]:
    return {"edges": list(edges), "counts": list(counts)}


def _counts(data: dict[str, Any], edges: Sequence[float], what: str) -> list[int]:
    """The counts of a histogram read back, checked against the edges this code counts with."""
    if list(data["edges"]) != list(edges) or len(data["counts"]) != len(edges) + 1:
        raise DataError(f"{what}: bucket edges {data['edges']} are not this version's {list(edges)}")
    return [int(c) for c in data["counts"]]


@dataclass
class Aggregate:
    """One direction's counts (see the module's docstring); not thread-safe by itself."""

    source: str  # the package's source language: a detected language other than it (and "und") is off
    sentences: int = 0
    pieces: list[int] = field(default_factory=lambda: _zeros(PIECES_EDGES))
    pieces_sum: int = 0
    unknown_sum: int = 0  # <unk> pieces
    unknown_share: list[int] = field(default_factory=lambda: _zeros(UNKNOWN_EDGES))
    confidence: list[int] = field(default_factory=lambda: _zeros(CONFIDENCE_EDGES))  # scored sentences only
    confidence_sum: float = 0.0
    languages: dict[str, int] = field(default_factory=dict)  # detected language -> texts
    guarded: int = 0  # sentences whose best hypothesis the loop guard replaced

    def add(self, record: Record | tuple) -> None:
        """Count one sentence (and its detected language, if any)."""
        pieces, unknown, confidence, detected = Record(*record)
        self.sentences += 1
        self.pieces[bucket(PIECES_EDGES, pieces)] += 1
        self.pieces_sum += pieces
        self.unknown_sum += unknown
        self.unknown_share[bucket(UNKNOWN_EDGES, unknown / pieces if pieces else 0.0)] += 1
        if not math.isnan(confidence):
            self.confidence[bucket(CONFIDENCE_EDGES, confidence)] += 1
            self.confidence_sum += confidence
        if detected is not None:
            self.detect(detected)

    def detect(self, language: str, n: int = 1) -> None:
        """Count `n` texts detected as `language`."""
        self.languages[language] = self.languages.get(language, 0) + n

    @property
    def other_language(self) -> int:
        """Texts detected as a language other than the source (texts without letters not counted)."""
        return sum(n for lang, n in self.languages.items() if off_source(lang, self.source))

    def merge(self, other: Aggregate) -> None:
        """Add `other`'s counts (the same direction's) to these."""
        for name in ("sentences", "pieces_sum", "unknown_sum", "confidence_sum", "guarded"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("pieces", "unknown_share", "confidence"):
            setattr(self, name, [a + b for a, b in zip(getattr(self, name), getattr(other, name))])
        for lang, n in other.languages.items():
            self.detect(lang, n)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "sentences": self.sentences,
                "pieces": _histogram(PIECES_EDGES, self.pieces) | {"sum": self.pieces_sum},
                "unknown": {"pieces": self.unknown_sum, "share": _histogram(UNKNOWN_EDGES, self.unknown_share)},
                "confidence": _histogram(CONFIDENCE_EDGES, self.confidence) | {"sum": round(self.confidence_sum, 6)},
                "languages": dict(sorted(self.languages.items())), "other_language": self.other_language,
                "guarded": self.guarded}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Aggregate:
        return cls(source=data["source"], sentences=int(data["sentences"]),
                   pieces=_counts(data["pieces"], PIECES_EDGES, "pieces"), pieces_sum=int(data["pieces"]["sum"]),
                   unknown_sum=int(data["unknown"]["pieces"]),
                   unknown_share=_counts(data["unknown"]["share"], UNKNOWN_EDGES, "unknown share"),
                   confidence=_counts(data["confidence"], CONFIDENCE_EDGES, "confidence"),
                   confidence_sum=float(data["confidence"]["sum"]),
                   languages={str(k): int(v) for k, v in data["languages"].items()}, guarded=int(data["guarded"]))


def aggregate(records: Iterable[Record | tuple], source: str) -> Aggregate:
    """The aggregates of `records` (pieces, unknown, confidence, detected language), as the server
    counts its traffic: for the training data's profile, in the same buckets."""
    out = Aggregate(source)
    for record in records:
        out.add(record)
    return out


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat()


def _unix(value: str | datetime | float) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    stamp = datetime.fromisoformat(value) if isinstance(value, str) else value
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).timestamp()


@dataclass
class Snapshot:
    """The aggregates of a time window (unix seconds), per direction; `parts`: the snapshots summed."""

    start: float
    end: float
    directions: dict[str, Aggregate]
    parts: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "start": _iso(self.start), "end": _iso(self.end),
                "seconds": round(self.end - self.start, 3),
                "directions": {d: a.to_json() for d, a in sorted(self.directions.items())}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Snapshot:
        return cls(_unix(data["start"]), _unix(data["end"]),
                   {d: Aggregate.from_json(a) for d, a in data["directions"].items()})

    def merge(self, other: Snapshot) -> None:
        """Add `other` (another window) to this one: the window spans both."""
        self.start, self.end = min(self.start, other.start), max(self.end, other.end)
        self.parts += other.parts
        for direction, counts in other.directions.items():
            mine = self.directions.setdefault(direction, Aggregate(counts.source))
            mine.merge(counts)


class Traffic:
    """Every served direction's aggregates since the last `take()`; thread-safe."""

    def __init__(self, sources: dict[str, str], now: float | None = None) -> None:
        self.sources = dict(sources)  # direction -> its package's source language
        self._lock = threading.Lock()
        self._start = time.time() if now is None else now
        self._window = self._fresh()

    def _fresh(self) -> dict[str, Aggregate]:
        return {direction: Aggregate(source) for direction, source in self.sources.items()}

    def add(self, direction: str, records: Iterable[Record | tuple], guarded: int = 0) -> None:
        """Count translated sentences of `direction`, `guarded` of them changed by the loop guard."""
        records = list(records)
        with self._lock:
            counts = self._window[direction]
            for record in records:
                counts.add(record)
            counts.guarded += guarded

    def detected(self, direction: str, languages: Iterable[str]) -> None:
        """Count the languages detected in texts sent to `direction`."""
        languages = list(languages)
        with self._lock:
            for language in languages:
                self._window[direction].detect(language)

    def take(self, now: float | None = None) -> Snapshot:
        """The counts since the last `take()` (or the start) and their window; a new window begins."""
        now = time.time() if now is None else now
        with self._lock:
            window, start = self._window, self._start
            self._window, self._start = self._fresh(), now
        return Snapshot(start, now, window)


def snapshot_name(snapshot: Snapshot) -> str:
    """The file name of a snapshot, sorting by the end of its window."""
    return "traffic-" + datetime.fromtimestamp(snapshot.end, UTC).strftime("%Y%m%dT%H%M%S%fZ") + ".json"


def write_snapshot(folder: Path, snapshot: Snapshot, keep: int) -> Path:
    """Write `snapshot` into `folder` atomically (a temporary file renamed), then delete all but
    the newest `keep` snapshots there; returns its path."""
    path = Path(folder) / snapshot_name(snapshot)
    atomic_write_text(path, json.dumps(snapshot.to_json(), indent=1) + "\n")
    for old in sorted(Path(folder).glob(SNAPSHOT_GLOB))[:-keep]:
        old.unlink(missing_ok=True)
    return path


def read_snapshots(folder: Path, start: str | datetime | float | None = None,
                   end: str | datetime | float | None = None) -> Snapshot | None:
    """The sum of the snapshots in `folder` whose window lies within [start, end] (either open
    when None; ISO 8601 text, datetimes, or unix seconds); None when there is none."""
    lo = -math.inf if start is None else _unix(start)
    hi = math.inf if end is None else _unix(end)
    total: Snapshot | None = None
    for path in sorted(Path(folder).glob(SNAPSHOT_GLOB)):
        try:
            snapshot = Snapshot.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError, DataError) as exc:
            raise DataError(f"{path}: not a traffic snapshot of this version ({exc})") from None
        if lo <= snapshot.start and snapshot.end <= hi:
            if total is None:
                total = snapshot
            else:
                total.merge(snapshot)
    return total
