"""Corpora shipped as one archive (tar.gz, tar.xz, zip): members extracted into place, a new
corpus by configuration alone, missing members named, and broken archives reported."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
import zlib
from pathlib import Path

import pytest

from nmt.config.data import ValidateConfig
from nmt.data.download import download_corpus
from nmt.data.validate import validate_corpus
from nmt.errors import DownloadError
from support.corpus import data_config, sha256, synthetic_pairs
from support.download import file_hashes, hidden

LANGS = ("de", "en")


def make_tar(path: Path, members: dict[str, bytes], dirs: tuple[str, ...] = ("corpus-v1",),
             compression: str = "gz") -> bytes:
    """A compressed tar at `path` with the given directory and file members; return its bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=f"w:{compression}") as tf:
        for d in dirs:
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tf.addfile(info)
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())
    return buf.getvalue()


def text(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def archive_corpus(srv: Path, url_base: str, name: str = "corpus-v1.tgz", kind: str = "tgz") -> tuple[dict, dict]:
    """A corpus shipped as one archive with train/val/test members; return (corpus entry, outputs)."""
    splits = {"train": synthetic_pairs(300, seed=21), "val": synthetic_pairs(40, seed=22),
              "test": synthetic_pairs(30, seed=23)}
    outputs = {f"{split}.{lang}": text(sides[i]) for split, sides in splits.items() for i, lang in enumerate(LANGS)}
    members = {f"corpus-v1/{out}": data for out, data in outputs.items()}
    if kind in ("tgz", "txz"):
        blob = make_tar(srv / name, members, compression={"tgz": "gz", "txz": "xz"}[kind])
    else:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for member, data in members.items():
                zf.writestr(member, data)
        blob = buf.getvalue()
        srv.mkdir(parents=True, exist_ok=True)
        (srv / name).write_bytes(blob)
    corpus = {
        "languages": list(LANGS),
        "files": [{"name": name, "url": f"{url_base}/{name}", "sha256": sha256(blob),
                   "members": {out: f"corpus-v1/{out}" for out in outputs}}],
        "splits": {split: {lang: f"{split}.{lang}" for lang in LANGS} for split in splits},
    }
    return corpus, outputs


# --------------------------------------------------------------------------- archives


@pytest.mark.network
@pytest.mark.parametrize("kind", ["tgz", "zip"])
def test_archive_members_are_extracted_and_a_new_corpus_is_configuration_only(tmp_path, http_server, kind):
    srv = tmp_path / "srv"
    srv.mkdir()
    server = http_server(srv)
    name = "corpus-v1.tgz" if kind == "tgz" else "corpus-v1.zip"
    corpus, outputs = archive_corpus(srv, server.url, name=name, kind=kind)
    cfg = data_config(corpus)
    raw = tmp_path / "raw"
    paths = download_corpus(cfg, raw)

    assert sorted(p.name for p in paths) == sorted(outputs)
    assert sorted(p.name for p in raw.iterdir()) == sorted(outputs)  # no archive, no temporaries
    for out_name, data in outputs.items():
        assert (raw / out_name).read_bytes() == data
    assert server.requests == [f"/{name}"]

    gate = validate_corpus(cfg, ValidateConfig(min_pairs=10, min_train_pairs=100), raw,
                           tmp_path / "validated", tmp_path / "reports")
    assert gate.success
    assert gate.stats["train"]["pairs"] == 300 and gate.stats["test"]["pairs"] == 30
    assert sorted(p.name for p in (tmp_path / "validated").iterdir()) == sorted(outputs)
    assert (tmp_path / "reports" / "raw.json").is_file()


@pytest.mark.network
def test_archive_is_fetched_again_and_replaces_outputs(tmp_path, http_server):
    srv = tmp_path / "srv"
    srv.mkdir()
    server = http_server(srv)
    corpus, outputs = archive_corpus(srv, server.url)
    raw = tmp_path / "raw"
    download_corpus(data_config(corpus), raw)
    (raw / "stale.txt").write_text("from another corpus\n")
    download_corpus(data_config(corpus), raw)
    assert sorted(p.name for p in raw.iterdir()) == sorted(outputs)
    assert server.requests == ["/corpus-v1.tgz"] * 2


@pytest.mark.network
@pytest.mark.parametrize("member", ["corpus-v1/missing.de", "corpus-v1"])  # absent; a directory
def test_archive_member_that_is_not_a_file_is_named(tmp_path, http_server, member):
    srv = tmp_path / "srv"
    srv.mkdir()
    server = http_server(srv)
    corpus, outputs = archive_corpus(srv, server.url)
    corpus["files"][0]["members"]["val.de"] = member
    raw = tmp_path / "raw"
    with pytest.raises(DownloadError) as err:
        download_corpus(data_config(corpus), raw)
    msg = str(err.value)
    assert repr(member) in msg and "val.de" in msg and "corpus-v1.tgz" in msg and "members" in msg
    assert not raw.exists() or sorted(raw.iterdir()) == []  # nothing extracted into place


def test_zip_member_missing_is_named(tmp_path):
    srv = tmp_path / "srv"
    corpus, _ = archive_corpus(srv, (srv).as_uri(), name="c.zip", kind="zip")
    corpus["files"][0]["members"]["train.en"] = "corpus-v1/nope.en"
    with pytest.raises(DownloadError, match=r"no member 'corpus-v1/nope\.en' \(for train\.en\)"):
        download_corpus(data_config(corpus), tmp_path / "raw")


def _corrupt_tgz(inner_prefix: bytes) -> bytes:
    """A gzip stream that decompresses `inner_prefix` fine, then hits an invalid deflate block."""
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = co.compress(inner_prefix) + co.flush(zlib.Z_FULL_FLUSH) + b"\x07" + b"\x00" * 64
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + body


@pytest.mark.parametrize("damage", ["truncated", "corrupt_deflate", "corrupt_xz"])
def test_broken_archive_with_matching_checksum_is_a_download_error(tmp_path, damage):
    """The configured sha256 matches a broken archive: a DownloadError (never a raw
    zlib/lzma/EOF exception), and the previous outputs stay untouched."""
    srv = tmp_path / "srv"
    name = "corpus-v1.txz" if damage == "corrupt_xz" else "corpus-v1.tgz"
    corpus, outputs = archive_corpus(srv, srv.as_uri(), name=name, kind=name[-3:])
    raw = tmp_path / "raw"
    download_corpus(data_config(corpus), raw)
    before = file_hashes(raw)

    good = (srv / name).read_bytes()
    if damage == "truncated":
        broken = good[: len(good) // 2]
    elif damage == "corrupt_deflate":
        broken = _corrupt_tgz(gzip.decompress(good)[:20000])  # headers fine, member data broken
    else:
        flipped = bytearray(good)
        for i in range(len(good) // 2, len(good) // 2 + 16):
            flipped[i] ^= 0xFF
        broken = bytes(flipped)
    (srv / name).write_bytes(broken)
    corpus["files"][0]["sha256"] = sha256(broken)
    with pytest.raises(DownloadError, match="cannot read archive") as err:
        download_corpus(data_config(corpus), raw)
    assert name in str(err.value)
    assert file_hashes(raw) == before
    assert hidden(raw) == []
