"""The download stage: HTTP on 127.0.0.1, retries, checksums, gzip checks, mirrors,
archives, stale files, the real Multi30k mirror, and the CLI's one-line errors."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import socket
import tarfile
import threading
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, data_config, make_params, sha256, synthetic_pairs, write_corpus
from nmt.cli import main
from nmt.config import DataConfig, ValidateConfig
from nmt.download import MIRROR_ENV, download_corpus, download_file, fetch, resolve_mirror, source_url
from nmt.errors import DownloadError
from nmt.params import load_section
from nmt.validate import validate_corpus

LANGS = ("de", "en")


# --------------------------------------------------------------------------- helpers


def small_splits(n_train: int = 30, seed: int = 10) -> dict:
    return {"train": synthetic_pairs(n_train, seed=seed), "val": synthetic_pairs(8, seed=seed + 1)}


def serve(tmp_path: Path, http_server, splits: dict | None = None):
    """Write a gz corpus under tmp_path/srv, serve it on 127.0.0.1; return (corpus, server, srv_dir)."""
    srv = tmp_path / "srv"
    corpus = write_corpus(srv, splits or small_splits())
    server = http_server(srv)
    for f in corpus["files"]:
        f["url"] = f"{server.url}/{f['name']}"
    return corpus, server, srv


def gz_lines(lines: list[str]) -> bytes:
    return gzip.compress("".join(line + "\n" for line in lines).encode("utf-8"), mtime=0)


def entry(corpus: dict, name: str) -> dict:
    return next(f for f in corpus["files"] if f["name"] == name)


def hidden(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def file_hashes(directory: Path) -> dict[str, str]:
    return {p.name: sha256(p.read_bytes()) for p in sorted(directory.iterdir()) if p.is_file()}


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unreachable_urls(corpus: dict) -> dict:
    """Point every URL at a closed 127.0.0.1 port: any fetch not from the mirror fails."""
    port = closed_port()
    for f in corpus["files"]:
        f["url"] = f"http://127.0.0.1:{port}/{f['name']}"
    return corpus


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


# --------------------------------------------------------------------------- HTTP: success, retries, failures


@pytest.mark.network
def test_http_download_lands_verified_files_and_no_temporaries(tmp_path, http_server):
    corpus, server, srv = serve(tmp_path, http_server)
    out = tmp_path / "raw"
    paths = download_corpus(data_config(corpus), out)

    names = [f["name"] for f in corpus["files"]]
    assert [p.name for p in paths] == names
    assert sorted(p.name for p in out.iterdir()) == sorted(names)
    for f in corpus["files"]:
        got = (out / f["name"]).read_bytes()
        assert sha256(got) == f["sha256"]
        assert got == (srv / f["name"]).read_bytes()
    assert hidden(out) == []
    assert sorted(server.requests) == sorted(f"/{n}" for n in names)  # one request per file


@pytest.mark.network
@pytest.mark.parametrize("status", [503, 429])
def test_transient_status_is_retried_then_succeeds(tmp_path, http_server, status):
    corpus, server, srv = serve(tmp_path, http_server)
    server.failures["/train.de.gz"] = [status]
    out = tmp_path / "raw"
    download_corpus(data_config(corpus, retries=2), out)

    assert server.requests.count("/train.de.gz") == 2
    assert (out / "train.de.gz").read_bytes() == (srv / "train.de.gz").read_bytes()
    assert sha256((out / "train.de.gz").read_bytes()) == entry(corpus, "train.de.gz")["sha256"]
    assert hidden(out) == []


@pytest.mark.network
def test_persistent_5xx_gives_up_after_retries_plus_one_attempts(tmp_path, http_server):
    corpus, server, _ = serve(tmp_path, http_server)
    server.failures["/val.en.gz"] = [500] * 10
    out = tmp_path / "raw"
    with pytest.raises(DownloadError, match=r"giving up after 3 attempts") as err:
        download_corpus(data_config(corpus, retries=2), out)

    assert "val.en.gz" in str(err.value) and "500" in str(err.value)
    assert server.requests.count("/val.en.gz") == 3
    assert not (out / "val.en.gz").exists()
    assert hidden(out) == []


@pytest.mark.network
def test_retries_zero_means_a_single_attempt(tmp_path, http_server):
    corpus, server, _ = serve(tmp_path, http_server)
    server.failures["/train.de.gz"] = [503, 503]
    with pytest.raises(DownloadError, match=r"giving up after 1 attempts"):
        download_corpus(data_config(corpus, retries=0), tmp_path / "raw")
    assert server.requests.count("/train.de.gz") == 1


def test_connection_refused_is_retried_then_reported(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/train.de.gz"
    with pytest.raises(DownloadError, match=r"giving up after 3 attempts") as err:
        fetch(url, tmp_path / "x.part", retries=2, backoff_s=0.0, timeout_s=2.0)
    assert url in str(err.value) and MIRROR_ENV in str(err.value)


def test_timeout_is_transient_and_retried(tmp_path):
    """A server that accepts the connection but never answers: timeout, retried, reported."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # the kernel completes the handshake; nobody ever answers
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/train.de.gz"
        with pytest.raises(DownloadError, match=r"giving up after 2 attempts") as err:
            fetch(url, tmp_path / "x.part", retries=1, backoff_s=0.0, timeout_s=0.2)
    assert "Timeout" in str(err.value) or "timed out" in str(err.value)


