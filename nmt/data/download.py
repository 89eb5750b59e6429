"""Stage 1, download: fetch every file of the configured corpus (or of every corpus a mix reads) into data/raw/.

A single corpus lands in data/raw/ itself, a mix's corpora in data/raw/<corpus>/. Each file is
streamed to a temporary file while its SHA-256 is computed, checked (hash,
and readability if gzip), then renamed into place, so a bad download never replaces a good
file. Transient failures (connection reset/refused, timeouts, HTTP 5xx/429) are retried
with exponential backoff; permanent ones (HTTP 4xx, checksum mismatch, corrupt gzip) fail
at once with a message saying what to do (for a changed upstream file: how to re-pin it). A
mirror replaces the official URLs: env NMT_DATA_MIRROR, else `data.mirror`. It is a directory or
URL holding one folder per corpus, named as in `data.corpora` (the layout of ../shared/data/), or,
the older form, the files themselves; a local mirror is looked up in that order, file by file.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import lzma
import os
import shutil
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from http.client import HTTPException
from pathlib import Path
from typing import IO

from tqdm import tqdm

from nmt.command import arg, stage_main
from nmt.config.data import DataConfig, RemoteFile
from nmt.errors import DataError, DownloadError
from nmt.files.digest import sha256_file
from nmt.files.lines import open_raw

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DownloadParams:
    """The params.yaml sections the download stage reads (only these: nmt.config.loader.load_sections)."""

    data: DataConfig  # the corpus and where to fetch it


@dataclass(frozen=True)
class DownloadPaths:
    out: Path = arg("output directory (data/raw)")

MIRROR_ENV = "NMT_DATA_MIRROR"
_CHUNK = 1 << 16


class TransientError(Exception):
    """A failure worth retrying (network hiccup, overloaded server)."""


def resolve_mirror(configured: str | None) -> str | None:
    """The mirror to use: env NMT_DATA_MIRROR, else the configured one, else None."""
    return os.environ.get(MIRROR_ENV) or configured or None


def source_urls(file: RemoteFile, mirror: str | None, corpus: str | None = None) -> list[str]:
    """Where to fetch `file` from, in the order to try: its official URL without a mirror; with one,
    `<mirror>/<corpus>/<name>` (the one-folder-per-corpus layout), then `<mirror>/<name>` (the older
    form). A local mirror is looked up at once, so it gives one URL. A file:// URL of a file that exists
    is read from there, mirror or not: no mirror holds a user's own files (`nmt adapt`)."""
    if mirror is None or (file.url.startswith("file://") and _local(file.url).is_file()):
        return [file.url]
    flat = source_url(file, mirror)
    if corpus is None:
        return [flat]
    if "://" in mirror and not mirror.startswith("file://"):
        return [mirror.rstrip("/") + "/" + urllib.parse.quote(corpus) + "/" + urllib.parse.quote(file.name), flat]
    nested = _local(mirror) / corpus / file.name
    return [nested.resolve().as_uri()] if nested.is_file() else [flat]


def source_url(file: RemoteFile, mirror: str | None) -> str:
    """`<mirror>/<name>` with a mirror, else the official URL of `file`."""
    if mirror is None:
        return file.url
    if "://" in mirror and not mirror.startswith("file://"):
        return mirror.rstrip("/") + "/" + urllib.parse.quote(file.name)
    return _local(mirror).resolve().joinpath(file.name).as_uri()


def _local(mirror: str) -> Path:
    """The folder of a local mirror given as a path or a file:// URL."""
    if mirror.startswith("file://"):
        return Path(urllib.parse.unquote(urllib.parse.urlparse(mirror).path))
    return Path(mirror)


