"""Shared fixtures: the Multi30k mirror, a tiny synthetic corpus, an HTTP server, the ONNX test model.

Helpers that tests import live in the `support` package (tests/support/), never here."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.corpus import ROOT, synthetic_pairs, write_corpus
from support.server import Server


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


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> dict:
    """A small, valid corpus entry (file:// URLs) with train/val/test splits."""
    return write_corpus(tmp_path / "src_corpus", {
        "train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(40, seed=2), "test": synthetic_pairs(30, seed=3)})


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
    """A small copy-task model file written by the train stage (tests/support/onnx.py)."""
    from support.onnx import model_file

    return model_file(tmp_path_factory.getbasetemp() / "onnx-copy-model")


@pytest.fixture(scope="session")
def package(model_path: Path) -> Path:
    """Its ONNX package, exported once per session."""
    from support.onnx import shared_package

    return shared_package(model_path.parent)


# pytest rewrites asserts only in test modules and conftest; these helpers hold asserts of their own,
# so their failures keep pytest's detailed messages.
pytest.register_assert_rewrite("support.params", "support.validate")
