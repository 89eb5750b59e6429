"""bench/ as a package: every bench runs as `python -m bench.<name>` from the repository root, imports
what it shares from bench.common (never from another bench, never through sys.path), and `make bench`
runs every bench whose result is committed (docs/benchmarks.md's table names them). Static checks."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
SOURCES = sorted(BENCH.rglob("*.py"))
GPU = {"gpu_check", "gpu_device", "gpu_mfu"}  # run on a lent GPU (`make gpu-check`), not by `make bench`
# bench -> bench imports that are not shared code: (importing file, imported module) and why
BENCH_TO_BENCH = {("bench/gpu_device.py", "bench.gpu_mfu"): "part a runs the MFU bench as one of its steps"}
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


def test_make_bench_runs_every_bench_with_a_committed_result() -> None:
    run = set(re.findall(r"-m bench\.(\w+)", make_bench_recipe()))
    writers = set(written_by().values())
    assert writers - GPU <= run, f"not run by `make bench`: {sorted(writers - GPU - run)}"
    assert not run & GPU
    assert all((BENCH / f"{name}.py").is_file() for name in run)


def test_docs_benchmarks_table_names_every_result_file() -> None:
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    table = page[page.index("## What writes what"):]
    missing = [name for name in sorted(p.name for p in (BENCH / "results").glob("*.json")) if f"`{name}`" not in table]
    assert missing == []
    for name in set(written_by().values()):
        assert f"| `bench.{name}" in table, f"bench.{name} writes a committed result: give it a row"
