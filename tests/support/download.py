"""Helpers for the download tests: small corpora served on 127.0.0.1, unreachable URLs, and
looks at the output directory (file hashes, leftover temporaries)."""

from __future__ import annotations

import gzip
import socket
from pathlib import Path

from support.corpus import sha256, synthetic_pairs, write_corpus


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
