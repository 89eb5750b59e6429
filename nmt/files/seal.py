"""A SHA-256 sealed into a zip archive's own comment: a checkpoint or model file carries its digest.

torch writes checkpoints as zip archives and does not check them when it loads: one flipped bit in a
tensor loads as a different weight. So before a checkpoint is written, the SHA-256 of its archive
is put in the archive's end-of-central-directory comment (a field every zip reader skips, torch's
included), and a load recomputes it first: the bytes up to the comment-length field, then that field
as it was (zero). A zip that ends in its end-of-central-directory record with an empty comment was
written before seals (or by another tool) and is read unverified; a truncated one has lost its seal
and its central directory with it. Any other end that still shows a seal's trace (its record where a
seal's stands, a comment of a seal's length, or the comment's prefix) is a damaged seal: a flipped
bit there must not turn verification off, so `check` answers False, as for damaged bytes.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

_EOCD = b"PK\x05\x06"  # end-of-central-directory signature; the record is 22 bytes plus the comment
_EOCD_SIZE = 22
_PREFIX = b"nmt-sha256:"
_COMMENT_SIZE = len(_PREFIX) + 64
_CHUNK = 1 << 20


def seal(archive: bytes) -> bytes:
    """`archive` (a zip without a comment) with its SHA-256 as the comment."""
    at = len(archive) - _EOCD_SIZE
    if at < 0 or archive[at:at + 4] != _EOCD or archive[-2:] != b"\x00\x00":
        raise ValueError("not a zip archive without a comment: cannot seal it")
    comment = _PREFIX + hashlib.sha256(archive).hexdigest().encode("ascii")
    return archive[:-2] + struct.pack("<H", len(comment)) + comment


def sealed_digest(path: Path) -> str | None:
    """The SHA-256 the file's seal records, read from its last bytes only (None: no seal). `check` says
    whether the bytes still match it; a loader that checked once reads the digest here, not again."""
    path = Path(path)
    end = path.stat().st_size - _COMMENT_SIZE - _EOCD_SIZE
    if end < 0:
        return None
    with open(path, "rb") as fh:
        fh.seek(end)
        tail = fh.read()
    if (tail[:4] != _EOCD or tail[20:22] != struct.pack("<H", _COMMENT_SIZE)
            or tail[_EOCD_SIZE:_EOCD_SIZE + len(_PREFIX)] != _PREFIX):
        return None
    return tail[_EOCD_SIZE + len(_PREFIX):].decode("ascii", errors="replace")


def _damaged_seal(path: Path) -> bool:
    """Whether the file's end is neither a seal nor a plain zip end (EOCD, empty comment) but bears a
    seal's trace: the record where a seal's stands, a seal-length comment field, or the prefix."""
    size = Path(path).stat().st_size
    with open(path, "rb") as fh:
        fh.seek(max(0, size - _COMMENT_SIZE - _EOCD_SIZE - len(_PREFIX)))
        tail = fh.read()
    if tail[-_EOCD_SIZE:-_EOCD_SIZE + 4] == _EOCD and tail[-2:] == b"\x00\x00":
        return False  # a plain zip end: unsealed
    record = tail[-_COMMENT_SIZE - _EOCD_SIZE:]
    comment = record[_EOCD_SIZE:]
    return (record[:4] == _EOCD or record[20:22] == struct.pack("<H", _COMMENT_SIZE) or _PREFIX[:6] in tail
            or _PREFIX[-6:] in tail or (len(comment) == _COMMENT_SIZE and _is_hex(comment[-64:])))


def _is_hex(data: bytes) -> bool:
    return all(c in b"0123456789abcdef" for c in data)


def check(path: Path) -> bool | None:
    """True: the seal matches the bytes; False: it does not (the file changed after it was written, or
    its seal was damaged); None: the file carries no seal (truncated, older, or not ours). OSError if
    it cannot be read."""
    want = sealed_digest(path)
    if want is None:
        return False if _damaged_seal(path) else None
    end = Path(path).stat().st_size - _COMMENT_SIZE - _EOCD_SIZE  # where the sealed record starts
    with open(path, "rb") as fh:
        digest, left = hashlib.sha256(), end + 20  # the archive's bytes before the comment length
        while left > 0:
            chunk = fh.read(min(_CHUNK, left))
            if not chunk:
                return False
            digest.update(chunk)
            left -= len(chunk)
        digest.update(b"\x00\x00")  # the comment length as it was when the digest was taken
    return digest.hexdigest() == want
