"""Indexed id files: the id sequences of one side of a split as one flat array, the way
fairseq-preprocess and Megatron's indexed datasets store a corpus (torch-free).

`STEM.bin` holds every sequence's ids back to back (little-endian `uint16`, or `uint32` for a
vocabulary of more than 65535 symbols: `id_dtype`); `STEM.idx` holds n + 1 little-endian int64
offsets into it, sequence i being `ids[offsets[i]:offsets[i + 1]]`. Neither file has a header
(the writer records the dtype and the count elsewhere, e.g. data/bin/manifest.json), so both
are memory-mapped as they are (`open_indexed`): opening reads no ids, and the only pages the OS
loads are those of the sequences a batch touches. `IndexedWriter` appends a chunk at a time,
so writing a corpus of any size holds one chunk in memory.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

import numpy as np

from nmt.errors import DataError

BIN, IDX = ".bin", ".idx"
MANIFEST = "manifest.json"  # a directory of indexed files describes them here (dtype, counts: data/bin)
DETOKENIZER = "detokenizer.json"  # data/bin: the detokenizer learned from the training targets (binarize)
FORMAT_VERSION = 2  # of that directory: bump when the files or the manifest change meaning (2: detokenizer.json)
OFFSET_DTYPE = np.dtype("<i8")
UINT16_SYMBOLS = 65535  # vocabularies up to this size store ids as uint16 (2 bytes an id), larger ones uint32


def id_dtype(vocab_size: int) -> np.dtype:
    """The smallest little-endian unsigned dtype for ids of a vocabulary of `vocab_size` symbols."""
    return np.dtype("<u2") if vocab_size <= UINT16_SYMBOLS else np.dtype("<u4")


def paths(stem: Path) -> tuple[Path, Path]:
    """(STEM.bin, STEM.idx): the suffix is appended, so `train.de` keeps its language."""
    return Path(f"{stem}{BIN}"), Path(f"{stem}{IDX}")


class IndexedWriter:
    """Appends id sequences to `STEM.bin` / `STEM.idx` (a context manager; the files are complete on exit).
    Callers that need all-or-nothing outputs write into a staged directory (`nmt.files.atomic.staged_dir`)."""

    def __init__(self, stem: Path, dtype: np.dtype) -> None:
        self.dtype = np.dtype(dtype)
        self.count = 0  # sequences written
        self.total = 0  # ids written
        bin_path, idx_path = paths(stem)
        self._bin, self._idx = open(bin_path, "wb"), open(idx_path, "wb")
        self._idx.write(np.zeros(1, OFFSET_DTYPE).tobytes())

    def add(self, ids: np.ndarray, lengths: np.ndarray) -> None:
        """Append sequences given flat: `ids` concatenated, `lengths` one per sequence (sum = len(ids))."""
        if int(lengths.sum()) != len(ids):
            raise ValueError(f"lengths sum to {int(lengths.sum())} but {len(ids)} ids were given")
        if len(ids) and (int(ids.min()) < 0 or int(ids.max()) > np.iinfo(self.dtype).max):
            raise ValueError(f"ids outside the range of {self.dtype.name}")
        self._bin.write(ids.astype(self.dtype, copy=False).tobytes())
        self._idx.write((self.total + np.cumsum(lengths, dtype=np.int64)).astype(OFFSET_DTYPE).tobytes())
        self.count += len(lengths)
        self.total += len(ids)

    def close(self) -> None:
        self._bin.close()
        self._idx.close()

    def __enter__(self) -> IndexedWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def open_indexed(stem: Path, dtype: np.dtype, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids, offsets) of `count` sequences, memory-mapped read-only. A missing file, or one whose
    size does not fit `count` sequences of `dtype` (truncated, or written for another manifest), is
    a `DataError`; the offsets are checked to start at 0 and never decrease."""
    bin_path, idx_path = paths(stem)
    dtype = np.dtype(dtype)
    for path in (bin_path, idx_path):
        if not path.is_file():
            raise DataError(f"{path}: file not found; run the binarize stage (`dvc repro binarize`)")
    if idx_path.stat().st_size != (count + 1) * OFFSET_DTYPE.itemsize:
        raise DataError(f"{idx_path}: {idx_path.stat().st_size} bytes, expected {count + 1} int64 offsets "
                        f"for {count} sequences; the file is damaged: re-run the binarize stage")
    offsets = np.memmap(idx_path, dtype=OFFSET_DTYPE, mode="r")
    total = int(offsets[-1])
    if int(offsets[0]) != 0 or (count and bool((np.diff(offsets) < 0).any())):
        raise DataError(f"{idx_path}: offsets do not start at 0 or decrease; the file is damaged: "
                        "re-run the binarize stage")
    if bin_path.stat().st_size != total * dtype.itemsize:
        raise DataError(f"{bin_path}: {bin_path.stat().st_size} bytes, expected {total} ids of {dtype.name} "
                        f"({total * dtype.itemsize} bytes); the file is damaged: re-run the binarize stage")
    ids = np.memmap(bin_path, dtype=dtype, mode="r") if total else np.zeros(0, dtype)  # mmap refuses empty files
    return ids, offsets
