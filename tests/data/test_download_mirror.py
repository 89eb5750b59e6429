"""Download mirrors: NMT_DATA_MIRROR and data.mirror (directory, file:// or http:// URL) in place
of the official URLs, files missing from a mirror, and the real Multi30k mirror."""

from __future__ import annotations

import pytest

from nmt.config.params import load_params
from nmt.data.download import MIRROR_ENV, download_corpus, resolve_mirror, source_url
from nmt.errors import DownloadError
from support.corpus import ROOT, data_config, write_corpus
from support.download import file_hashes, hidden, small_splits, unreachable_urls

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
    # the per-corpus layout is tried first (<mirror>/<corpus>/<name>: a 404 here), then the flat one
    assert sorted(server.requests) == sorted(
        path for f in corpus["files"] for path in (f"/multi30k/tiny/{f['name']}", f"/multi30k/{f['name']}"))
    assert file_hashes(out) == {f["name"]: f["sha256"] for f in corpus["files"]}


@pytest.mark.network
def test_http_mirror_one_folder_per_corpus(tmp_path, http_server):
    corpus = unreachable_urls(write_corpus(tmp_path / "root" / "tiny", small_splits()))
    server = http_server(tmp_path / "root")
    download_corpus(data_config(corpus, retries=0, mirror=server.url), tmp_path / "raw")
    assert sorted(server.requests) == sorted(f"/tiny/{f['name']}" for f in corpus["files"])
    assert file_hashes(tmp_path / "raw") == {f["name"]: f["sha256"] for f in corpus["files"]}


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


# --------------------------------------------------------------------------- the real Multi30k mirror


@pytest.mark.slow
def test_real_multi30k_through_mirror(tmp_path, monkeypatch, mirror):
    cfg = load_params(ROOT / "params.yaml").data
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
