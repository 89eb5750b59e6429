"""DVCLive metrics of a training run: the records of `Progress.history`, stepped by update."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nmt.errors import NmtError


def open_live(live_dir: Path | None, resume: bool) -> Any:
    """A DVCLive logger writing to `live_dir` (None: no logging); `resume` continues its files."""
    if live_dir is None:
        return None
    from dvclive import Live
    from scmrepo.exceptions import SCMError

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
