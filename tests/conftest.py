"""Shared fixtures: the Multi30k mirror, tiny synthetic corpora, params files, an HTTP server."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from nmt.config import DataConfig
from nmt.params import from_dict

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The Multi30k mirror (NMT_DATA_MIRROR, else ../shared/data/multi30k)."""
    path = Path(os.environ.get("NMT_DATA_MIRROR") or ROOT.parent / "shared" / "data" / "multi30k")
    if not (path / "train.de.gz").is_file():
        pytest.skip(f"Multi30k mirror not found at {path}; set NMT_DATA_MIRROR")
    return path


@pytest.fixture(autouse=True)
def _no_env_mirror(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests choose their source explicitly; CI's NMT_DATA_MIRROR must not leak into them."""
    monkeypatch.delenv("NMT_DATA_MIRROR", raising=False)


def repo_params() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text())


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_corpus(directory: Path, splits: dict[str, tuple[list[str], list[str]]], langs=("de", "en"),
                 gz: bool = True) -> dict:
    """Write a parallel corpus as (optionally gzipped) files; return its `corpora` entry."""
    directory.mkdir(parents=True, exist_ok=True)
    files, split_map = [], {}
    for split, sides in splits.items():
        split_map[split] = {}
        for lang, lines in zip(langs, sides):
            name = f"{split}.{lang}" + (".gz" if gz else "")
            raw = "".join(line + "\n" for line in lines).encode("utf-8")
            data = gzip.compress(raw, mtime=0) if gz else raw
            (directory / name).write_bytes(data)
            files.append({"name": name, "url": (directory / name).as_uri(), "sha256": sha256(data)})
            split_map[split][lang] = name
    return {"languages": list(langs), "files": files, "splits": split_map}


def synthetic_pairs(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """n distinct, aligned sentence pairs over a small vocabulary (deterministic)."""
    import random

    rng = random.Random(seed)
    de_words = ["Ein", "Mann", "Hund", "läuft", "über", "die", "Straße", "eine", "Frau", "spielt", "Ball", "im", "Park"]
    en_words = ["A", "man", "dog", "runs", "across", "the", "street", "a", "woman", "plays", "ball", "in", "park"]
    de, en = [], []
    for i in range(n):
        idx = [rng.randrange(len(de_words)) for _ in range(rng.randint(3, 9))]
        de.append(" ".join(de_words[j] for j in idx) + f" {i} .")
        en.append(" ".join(en_words[j] for j in idx) + f" {i}.")
    return de, en


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> dict:
    """A small, valid corpus entry (file:// URLs) with train/val/test splits."""
    return write_corpus(tmp_path / "src_corpus", {
        "train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(40, seed=2), "test": synthetic_pairs(30, seed=3)})


def make_params(tmp_path: Path, corpus: dict, **sections: dict) -> Path:
    """params.yaml in tmp_path: the repository's params with `corpus` as the active corpus."""
    params = repo_params()
    params["data"]["corpora"] = {"tiny": corpus}
    params["data"]["corpus"] = "tiny"
    params["validate"].update(min_pairs=10, min_train_pairs=100)
    params["vocab"].update(min_size=10)
    for name, values in sections.items():
        params[name].update(values)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    return path


def data_config(corpus: dict, **overrides) -> DataConfig:
    raw = {"corpus": "tiny", "direction": "de-en", "corpora": {"tiny": corpus}, "retries": 2,
           "backoff_s": 0.0, "timeout_s": 5.0}
    raw.update(overrides)
    return from_dict(DataConfig, raw, key="data")


class Server:
    """A stdlib HTTP server on 127.0.0.1 serving a directory, with scripted failures."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.failures: dict[str, list[int]] = {}  # path -> status codes to answer first
        self.requests: list[str] = []
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(server.root), **kwargs)

            def do_GET(self):  # noqa: N802 (stdlib name)
                server.requests.append(self.path)
                queued = server.failures.get(self.path)
                if queued:
                    self.send_error(queued.pop(0))
                    return
                super().do_GET()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def http_server() -> Iterator[Callable[[Path], Server]]:
    servers: list[Server] = []

    def start(root: Path) -> Server:
        servers.append(Server(root))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


# --- the ONNX tests' shared model and package (test_export.py, test_runtime.py) ---------------


@pytest.fixture(scope="session")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small copy-task model file written by the train stage (tests/onnxkit.py)."""
    from onnxkit import model_file

    return model_file(tmp_path_factory.getbasetemp() / "onnx-copy-model")


@pytest.fixture(scope="session")
def package(model_path: Path) -> Path:
    """Its ONNX package, exported once per session."""
    from onnxkit import shared_package

    return shared_package(model_path.parent)


# --- helper modules with asserts of their own (tests/paramskit.py, tests/validatekit.py) -----------------------------
# pytest rewrites asserts only in test modules and conftest; these helpers hold asserts that moved out of test
# modules, so their failures keep pytest's detailed messages.
pytest.register_assert_rewrite("paramskit", "validatekit")
