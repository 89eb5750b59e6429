"""Download failures that are permanent: checksum mismatches (the previous good file is kept),
gzip files that do not decompress, misspelt URLs, and the CLI's one-line errors."""

from __future__ import annotations

import hashlib

import pytest

from nmt.cli import main
from nmt.data.download import MIRROR_ENV, download_corpus
from nmt.errors import DownloadError
from support.corpus import data_config, make_params, sha256, write_corpus
from support.download import (
    entry,
    file_hashes,
    gz_lines,
    hidden,
    serve,
    small_splits,
    unreachable_urls,
)

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
    assert "re-pin it: set sha256: " in msg and "data.corpora.tiny.files" in msg  # how to take the new file
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


# --------------------------------------------------------------------------- URL typos are permanent


@pytest.mark.parametrize("mirror", ["htps://127.0.0.1/mirror", "fille:///srv/mirror"])
def test_mirror_url_typo_fails_fast_with_a_clear_error(tmp_path, mirror):
    """A misspelt URL scheme is a typo, not a network hiccup: no retries."""
    corpus = unreachable_urls(write_corpus(tmp_path / "src", small_splits()))
    with pytest.raises(DownloadError) as err:
        download_corpus(data_config(corpus, retries=3, backoff_s=30.0, mirror=mirror), tmp_path / "raw")
    msg = str(err.value)
    assert "giving up" not in msg and MIRROR_ENV in msg and "train.de.gz" in msg


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


def test_cli_download_bad_url_in_params_is_one_line_error(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "srv", small_splits())
    entry(corpus, "train.de.gz")["url"] = "github.com/multi30k/train.de.gz"  # scheme forgotten
    params = make_params(tmp_path, corpus, data={"retries": 0, "backoff_s": 0.0})
    rc = main(["download", "--params", str(params), "--out", str(tmp_path / "raw")])
    err = capsys.readouterr().err
    assert rc == 1
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "data.corpora.tiny.files[0].url" in err and str(params) in err