class ShortBodyServer:
    """Serves `files` on 127.0.0.1; the first `cuts` responses send the full Content-Length but only
    half the body, then close the connection (a download cut mid-transfer)."""

    def __init__(self, files: dict[str, bytes], cuts: int) -> None:
        self.requests: list[str] = []
        outer = self
        self.cuts = cuts

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                outer.requests.append(self.path)
                data = files[self.path.lstrip("/")]
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                if outer.cuts > 0:
                    outer.cuts -= 1
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def short_body_server() -> Iterator:
    servers: list[ShortBodyServer] = []

    def start(files: dict[str, bytes], cuts: int) -> ShortBodyServer:
        servers.append(ShortBodyServer(files, cuts))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


@pytest.mark.network
def test_transfer_cut_mid_body_is_retried(tmp_path, short_body_server):
    """A connection closed before Content-Length bytes arrived is a transient failure, not a
    'checksum mismatch / changed upstream' error."""
    corpus = write_corpus(tmp_path / "srv", small_splits(n_train=400))
    blobs = {f["name"]: (tmp_path / "srv" / f["name"]).read_bytes() for f in corpus["files"]}
    server = short_body_server(blobs, cuts=1)
    for f in corpus["files"]:
        f["url"] = f"{server.url}/{f['name']}"
    out = tmp_path / "raw"
    download_corpus(data_config(corpus, retries=2), out)

    first = corpus["files"][0]["name"]
    assert server.requests.count(f"/{first}") == 2
    assert file_hashes(out) == {f["name"]: f["sha256"] for f in corpus["files"]}


@pytest.mark.network
def test_transfer_cut_every_time_gives_up_with_attempts(tmp_path, short_body_server):
    data = gz_lines(synthetic_pairs(400, seed=3)[0])
    server = short_body_server({"train.de.gz": data}, cuts=100)
    with pytest.raises(DownloadError, match=r"giving up after 2 attempts"):
        fetch(f"{server.url}/train.de.gz", tmp_path / "x.part", retries=1, backoff_s=0.0, timeout_s=5.0)
    assert len(server.requests) == 2


@pytest.mark.network
def test_http_404_fails_fast(tmp_path, http_server):
    corpus, server, srv = serve(tmp_path, http_server)
    (srv / "val.de.gz").unlink()  # a real 404 from the server
    out = tmp_path / "raw"
    with pytest.raises(DownloadError, match="404") as err:
        download_corpus(data_config(corpus, retries=3), out)
    assert "val.de.gz" in str(err.value)
    assert server.requests.count("/val.de.gz") == 1
    assert not (out / "val.de.gz").exists()
    assert hidden(out) == []