def _fetch_once(url: str, dest: Path, timeout_s: float) -> str:
    """Stream `url` into `dest`; return the SHA-256 of what was written."""
    digest = hashlib.sha256()
    written = 0
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp, open(dest, "wb") as out:
            total = resp.headers.get("Content-Length")
            with tqdm(total=int(total) if total else None, unit="B", unit_scale=True,
                      desc=Path(urllib.parse.urlparse(url).path).name, disable=None, leave=False) as bar:
                for chunk in iter(lambda: resp.read(_CHUNK), b""):
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
                    written += len(chunk)
        if total and written < int(total):  # http.client ends a cut transfer without an error
            raise TransientError(f"connection closed after {written} of {total} bytes")
    except urllib.error.HTTPError as exc:
        if exc.code >= 500 or exc.code == 429:
            raise TransientError(f"HTTP {exc.code} {exc.reason}") from None
        raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}; check the URL in params.yaml "
                            f"(data.corpora) or the mirror ({MIRROR_ENV})") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, FileNotFoundError) or (isinstance(exc.reason, OSError) and exc.reason.errno == 2):
            raise DownloadError(f"{url}: no such file; is the mirror ({MIRROR_ENV}) complete?") from None
        if not isinstance(exc.reason, OSError):  # e.g. 'unknown url type': a typo, not a network hiccup
            raise DownloadError(f"{url}: {exc.reason}; check the URL in params.yaml (data.corpora) "
                                f"or the mirror ({MIRROR_ENV})") from None
        raise TransientError(f"{exc.reason}") from None
    except (TimeoutError, ConnectionError, HTTPException) as exc:
        raise TransientError(f"{type(exc).__name__}: {exc}") from None
    return digest.hexdigest()


