"""The download stage over HTTP on 127.0.0.1: verified files, retries of transient failures
(5xx, 429, refused connections, timeouts, transfers cut mid-body), 404s that fail fast, and
re-runs (stale files of another corpus removed, good files not fetched again)."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator

import pytest

from nmt.data.download import MIRROR_ENV, download_corpus, download_file, fetch
from nmt.errors import DownloadError
from support.corpus import data_config, sha256, synthetic_pairs, write_corpus
from support.download import (
    closed_port,
    entry,
    file_hashes,
    gz_lines,
    hidden,
    serve,
    small_splits,
)

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


def test_the_gzip_check_reads_a_bounded_chunk_at_a_time(tmp_path, monkeypatch):
    """The check streamed, not the whole decompressed file in memory (239 MB at 32x Multi30k)."""
    import gzip

    from nmt.data import download

    path = tmp_path / "big.gz"
    path.write_bytes(gzip.compress(b"a sentence per line\n" * 200_000))  # 4 MB decompressed
    sizes: list[int] = []
    real = download.open_raw

    class Recording:
        def __init__(self, fh) -> None:
            self.fh = fh

        def read(self, n: int = -1) -> bytes:
            sizes.append(n)
            return self.fh.read(n)

    def recording(p):
        from contextlib import contextmanager

        @contextmanager
        def opened():
            with real(p) as fh:
                yield Recording(fh)
        return opened()

    monkeypatch.setattr(download, "open_raw", recording)
    download._check_gzip(path, "big.gz")
    assert len(sizes) > 1 and all(0 < n <= 1 << 20 for n in sizes), sizes[:5]
