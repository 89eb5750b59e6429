"""Shared fixtures: the Multi30k mirror, a tiny synthetic corpus, an HTTP server, the ONNX test model.

Helpers that tests import live in the `support` package (tests/support/), never here."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.corpus import ROOT, synthetic_pairs, write_corpus
from support.server import Server

_STARTED = pytest.StashKey[float]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--host-record", type=Path, default=None, metavar="DIR",
                     help="write DIR/<cpu>-<mode>.json: the CPU, the instruction set forced, the outcome "
                          "(tests/support/host_record.py; .ci/run: bench/results/hosts). Give it as "
                          "--host-record=DIR: pytest takes a separate DIR for a test path when it exists")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "isa: numerically sensitive tests (engines compared line for line, a model's "
                            "own scores); `make test-isa` runs them again with a lower instruction set forced")
    config.stash[_STARTED] = time.time()


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    folder = config.getoption("--host-record")
    if folder is None or hasattr(config, "workerinput"):  # under xdist the controller writes it
        return
    from support import host_record

    stats = terminalreporter.stats
    counts = {"passed": len(stats.get("passed", [])), "failed": len(stats.get("failed", [])),
              "errors": len(stats.get("error", [])), "skipped": len(stats.get("skipped", []))}
    # the injected-fault tests among them (marker fault): docs/pipeline.md's "when a run dies" figures
    counts["fault"] = {k: sum(1 for r in stats.get(key, []) if "fault" in getattr(r, "keywords", {}))
                       for k, key in (("passed", "passed"), ("failed", "failed"), ("errors", "error"))}
    args = [a for a in config.invocation_params.args if not a.startswith("--host-record")]
    path = host_record.write(folder, host_record.record(counts, time.time() - config.stash[_STARTED], args))
    terminalreporter.write_line(f"host record written to {path}")


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
    from support.onnx import model_file, session_cache

    return model_file(session_cache(tmp_path_factory, "onnx-copy-model"))


@pytest.fixture(scope="session")
def package(model_path: Path) -> Path:
    """Its ONNX package, exported once per session."""
    from support.onnx import shared_package

    return shared_package(model_path.parent)


@pytest.fixture(scope="session")
def learned_model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy model trained until it copies with a margin no host's rounding crosses (tests/support/learned.py)."""
    from support.learned import learned_model_file
    from support.onnx import session_cache

    return learned_model_file(session_cache(tmp_path_factory, "learned-copy-model"))


@pytest.fixture(scope="session")
def learned_package(learned_model_path: Path) -> Path:
    """Its ONNX package (fp32 graphs), exported once per session."""
    from support.learned import learned_package

    return learned_package(learned_model_path.parent)


# pytest rewrites asserts only in test modules and conftest; these helpers hold asserts of their own,
# so their failures keep pytest's detailed messages.
pytest.register_assert_rewrite("support.params", "support.validate", "support.learned")