@pytest.mark.network
def test_scripted_404_is_not_retried(tmp_path, http_server):
    corpus, server, _ = serve(tmp_path, http_server)
    server.failures["/train.en.gz"] = [404, 404, 404]
    with pytest.raises(DownloadError, match="HTTP 404"):
        download_corpus(data_config(corpus, retries=3), tmp_path / "raw")
    assert server.requests.count("/train.en.gz") == 1


# --------------------------------------------------------------------------- checksums and gzip


@pytest.mark.network
@pytest.mark.parametrize("change", ["configured_sha", "served_content"])
def test_checksum_mismatch_keeps_previous_good_file(tmp_path, http_server, change):
    corpus, server, srv = serve(tmp_path, http_server)
    out = tmp_path / "raw"
    download_corpus(data_config(corpus), out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    target = entry(corpus, "train.en.gz")
    if change == "configured_sha":
        target["sha256"] = hashlib.sha256(b"some other release").hexdigest()
    else:  # upstream publishes v2 (configured), but what is served is a tampered copy
        target["sha256"] = sha256(gz_lines(["v2 line one", "v2 line two"]))
        (srv / "train.en.gz").write_bytes(gz_lines(["tampered", "content"]))
    server.requests.clear()

    with pytest.raises(DownloadError) as err:
        download_corpus(data_config(corpus), out)
    msg = str(err.value)
    assert "train.en.gz" in msg and "checksum" in msg and "nothing was replaced" in msg
    assert server.requests == ["/train.en.gz"]  # the other files were already present and good
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # byte-for-byte, nothing else touched
    assert hidden(out) == []


@pytest.mark.network
def test_checksum_mismatch_on_first_download_leaves_no_file(tmp_path, http_server):
    corpus, server, _ = serve(tmp_path, http_server)
    entry(corpus, "val.de.gz")["sha256"] = "0" * 64
    out = tmp_path / "raw"
    with pytest.raises(DownloadError, match=r"val\.de\.gz: checksum mismatch"):
        download_corpus(data_config(corpus, retries=3), out)
    assert not (out / "val.de.gz").exists()
    assert server.requests.count("/val.de.gz") == 1  # permanent: not retried
    assert hidden(out) == []


@pytest.mark.network
def test_truncated_gzip_with_matching_checksum_is_rejected(tmp_path, http_server):
    corpus, server, srv = serve(tmp_path, http_server, small_splits(n_train=300))
    out = tmp_path / "raw"
    download_corpus(data_config(corpus), out)
    good = (out / "train.de.gz").read_bytes()

    truncated = good[: len(good) // 2]
    (srv / "train.de.gz").write_bytes(truncated)
    entry(corpus, "train.de.gz")["sha256"] = sha256(truncated)  # the config "trusts" the broken file
    with pytest.raises(DownloadError, match="gzip") as err:
        download_corpus(data_config(corpus), out)
    assert "train.de.gz" in str(err.value) and "nothing was replaced" in str(err.value)
    assert (out / "train.de.gz").read_bytes() == good
    assert hidden(out) == []


@pytest.mark.network
def test_truncated_gzip_first_download_leaves_nothing(tmp_path, http_server):
    corpus, _, srv = serve(tmp_path, http_server)
    broken = (srv / "val.en.gz").read_bytes()[:-12]  # lose the trailer (CRC + size)
    (srv / "val.en.gz").write_bytes(broken)
    entry(corpus, "val.en.gz")["sha256"] = sha256(broken)
    out = tmp_path / "raw"
    with pytest.raises(DownloadError, match="not a readable gzip"):
        download_corpus(data_config(corpus), out)
    assert not (out / "val.en.gz").exists()
    assert hidden(out) == []


def test_plain_text_file_is_not_gzip_checked(tmp_path):
    """Only files named .gz must be gzip; a plain .txt with a matching checksum is accepted."""
    corpus = write_corpus(tmp_path / "srv", small_splits(), gz=False)
    out = tmp_path / "raw"
    download_corpus(data_config(corpus), out)
    assert file_hashes(out) == {f["name"]: f["sha256"] for f in corpus["files"]}


# --------------------------------------------------------------------------- mirrors


def test_resolve_mirror_env_wins_over_config(monkeypatch, tmp_path):
    assert resolve_mirror(None) is None
    assert resolve_mirror("") is None
    assert resolve_mirror("/cfg/mirror") == "/cfg/mirror"
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path))
    assert resolve_mirror("/cfg/mirror") == str(tmp_path)
    assert resolve_mirror(None) == str(tmp_path)
    monkeypatch.setenv(MIRROR_ENV, "")  # empty env var: ignored
    assert resolve_mirror("/cfg/mirror") == "/cfg/mirror"


