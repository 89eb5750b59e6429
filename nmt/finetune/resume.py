"""Where a fine-tune resumes: `run.json` beside its checkpoints records the settings, the parent and the
fine-tune code it started with. An unfinished run continues only with those settings (others: an error
naming them, the checkpoints kept); a finished run, another parent or other code start afresh.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict
from pathlib import Path
from typing import Any

from nmt.config.finetune import FinetuneConfig
from nmt.config.train import TrainConfig
from nmt.errors import ConfigError, DataError
from nmt.files.atomic import atomic_write_text
from nmt.model import checkpoint
from nmt.train.resume import Progress, restore, resume_conflict
from nmt.train.run import Run

log = logging.getLogger(__name__)

RUN_RECORD = "run.json"  # beside the checkpoints: the settings and parent they were trained with
_CODE = ("finetune/loop.py", "finetune/replay.py", "finetune/resume.py")  # what decides the weights beyond nmt/train
_NMT = Path(__file__).resolve().parents[1]


def code_fingerprint() -> str:
    digest = hashlib.sha256()
    for name in _CODE:
        digest.update((_NMT / name).read_bytes())
    return digest.hexdigest()


def run_record(parent: Path, sha256: str, ft: FinetuneConfig, cfg: TrainConfig) -> dict[str, Any]:
    """What run.json records of a run: its parent, settings and fine-tune code (as JSON reads it back)."""
    record = {"parent": {"path": str(parent), "sha256": sha256}, "finetune": asdict(ft),
              "train": asdict(cfg), "code": code_fingerprint()}
    return json.loads(json.dumps(record))  # as run.json reads back (tuples as lists)


def _changed(old: dict[str, Any], new: dict[str, Any], section: str) -> list[str]:
    return [f"{section}.{k}: {old.get(k)!r} -> {new[k]!r}" for k in new if old.get(k) != new[k]]


def resume(ckpts: checkpoint.CheckpointDir, record: dict[str, Any], run: Run) -> Progress | None:
    """The newest good checkpoint restored into `run` when it was trained with `record`'s settings and
    parent; none yet: `record` written for the run to come. An unfinished run with other settings: a
    `ConfigError` naming them (the checkpoints kept); a finished one, another parent or other fine-tune
    code: the run starts over."""
    path = ckpts.root / RUN_RECORD
    found = ckpts.newest_first()
    if found:
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise ConfigError(f"{ckpts.root} holds checkpoints but no readable {RUN_RECORD}: not a fine-tune's; "
                              "point --checkpoints at an empty folder or delete this one") from None
        changed = _changed({k: v for k, v in old.get("finetune", {}).items() if k not in _FT_FREE},
                           {k: v for k, v in record["finetune"].items() if k not in _FT_FREE}, "finetune")
        changed += _changed({k: v for k, v in old.get("train", {}).items() if k not in _FREE},
                            {k: v for k, v in record["train"].items() if k not in _FREE}, "train")
        if changed and old.get("finished"):
            log.info("%s: the fine-tune there finished with other settings (%s); starting this one", ckpts.root,
                     "; ".join(changed))
            found = []
        elif changed:
            raise ConfigError(f"{ckpts.root}: a fine-tune with other settings stopped here ({'; '.join(changed)}); "
                              f"set them back to resume it, or delete {ckpts.root} to start this one afresh")
        elif (old.get("parent", {}).get("sha256"), old.get("code")) != (record["parent"]["sha256"], record["code"]):
            log.warning("%s: trained from another parent or with other fine-tune code; starting over", ckpts.root)
            found = []
    if not found:
        _start(ckpts, record)
        return None
    for latest in found:
        try:
            state = checkpoint.load(latest)
            break
        except DataError as exc:
            log.warning("%s; resuming from the checkpoint before it", exc)
            latest.unlink(missing_ok=True)
    else:
        _start(ckpts, record)
        return None
    conflict = resume_conflict(state, run.model_cfg, run.cfg, run.vocabs)
    if conflict is not None:
        log.warning("not resuming from %s: %s; starting over", latest, conflict)
        _start(ckpts, record)
        return None
    return restore(state, latest, run.model, run.optimizer, run.scheduler)


def _start(ckpts: checkpoint.CheckpointDir, record: dict[str, Any]) -> None:
    """A fresh run: no checkpoint of another kept, and `record` (not finished) beside the ones to come."""
    ckpts.clear()
    ckpts.root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(ckpts.root / RUN_RECORD, json.dumps(record, indent=2) + "\n")


_FREE = {"epochs", "patience", "log_every", "save_every", "num_threads", "device", "max_val_loss", "keep_last",
         "average_last", "compile"}  # train settings a resumed fine-tune may change
_FT_FREE = {"max_minutes", "general_sets", "max_general_drop"}  # and finetune settings (the clock, the compare gate)


def finished(ckpts: checkpoint.CheckpointDir, prog: Progress, why: str) -> None:
    """Mark the run in `run.json` as done (another run with other settings may then replace it)."""
    path = ckpts.root / RUN_RECORD
    record = json.loads(path.read_text(encoding="utf-8"))
    record["finished"] = {"step": prog.step, "why": why}
    atomic_write_text(path, json.dumps(record, indent=2) + "\n")
