"""An earlier commit of this repository checked out beside this one, for the benches that compare
this checkout against it on one host (bench/repro_compare.py, bench/serve_latency.py): a detached
`git worktree` in a folder of the caller's, removed again however the comparison ends. Standard
library only."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def short_commit(rev: str) -> str:
    """`rev` (a commit, tag or expression such as `abc123^`) as its short commit id; SystemExit naming
    it when git does not know it."""
    run = subprocess.run(["git", "rev-parse", "--short", "--verify", f"{rev}^{{commit}}"], cwd=ROOT,
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"--against {rev}: not a commit of this repository ({run.stderr.strip()})")
    return run.stdout.strip()


@contextmanager
def worktree(commit: str, folder: Path) -> Iterator[Path]:
    """`commit` checked out (detached) at `folder/checkout-<commit>` while the block runs."""
    path = folder / f"checkout-{commit}"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(path), commit], cwd=ROOT, check=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=False)