def test_source_url_forms(tmp_path):
    corpus = write_corpus(tmp_path / "m", small_splits())
    cfg = data_config(corpus)
    f = cfg.active.files[0]
    assert source_url(f, None) == f.url
    assert source_url(f, str(tmp_path / "m")) == (tmp_path / "m" / f.name).as_uri()
    assert source_url(f, (tmp_path / "m").as_uri() + "/") == (tmp_path / "m").as_uri() + "/" + f.name
    assert source_url(f, "http://127.0.0.1:1/mirror/") == f"http://127.0.0.1:1/mirror/{f.name}"


@pytest.mark.parametrize("form", ["dir", "file_url"])
@pytest.mark.parametrize("via", ["config", "env"])
def test_mirror_replaces_official_urls(tmp_path, monkeypatch, form, via):
    mirror_dir = tmp_path / "mirror"
    corpus = unreachable_urls(write_corpus(mirror_dir, small_splits()))
    mirror = str(mirror_dir) if form == "dir" else mirror_dir.as_uri()
    if via == "env":
        monkeypatch.setenv(MIRROR_ENV, mirror)
        cfg = data_config(corpus, retries=0)
    else:
        cfg = data_config(corpus, retries=0, mirror=mirror)
    out = tmp_path / "raw"
    download_corpus(cfg, out)
    assert file_hashes(out) == {f["name"]: f["sha256"] for f in corpus["files"]}
    assert hidden(out) == []


def test_env_mirror_wins_over_configured_mirror(tmp_path, monkeypatch):
    good = tmp_path / "good"
    corpus = unreachable_urls(write_corpus(good, small_splits()))
    bad = tmp_path / "bad"
    write_corpus(bad, small_splits(seed=99))  # same names, other content: checksums would fail
    monkeypatch.setenv(MIRROR_ENV, good.as_uri())
    out = tmp_path / "raw"
    download_corpus(data_config(corpus, retries=0, mirror=str(bad)), out)
    assert file_hashes(out) == {f["name"]: f["sha256"] for f in corpus["files"]}

    monkeypatch.delenv(MIRROR_ENV)  # without the env var, the configured (bad) mirror is used
    with pytest.raises(DownloadError, match="checksum"):
        download_corpus(data_config(corpus, retries=0, mirror=str(bad)), tmp_path / "raw2")


@pytest.mark.network
def test_http_mirror(tmp_path, http_server):
    mirror_dir = tmp_path / "mirror" / "multi30k"
    corpus = unreachable_urls(write_corpus(mirror_dir, small_splits()))
    server = http_server(tmp_path / "mirror")
    out = tmp_path / "raw"
    download_corpus(data_config(corpus, retries=0, mirror=f"{server.url}/multi30k/"), out)
    assert sorted(server.requests) == sorted(f"/multi30k/{f['name']}" for f in corpus["files"])
    assert file_hashes(out) == {f["name"]: f["sha256"] for f in corpus["files"]}


