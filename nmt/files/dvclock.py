"""A dvc.lock that a kill cannot cut short: a verified copy beside it, and a damaged lock mended from it.

DVC rewrites a whole dvc.lock in place when a stage ends. A run killed while it writes (a timeout right
after "Updating lock file") leaves the file cut short, and the next run rewrites it from what is left:
the entries of stages the user never touched are gone, and their models would be trained again. The
project's entry points (`make repro*`, `make finetune`, the Prefect flows) run DVC through `guarded`:

- before DVC runs, the lock is read; a lock that does not parse, or that lost entries the verified copy
  has, or whose entries were cut (no `cmd`, or no `outs` where the copy has them), is mended from the
  copy (its good entries kept, the lost and cut ones taken back) with one line saying so;
- then the lock, whole, is saved as the new verified copy (`.dvc/tmp/nmt-locks/`, its SHA-256 on its first
  line: one atomic write, so a kill leaves the old copy or the new one);
- after DVC, the same again, so a run that died mid-write is mended at once.

DVC itself only adds and updates entries (an entry of a stage no graph has any more is harmless), so an
entry missing from the lock but in the copy was lost, not removed. A damaged lock with no verified copy
is refused with the command that recovers it (`git checkout <lock>`). Run alone:
`python -m nmt.files.dvclock --lock pairs/dvc.lock -- dvc repro pairs/dvc.yaml`.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from nmt.errors import DataError
from nmt.files.atomic import atomic_write_bytes, atomic_write_text

log = logging.getLogger(__name__)
COPIES = Path(".dvc") / "tmp" / "nmt-locks"  # from the project root
DIGEST = b"# sha256: "  # the copy's first line: the SHA-256 of the rest, written with it in one atomic write


def _stages(text: str) -> dict[str, Any] | None:
    """The lock's entries, or None when it is not a lock any more (cut mid-token, not a mapping)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("stages", {}), dict):
        return None
    return data.get("stages") or {}


def copy_of(project: Path, lock: Path) -> Path:
    return project / COPIES / (lock.relative_to(project).as_posix().replace("/", "--"))


def _verified(copy: Path) -> dict[str, Any] | None:
    """The saved copy's entries, if the SHA-256 on its first line says it is whole."""
    if not copy.is_file():
        return None
    head, _, body = copy.read_bytes().partition(b"\n")
    if head != DIGEST + hashlib.sha256(body).hexdigest().encode():
        return None
    return _stages(body.decode("utf-8"))


def _cut(entry: Any, saved: Any) -> bool:
    if not isinstance(entry, dict) or "cmd" not in entry:
        return True
    return "outs" not in entry and isinstance(saved, dict) and "outs" in saved


def mend(project: Path, lock: Path) -> list[str]:
    """Mend `lock` from its verified copy if it is damaged; then save it as the copy. Returns the entries
    taken back from the copy ([] when the lock was whole)."""
    copy = copy_of(project, lock)
    saved = _verified(copy)
    parsed = _stages(lock.read_text(encoding="utf-8")) if lock.is_file() else {}
    if parsed is None and saved is None:
        raise DataError(f"{lock}: damaged (does not parse) and no verified copy of it is kept here; recover it "
                        f"with `git checkout {lock.relative_to(project)}`")
    current, saved = parsed or {}, saved or {}
    back = [n for n, e in saved.items() if n not in current or _cut(current[n], e)]
    dropped = [n for n, e in current.items() if n not in saved and _cut(e, None)]  # cut, and in no copy: re-run
    if parsed is None or back or dropped:
        merged = {n: e for n, e in current.items() if n not in dropped} | {n: saved[n] for n in back}
        text = yaml.safe_dump({"schema": "2.0", "stages": merged}, sort_keys=False, width=120, allow_unicode=True)
        atomic_write_text(lock, text)
        log.warning("%s: %d entr%s lost or cut short (a run killed while DVC wrote it?) taken back from its "
                    "verified copy %s%s%s", lock, len(back), "y" if len(back) == 1 else "ies",
                    copy.relative_to(project), ": " + ", ".join(back[:5]) + (" ..." if len(back) > 5 else "")
                    if back else "", f"; {len(dropped)} cut entr{'y' if len(dropped) == 1 else 'ies'} of no copy "
                    f"dropped (those stages run again): {', '.join(dropped)}" if dropped else "")
    if lock.is_file():
        data = lock.read_bytes()
        copy.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(copy, DIGEST + hashlib.sha256(data).hexdigest().encode() + b"\n" + data)
    return back


def mend_all(project: Path) -> None:
    """Each dvc.lock of the project (beside each dvc.yaml, one folder deep) mended and saved."""
    root = Path(project).resolve()
    for lock in sorted({root / "dvc.lock", *root.glob("*/dvc.lock")}):
        if lock.is_file():
            mend(root, lock)


def guarded(project: Path, locks: Sequence[Path], command: Sequence[str]) -> int:
    """Run `command` (DVC) in `project` with `locks` mended and saved before and after it."""
    for lock in locks:
        mend(project, lock)
    status = subprocess.call(list(command), cwd=project)
    for lock in locks:
        mend(project, lock)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    split = args.index("--") if "--" in args else len(args)
    parser = argparse.ArgumentParser(prog="python -m nmt.files.dvclock",
                                     description="run COMMAND (dvc repro ...) with each --lock mended from its "
                                                 "verified copy and saved, before and after",
                                     usage="%(prog)s --lock FILE [--lock FILE ...] -- COMMAND ...")
    parser.add_argument("--lock", action="append", type=Path, required=True, help="a dvc.lock the command may write")
    parser.add_argument("--project", type=Path, default=Path("."), help="the project root (default: .)")
    opts = parser.parse_args(args[:split])
    command = args[split + 1:]
    if not command:
        parser.error("no COMMAND after --")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    project = opts.project.resolve()
    try:
        return guarded(project, [project / lock for lock in opts.lock], command)
    except DataError as exc:
        log.error("%s", exc)
        return 2


if __name__ == "__main__":
    sys.exit(main())
