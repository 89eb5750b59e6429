"""Streaming helpers of the validate stage: a split's two files read side by side in chunks of
lines, a fixed-size uniform sample of a stream, and an exact count of repeated items by digest.
Each holds a chunk or a fixed number of rows, except `Digests`: 16 bytes per item.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from nmt.data.shards import decode_shard, read_shards
from nmt.errors import DataError

Chunk = tuple[int, list[str], list[str]]  # (first_line, side_a, side_b)
Pair = tuple[int, str, str]  # (line or translation-unit number, side a, side b)
CHUNK_LINES = 20_000  # lines read (and numericalised) at a time by validate, mixing and binarize: their memory,
# whatever the corpus (~1.5 MB of text per side)



def digest64(text: str, person: bytes = b"") -> int:
    """`text`'s 8-byte BLAKE2b digest (UTF-8, personalised by `person`) as an unsigned int: the one
    fingerprint of a sentence, an n-gram or a pair in the data stages."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8, person=person).digest(), "little")

def chunked(pairs: Iterable[Pair], chunk_lines: int) -> Iterator[Chunk]:
    """The chunking all readers share: `chunk_lines` numbered pairs at a time."""
    if chunk_lines < 1:
        raise ValueError(f"chunk_lines must be at least 1, got {chunk_lines}")
    pairs = iter(pairs)
    while batch := list(itertools.islice(pairs, chunk_lines)):
        numbers, side_a, side_b = zip(*batch)
        yield numbers[0], list(side_a), list(side_b)


class Skips(Counter):
    """Rows a reader skipped, counted by kind, with the first `FIRST` line numbers of each kind (a
    TMX's: the numbers of its translation units): what the validate report lists."""

    FIRST = 5

    def __init__(self, counts: Iterable[str] = ()) -> None:  # Counter's copy() and + pass a Counter
        super().__init__(counts)
        self.lines: dict[str, list[int]] = {}

    def skip(self, kind: str, line: int) -> None:
        self[kind] += 1
        first = self.lines.setdefault(kind, [])
        if len(first) < self.FIRST:
            first.append(line)


def skip(skipped: Counter, kind: str, line: int) -> None:
    """Count a skipped row in `skipped` (with its line number when it is a `Skips`)."""
    if isinstance(skipped, Skips):
        skipped.skip(kind, line)
    else:
        skipped[kind] += 1


class Unreadable(Exception):
    """A file could not be read: missing, a corrupt gzip, invalid UTF-8 (`error` says which line)."""

    def __init__(self, path: Path, error: DataError) -> None:
        super().__init__(str(error))
        self.path, self.error = path, error


def _chunks(path: Path, lang: str, chunk_lines: int) -> Iterator[list[str]]:
    try:
        for job in read_shards(path, lang, chunk_lines):
            yield decode_shard(job)  # a bad line's error names its absolute line number
    except DataError as exc:
        raise Unreadable(path, exc) from None


def side_by_side(files: dict[str, Path], chunk_lines: int) -> Iterator[tuple[list[str], list[str]]]:
    """The lines of two files (plain or gzip), `chunk_lines` at a time from each, in step ([] for
    a file that has ended). `Unreadable` names the problem a whole-file read of the first file,
    then the second, would meet first: the first file's wins, so after the second file fails,
    the first is still read to its end."""
    (la, pa), (lb, pb) = files.items()
    first, second = _chunks(pa, la, chunk_lines), _chunks(pb, lb, chunk_lines)
    pending: Unreadable | None = None
    while True:
        ca = next(first, None)  # the first file's problem ends the reading at once
        cb = None
        if pending is None:
            try:
                cb = next(second, None)
            except Unreadable as exc:
                pending = exc
        if ca is None and cb is None:
            break
        if pending is None:
            yield ca or [], cb or []
    if pending is not None:
        raise pending


class Reservoir:
    """A uniform random sample of up to `size` rows of a stream (algorithm R): the first `size`
    rows, then row i (from 0) replaces a random slot with probability size/(i+1). One draw per
    row past `size`, in stream order, so the sample does not depend on how the stream is chunked;
    a stream of at most `size` rows is kept whole, in order."""

    def __init__(self, size: int, seed: int) -> None:
        self.size, self.seen, self.rows = size, 0, list[tuple]()
        self._rng = random.Random(seed)

    def extend(self, columns: Sequence[list]) -> None:
        """Offer the rows of one chunk, given as equally long columns."""
        n = len(columns[0])
        fill = min(max(self.size - self.seen, 0), n)
        self.rows.extend(zip(*(c[:fill] for c in columns)))
        draw = self._rng.randrange
        for k in range(fill, n):
            slot = draw(self.seen + k + 1)
            if slot < self.size:
                self.rows[slot] = tuple(c[k] for c in columns)
        self.seen += n

    def columns(self, width: int) -> list[tuple]:
        """The sample as `width` columns (empty ones for an empty stream)."""
        return list(zip(*self.rows)) or [()] * width


class Digests:
    """A `size`-byte BLAKE2b digest of every string added, in one buffer: `size` bytes of memory
    per item (twice that while `distinct` sorts them). Two different strings share a digest with
    probability 2^-(8 size), so at 16 bytes a count over n items is off with probability below n^2 / 2^129."""

    def __init__(self, size: int = 16) -> None:
        self.size, self.count, self._buffer = size, 0, bytearray()

    def add(self, items: Iterable[str]) -> None:
        before = len(self._buffer)
        self._buffer += b"".join(hashlib.blake2b(s.encode("utf-8"), digest_size=self.size).digest() for s in items)
        self.count += (len(self._buffer) - before) // self.size

    def distinct(self) -> int:
        """How many different strings were added."""
        import numpy as np

        if not self._buffer:
            return 0
        return len(np.unique(np.frombuffer(self._buffer, dtype=f"V{self.size}")))

    def repeated(self) -> int:
        """Items equal to an earlier one."""
        return self.count - self.distinct()