@pytest.mark.parametrize("form", ["dir", "file_url"])
@pytest.mark.parametrize("via", ["config", "env"])
def test_file_missing_from_mirror_is_a_clear_error(tmp_path, monkeypatch, form, via):
    mirror_dir = tmp_path / "mirror"
    corpus = unreachable_urls(write_corpus(mirror_dir, small_splits()))
    (mirror_dir / "val.en.gz").unlink()
    mirror = str(mirror_dir) if form == "dir" else mirror_dir.as_uri()
    if via == "env":
        monkeypatch.setenv(MIRROR_ENV, mirror)
    cfg = data_config(corpus, retries=3, mirror=None if via == "env" else mirror)
    out = tmp_path / "raw"
    with pytest.raises(DownloadError) as err:
        download_corpus(cfg, out)
    msg = str(err.value)
    assert "val.en.gz" in msg and "no such file" in msg and MIRROR_ENV in msg
    assert "giving up" not in msg  # permanent: not treated as a network hiccup
    assert "\n" not in msg
    assert not (out / "val.en.gz").exists()


def test_mirror_directory_that_does_not_exist(tmp_path):
    corpus = unreachable_urls(write_corpus(tmp_path / "src", small_splits()))
    with pytest.raises(DownloadError, match="no such file"):
        download_corpus(data_config(corpus, mirror=str(tmp_path / "nowhere")), tmp_path / "raw")


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


# --------------------------------------------------------------------------- stale files, re-runs


@pytest.mark.network
def test_other_corpus_files_removed_and_good_files_not_refetched(tmp_path, http_server):
    corpus, server, _ = serve(tmp_path, http_server)
    out = tmp_path / "raw"
    out.mkdir()
    (out / "news.de.gz").write_bytes(b"another corpus")
    (out / "news.en.gz").write_bytes(b"another corpus")
    (out / "keepdir").mkdir()  # directories are not corpus files: left alone
    # one file already present and good: never requested
    (out / "train.de.gz").write_bytes((tmp_path / "srv" / "train.de.gz").read_bytes())

    download_corpus(data_config(corpus), out)
    names = {f["name"] for f in corpus["files"]}
    assert {p.name for p in out.iterdir() if p.is_file()} == names
    assert (out / "keepdir").is_dir()
    assert "/train.de.gz" not in server.requests
    assert sorted(server.requests) == sorted(f"/{n}" for n in names - {"train.de.gz"})

    server.requests.clear()  # a second run with everything present fetches nothing
    download_corpus(data_config(corpus), out)
    assert server.requests == []
    assert file_hashes(out) == {f["name"]: f["sha256"] for f in corpus["files"]}


@pytest.mark.network
def test_present_but_corrupt_file_is_fetched_again(tmp_path, http_server):
    corpus, server, srv = serve(tmp_path, http_server)
    out = tmp_path / "raw"
    download_corpus(data_config(corpus), out)
    (out / "val.de.gz").write_bytes(b"bit rot")
    server.requests.clear()
    download_corpus(data_config(corpus), out)
    assert server.requests == ["/val.de.gz"]
    assert (out / "val.de.gz").read_bytes() == (srv / "val.de.gz").read_bytes()


def test_failed_download_does_not_remove_stale_files(tmp_path):
    corpus = write_corpus(tmp_path / "srv", small_splits())
    entry(corpus, "val.en.gz")["sha256"] = "f" * 64
    out = tmp_path / "raw"
    out.mkdir()
    (out / "old.de.gz").write_bytes(b"previous corpus")
    with pytest.raises(DownloadError):
        download_corpus(data_config(corpus), out)
    assert (out / "old.de.gz").read_bytes() == b"previous corpus"


def test_download_file_returns_output_paths(tmp_path):
    corpus = write_corpus(tmp_path / "srv", small_splits())
    cfg = data_config(corpus)
    out = tmp_path / "raw"
    out.mkdir()
    f = cfg.active.files[0]
    assert download_file(f, out, cfg, None) == [out / f.name]
    assert sha256((out / f.name).read_bytes()) == f.sha256
    assert download_file(f, out, cfg, None) == [out / f.name]  # already present: same answer


