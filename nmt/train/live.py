"""Training metrics as DVC reads them: the records of `Progress.history`, stepped by update.

With DVCLive installed, its `Live` logger writes them. Without it (a plain PyTorch image on a GPU
machine has no DVC), `MetricFiles` writes the same files DVCLive would for these calls, so the
train stage runs unchanged there: `<dir>/metrics.json` (the latest value of every metric and its
step) and `<dir>/plots/metrics/<name>.tsv` (a `step<TAB><name>` header, then one row per logged
value), appended to on resume.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from nmt.errors import NmtError
from nmt.files.atomic import atomic_write_text

log = logging.getLogger(__name__)


class MetricFiles:
    """DVCLive's metric files for `step`, `log_metric`, `make_summary` and `end`, without DVCLive."""

    def __init__(self, root: Path, resume: bool) -> None:
        self.root, self.step = Path(root), 0
        self.plots = self.root / "plots" / "metrics"
        self.summary: dict[str, Any] = {}
        if resume and (self.root / "metrics.json").is_file():
            self.summary = json.loads((self.root / "metrics.json").read_text(encoding="utf-8"))
        elif not resume and self.plots.is_dir():
            for old in self.plots.glob("*.tsv"):
                old.unlink()
        self.plots.mkdir(parents=True, exist_ok=True)

    def log_metric(self, name: str, value: float) -> None:
        path = self.plots / f"{name}.tsv"
        new = not path.is_file()
        with path.open("a", encoding="utf-8") as f:
            if new:
                f.write(f"step\t{name}\n")
            f.write(f"{self.step}\t{value}\n")
        self.summary[name] = value

    def make_summary(self) -> None:
        self.summary["step"] = self.step
        atomic_write_text(self.root / "metrics.json", json.dumps(self.summary, indent=4) + "\n")

    def end(self) -> None:
        self.make_summary()


def trim_series(live_dir: Path, upto: int) -> int:
    """Drop the rows past update `upto` from every metric series under `live_dir`: a run killed after
    its last checkpoint logged steps that the resumed run logs again (and a row the kill tore, without
    its newline). Returns the rows dropped."""
    dropped = 0
    for path in sorted((Path(live_dir) / "plots").rglob("*.tsv")):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        if not lines or "step" not in lines[0].rstrip("\n").split("\t"):
            continue
        col = lines[0].rstrip("\n").split("\t").index("step")
        kept = [lines[0]] + [row for row in lines[1:] if row.endswith("\n") and _step(row, col) <= upto]
        if len(kept) < len(lines):
            dropped += len(lines) - len(kept)
            atomic_write_text(path, "".join(kept))
    return dropped


def _step(row: str, col: int) -> float:
    try:
        return float(row.rstrip("\n").split("\t")[col])
    except (IndexError, ValueError):
        return float("inf")  # not a row of numbers: dropped


def open_live(live_dir: Path | None, resume: bool, step: int = 0) -> Any:
    """A metrics logger writing to `live_dir` (None: no logging): DVCLive's, else `MetricFiles`;
    `resume` continues its files from update `step` (rows logged after it, by a run killed before
    its next checkpoint, are dropped first)."""
    if live_dir is None:
        return None
    if resume and (dropped := trim_series(live_dir, step)):
        log.info("%s: %d metric rows past update %d (logged after the last checkpoint) dropped", live_dir, dropped,
                 step)
    try:
        from dvclive import Live
        from scmrepo.exceptions import SCMError
    except ImportError:
        log.info("DVCLive is not installed: writing its metric files in %s directly", live_dir)
        return MetricFiles(live_dir, resume)
    try:
        return Live(dir=str(live_dir), resume=resume, save_dvc_exp=False, report=None, dvcyaml=None)
    except SCMError as exc:  # DVCLive reads the git revision of the project
        raise NmtError(f"DVCLive cannot log metrics: {exc}; make a first commit (`git commit`) in this "
                       "repository, or run outside it") from None


def log_live(live: Any, record: dict[str, float]) -> None:
    """Log every value of `record` at its update (`record["step"]`); a no-op without a logger."""
    if live is None:
        return
    live.step = int(record["step"])
    for key, value in record.items():
        if key != "step":
            live.log_metric(key, value)
    live.make_summary()
