"""Reading and writing line-aligned text files, strictly (torch-free).

Raw corpus files may be gzip-compressed (detected by magic bytes, not by name). Every
line must be valid UTF-8; a bad byte, a truncated gzip or a missing file raises a
`DataError` that names the file and the line.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, cast

from nmt.errors import DataError
from nmt.files.atomic import atomic_open

_GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


@contextmanager
def open_raw(path: Path) -> Iterator[BinaryIO]:
    """`path` opened for reading bytes, gunzipped if it is gzip. A failure to open it, or to read
    it inside the `with` body (a truncated gzip shows only there), is a `DataError` naming the
    file and what to do about it: the one place that words these errors."""
    path = Path(path)
    try:
        with (gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")) as fh:
            yield cast(BinaryIO, fh)
    except FileNotFoundError:
        raise DataError(f"{path}: file not found (run the previous stage first, e.g. `dvc repro`)") from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise DataError(f"{path}: truncated or corrupt gzip ({exc}); "
                        "delete it and run the download stage again") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc}") from None


def read_bytes(path: Path) -> bytes:
    """Whole content of `path`, gunzipped if it is gzip; `DataError` on any failure."""
    with open_raw(path) as fh:
        return fh.read()


def read_lines(path: Path) -> list[str]:
    """Lines of a UTF-8 text file (gzip or plain), without line terminators."""
    return split_lines(read_bytes(path), path)


def split_lines(data: bytes, path: Path | str) -> list[str]:
    """Lines of UTF-8 `data` read from `path` (named in errors, e.g. "<stdin>"), without line
    terminators; a final newline is optional."""
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()  # the file's final newline
    return [_decode(raw, path, lineno) for lineno, raw in enumerate(raw_lines, start=1)]


def iter_lines(path: Path) -> Iterator[str]:
    """The lines of `path` as `read_lines` gives them, read one at a time: memory holds a line,
    not the file (a multi-GB split is streamed); the same `DataError`s, line numbers included."""
    with open_raw(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            yield _decode(raw.removesuffix(b"\n"), path, lineno)


def iter_lines_or_none(path: Path) -> Iterator[str | None]:
    """The lines of `path` as `iter_lines` gives them, with None for a line that is not valid UTF-8
    (for a reader that skips and counts bad lines); a missing file or a corrupt gzip still raises."""
    with open_raw(path) as fh:
        for raw in fh:
            try:
                yield raw.removesuffix(b"\n").decode("utf-8").rstrip("\r")
            except UnicodeDecodeError:
                yield None


def _decode(raw: bytes, path: Path | str, lineno: int) -> str:
    try:
        return raw.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path}:{lineno}: invalid UTF-8 (byte {raw[exc.start]:#04x} at column {exc.start + 1}); "
            "the text must be UTF-8, one sentence per line: re-encode the file or fix that line"
        ) from None


def write_lines(path: Path, lines: Iterable[str]) -> None:
    """Write one line per item, '\\n'-terminated, atomically."""
    with atomic_open(path, "w") as fh:
        for line in lines:
            fh.write(line)
            fh.write("\n")


def split_file(directory: Path, split: str, lang: str, suffix: str = "") -> Path:
    """Path of one language side of a split in a stage's output directory: `split.lang[suffix]`."""
    return Path(directory) / f"{split}.{lang}{suffix}"
