"""bench/ as a package: every bench runs as `python -m bench.<name>` from the repository root, imports
what it shares from bench.common (never from another bench, never through sys.path), and `make bench`
runs every bench whose result is committed (docs/benchmarks.md's table names them). Static checks."""

from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
SOURCES = sorted(BENCH.rglob("*.py"))
# the GPU checks (tools/gpu/ now; their committed results name them bench.gpu_*): `make gpu-check`, not `make bench`
GPU = {"gpu_check", "gpu_device", "gpu_mfu"}
BENCH_TO_BENCH: dict[tuple[str, str], str] = {}  # bench -> bench imports that are not shared code, and why
STUDY = re.compile(r"^\| `bench\.(\w+)` \(`([0-9a-f]{7,})`", re.M)  # docs/benchmarks.md: a finished study's row
SCRIPT = re.compile(r"python3? (?:-m bench\.(\w+)|bench/(\w+)\.py)")
BY_PATH = re.compile(r"python3? (?:\S*/)?bench/\w+\.py")
GENERATED = re.compile(r"<!-- begin generated: .*?<!-- end generated: [^>]*-->", re.S)


def bench_imports(path: Path) -> list[str]:
    """The bench modules `path` imports (at any depth: function-level imports too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "bench"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "bench":
                found += [f"bench.{a.name}" for a in node.names]
            elif node.module.startswith("bench."):
                found.append(node.module)
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_bench_imports_shared_code_from_bench_common_only(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "sys.path" not in text and "noqa: E402" not in text
    rel = path.relative_to(ROOT).as_posix()
    others = [m for m in bench_imports(path) if not m.startswith("bench.common") and (rel, m) not in BENCH_TO_BENCH]
    assert others == [], f"{rel} imports another bench: move what it shares into bench/common/"


def test_docs_makefile_and_benches_run_benches_as_modules() -> None:
    """`python bench/<name>.py` no longer runs (no sys.path edit): `python -m bench.<name>`. Generated blocks
    quote the committed results' own commands and are left as they are."""
    pages = [ROOT / "README.md", ROOT / "Makefile", *sorted((ROOT / "docs").glob("*.md")), *SOURCES]
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in pages
             for m in BY_PATH.finditer(GENERATED.sub("", p.read_text(encoding="utf-8")))]
    assert found == []


def written_by() -> dict[str, str]:
    """bench/results/<file>.json -> the bench that wrote it (from its recorded command)."""
    out = {}
    for path in sorted((BENCH / "results").glob("*.json")):
        command = json.loads(path.read_text(encoding="utf-8")).get("command")
        if command and (m := SCRIPT.match(command)):
            out[path.name] = m.group(1) or m.group(2)
    return out


def make_bench_recipe() -> str:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return re.search(r"^bench:.*?\n((?:\t.*\n)+)", text, re.M).group(1)


def studies() -> dict[str, str]:
    """The finished studies of docs/benchmarks.md: bench name -> the commit whose tree holds its code."""
    return dict(STUDY.findall((ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")))


def test_make_bench_runs_every_bench_with_a_committed_result() -> None:
    """A committed result's writer is run by `make bench`, or is a finished study whose code the docs name by
    the commit that holds it (and which has left the live tree), or a GPU check."""
    run = set(re.findall(r"-m bench\.(\w+)", make_bench_recipe()))
    writers, done = set(written_by().values()), studies()
    assert writers - GPU - set(done) <= run, f"not run by `make bench`: {sorted(writers - GPU - set(done) - run)}"
    assert not run & (GPU | set(done))
    assert all((BENCH / f"{name}.py").is_file() for name in run)
    for name, commit in done.items():
        assert not (BENCH / f"{name}.py").exists(), f"bench.{name} is listed as finished but is still in bench/"
        shown = subprocess.run(["git", "cat-file", "-e", f"{commit}:bench/{name}.py"], cwd=ROOT, check=False)
        assert shown.returncode == 0, f"docs/benchmarks.md: bench/{name}.py is not at {commit}"


def test_bench_stays_small() -> None:
    """bench/ keeps the benches that guard a claim; finished studies leave it (issue 74: under 3,000 lines for
    ten; 3,100 since bench.first_try, the eleventh, guards docs/pairs.md's "a first try in minutes"; 3,300 since
    bench.js_consumer, the twelfth, measures docs/export.md's JavaScript consumer beside Python, issue 76)."""
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in SOURCES)
    assert lines < 3300, f"bench/ is {lines} lines"


def test_docs_benchmarks_table_names_every_result_file() -> None:
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    table = page[page.index("## What writes what"):]
    missing = [name for name in sorted(p.name for p in (BENCH / "results").glob("*.json")) if f"`{name}`" not in table]
    assert missing == []
    for name in set(written_by().values()) - GPU:  # the GPU checks' row names tools.gpu
        assert f"| `bench.{name}" in table, f"bench.{name} writes a committed result: give it a row"