def fetch(url: str, dest: Path, *, retries: int, backoff_s: float, timeout_s: float) -> str:
    """Fetch with retries on transient failures; return the SHA-256 of the bytes fetched."""
    for attempt in range(retries + 1):
        try:
            return _fetch_once(url, dest, timeout_s)
        except TransientError as exc:
            if attempt == retries:
                raise DownloadError(f"{url}: giving up after {retries + 1} attempts: {exc}; "
                                    f"check the network, or set {MIRROR_ENV} to a local copy") from None
            delay = backoff_s * 2**attempt
            log.warning("%s: %s; retry %d/%d in %.1fs", url, exc, attempt + 1, retries, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


def _check_gzip(path: Path, name: str) -> None:
    """Read `path` to its end through gzip, a chunk at a time (memory flat in the file size)."""
    try:
        with open_raw(path) as fh:
            while fh.read(_CHUNK * 16):
                pass
    except DataError as exc:
        raise DownloadError(f"{name}: downloaded file is not a readable gzip ({exc}); nothing was replaced") from None


def _extract(archive: Path, file: RemoteFile, tmp_dir: Path) -> dict[str, Path]:
    """Extract the configured members of a .tar(.gz/.bz2/.xz) or .zip archive into tmp_dir."""
    extracted: dict[str, Path] = {}
    src: IO[bytes] | None
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                names = set(zf.namelist())
                for out_name, member in file.members.items():
                    if member not in names:
                        raise DownloadError(f"{file.name}: archive has no member {member!r} (for {out_name}); "
                                            "fix data.corpora.*.files[].members in params.yaml")
                    with zf.open(member) as src, open(tmp_dir / out_name, "wb") as dst:
                        shutil.copyfileobj(src, dst)
                    extracted[out_name] = tmp_dir / out_name
            return extracted
        with tarfile.open(archive, "r:*") as tf:
            for out_name, member in file.members.items():
                try:
                    src = tf.extractfile(member)
                except KeyError:
                    src = None
                if src is None:
                    raise DownloadError(f"{file.name}: archive has no regular file {member!r} (for {out_name}); "
                                        "fix data.corpora.*.files[].members in params.yaml")
                with src, open(tmp_dir / out_name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                extracted[out_name] = tmp_dir / out_name
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
        raise DownloadError(f"{file.name}: cannot read archive ({exc}); its checksum matched, so the "
                            "configured sha256 belongs to a broken file") from None
    return extracted


def download_file(file: RemoteFile, out_dir: Path, cfg: DataConfig, mirror: str | None,
                  corpus: str | None = None) -> list[Path]:
    """Fetch, verify and (for archives) extract one configured file of `corpus` into `out_dir`."""
    outputs = list(file.members) if file.members else [file.name]
    if not file.members and (out_dir / file.name).is_file() and sha256_file(out_dir / file.name) == file.sha256:
        log.info("%s: already present, checksum OK", file.name)
        return [out_dir / file.name]
    with tempfile.TemporaryDirectory(prefix=".download-", dir=out_dir) as tmp:
        tmp_dir = Path(tmp)
        part = tmp_dir / (file.name + ".part")
        *nested, last = source_urls(file, mirror, corpus)
        for url in nested:  # a remote mirror in the per-corpus layout, else the flat one
            log.info("fetching %s from %s", file.name, url)
            try:
                got = fetch(url, part, retries=cfg.retries, backoff_s=cfg.backoff_s, timeout_s=cfg.timeout_s)
                break
            except DownloadError as exc:
                if "HTTP 404" not in str(exc):
                    raise
        else:
            url = last
            log.info("fetching %s from %s", file.name, url)
            got = fetch(url, part, retries=cfg.retries, backoff_s=cfg.backoff_s, timeout_s=cfg.timeout_s)
        if got != file.sha256:
            where = f"data.corpora.{corpus or cfg.corpus}.files"
            raise DownloadError(f"{file.name}: checksum mismatch (expected {file.sha256}, got {got}) from {url}; "
                                "the file is corrupt or changed upstream; nothing was replaced. If the new file is "
                                f"the one you want, re-pin it: set sha256: {got} for {file.name} under {where} "
                                "(and re-run the pipeline: the data changes)")
        if file.members:
            staged = _extract(part, file, tmp_dir)
        else:
            if file.name.endswith(".gz"):
                _check_gzip(part, file.name)
            staged = {file.name: part}
        for name in outputs:  # every check passed: move into place
            os.replace(staged[name], out_dir / name)
    return [out_dir / name for name in outputs]


def download_corpus(cfg: DataConfig, out_dir: Path) -> list[Path]:
    """Download every file of the corpus in use (or of each corpus of the mix, into `out_dir/<corpus>/`);
    remove files and folders of other corpora."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    mirror = resolve_mirror(cfg.mirror)
    if mirror is not None:
        log.info("using mirror %s", mirror)
    paths: list[Path] = []
    for corpus in cfg.used_corpora():
        dest = cfg.raw_dir(out_dir, corpus)
        dest.mkdir(parents=True, exist_ok=True)
        for leftover in dest.glob(".download-*"):  # from a run that was killed mid-download
            shutil.rmtree(leftover, ignore_errors=True)
        paths += [p for f in cfg.corpora[corpus].files for p in download_file(f, dest, cfg, mirror, corpus)]
    _remove_stale(out_dir, paths, cfg)
    return paths


def _remove_stale(root: Path, keep: list[Path], cfg: DataConfig) -> None:
    """Delete the files beside those in `keep` (in `root` and in the folders they lie in), and the
    folders of configured corpora the run does not use; other folders are left alone."""
    folders = {p.parent for p in keep} | {root}
    stale = [f for d in folders for f in d.iterdir() if f.is_file() and f not in keep]
    stale += [root / c for c in cfg.corpora if (root / c).is_dir() and (root / c) not in folders]
    for path in stale:
        log.info("removing %s (not part of %r)", path, cfg.corpus)
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(path) if path.is_dir() else path.unlink()


def run(params: DownloadParams, paths: DownloadPaths) -> list[Path]:
    files = download_corpus(params.data, paths.out)
    log.info("downloaded %d files of %r into %s", len(files), params.data.corpus, paths.out)
    return files


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("download", __doc__.split("\n\n")[0], DownloadPaths, DownloadParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
