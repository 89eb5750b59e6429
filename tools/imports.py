"""What `nmt` code a module runs: its imports, walked with `ast` (no code is executed). tools/graph.py lists a
stage's code deps with it; tests/test_architecture.py holds the layout rules with it.

Every `import` / `from ... import` anywhere in a module counts (also those inside functions:
they run when the function does). `from nmt.model import checkpoint` imports the submodule
`nmt.model.checkpoint`; importing `nmt.a.b` also runs `nmt/__init__.py` and `nmt/a/__init__.py`.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("nmt", "tools")  # ours: the library, and the development tools (tools/publish renders the pages)


def module_file(name: str) -> Path | None:
    """The source file of module `name` (a package: its `__init__.py`), or None if not ours."""
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def direct_imports(path: Path) -> set[str]:
    """Names of our modules (`nmt`, `tools`) that the file at `path` imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)  # submodules imported by name
    return {n for n in found if n.split(".")[0] in PACKAGES and module_file(n) is not None}


def with_parents(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def closure(entry: str) -> set[Path]:
    """Every file of `nmt` that running module `entry` may execute."""
    seen: set[str] = set()
    todo = set(with_parents(entry))
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_file(name)
        if path is not None:
            for imported in direct_imports(path):
                todo |= with_parents(imported) - seen
    return {p for p in (module_file(n) for n in seen) if p is not None}


def expand(deps: list[str]) -> set[Path]:
    """dvc.yaml deps under nmt/ as files: a folder stands for every .py file below it."""
    files: set[Path] = set()
    for dep in deps:
        path = ROOT / dep
        if path.is_dir():
            files |= set(path.rglob("*.py"))
        elif path.suffix == ".py":
            files.add(path)
    return {f for f in files if "__pycache__" not in f.parts}