# --------------------------------------------------------------------------- the real Multi30k mirror


@pytest.mark.slow
def test_real_multi30k_through_mirror(tmp_path, monkeypatch, mirror):
    cfg = load_section(ROOT / "params.yaml", "data", DataConfig)
    assert cfg.corpus == "multi30k"
    monkeypatch.setenv(MIRROR_ENV, str(mirror))  # official URLs (github.com) are never contacted
    out = tmp_path / "raw"
    paths = download_corpus(cfg, out)

    expected = {}
    for line in (mirror / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split()
        expected[name.lstrip("*")] = digest
    assert len(expected) == 6
    assert sorted(p.name for p in paths) == sorted(expected)
    assert file_hashes(out) == expected
    assert {f.name: f.sha256 for f in cfg.active.files} == expected  # params.yaml agrees with the mirror


# --------------------------------------------------------------------------- CLI


def test_cli_download_bad_checksum_is_one_line_error(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "srv", small_splits())
    entry(corpus, "train.en.gz")["sha256"] = "a" * 64
    params = make_params(tmp_path, corpus, data={"retries": 0, "backoff_s": 0.0})
    out = tmp_path / "raw"
    rc = main(["download", "--params", str(params), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("nmt download: error: train.en.gz: checksum mismatch")
    assert "Traceback" not in err
    assert not (out / "train.en.gz").exists()


def test_cli_download_success(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "srv", small_splits())
    params = make_params(tmp_path, corpus, data={"retries": 0, "backoff_s": 0.0})
    out = tmp_path / "raw"
    assert main(["download", "--params", str(params), "--out", str(out)]) == 0
    assert "error" not in capsys.readouterr().err
    assert file_hashes(out) == {f["name"]: f["sha256"] for f in corpus["files"]}


def test_cli_download_missing_mirror_file_is_one_line_error(tmp_path, capsys, monkeypatch):
    mirror_dir = tmp_path / "mirror"
    corpus = unreachable_urls(write_corpus(mirror_dir, small_splits()))
    (mirror_dir / "train.de.gz").unlink()
    params = make_params(tmp_path, corpus, data={"retries": 0, "backoff_s": 0.0})
    monkeypatch.setenv(MIRROR_ENV, str(mirror_dir))
    rc = main(["download", "--params", str(params), "--out", str(tmp_path / "raw")])
    err = capsys.readouterr().err
    assert rc == 1
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "train.de.gz" in err and "no such file" in err


# --------------------------------------------------------------------------- URL typos are permanent


@pytest.mark.parametrize("mirror", ["htps://127.0.0.1/mirror", "fille:///srv/mirror"])
def test_mirror_url_typo_fails_fast_with_a_clear_error(tmp_path, mirror):
    """A misspelt URL scheme is a typo, not a network hiccup: no retries."""
    corpus = unreachable_urls(write_corpus(tmp_path / "src", small_splits()))
    with pytest.raises(DownloadError) as err:
        download_corpus(data_config(corpus, retries=3, backoff_s=30.0, mirror=mirror), tmp_path / "raw")
    msg = str(err.value)
    assert "giving up" not in msg and MIRROR_ENV in msg and "train.de.gz" in msg


def test_cli_download_bad_url_in_params_is_one_line_error(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "srv", small_splits())
    entry(corpus, "train.de.gz")["url"] = "github.com/multi30k/train.de.gz"  # scheme forgotten
    params = make_params(tmp_path, corpus, data={"retries": 0, "backoff_s": 0.0})
    rc = main(["download", "--params", str(params), "--out", str(tmp_path / "raw")])
    err = capsys.readouterr().err
    assert rc == 1
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "data.corpora.tiny.files[0].url" in err and str(params) in err
