"""The stages `nmt adapt` runs, in the fine-tune pipeline's order (pipeline/stages.yaml: download, validate,
tokenize, parent, binarize, finetune, evaluate, evaluate-parent, compare, export), each the stage module's
own `main` with its gate, on the run's params file and folders; and the record that lets a second run
skip what is done.

The record (`adapt.json` in the run's folder, written whole after each step) keeps each finished step's
key: a digest of its command and of the params it reads (`reads`, as pipeline/stages.yaml tracks them for
DVC, from the params file as the stages read it, the recipe laid under it), chained through the steps
before it from the parent's SHA-256. A step whose key and outputs are there is skipped; a changed key
re-runs it, and once one step has run every step after it runs too (its inputs may have changed). A
fine-tune killed part way resumes from its checkpoints with the same key and starts afresh (checkpoints
cleared) with another; `--max-minutes` is a clock, not a setting, and re-runs nothing.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nmt.adapt.plan import AdaptRequest, Plan
from nmt.config.check import WithFinetune
from nmt.config.loader import read_params
from nmt.errors import NmtError
from nmt.files.atomic import atomic_write_text
from nmt.files.digest import sha256_file

log = logging.getLogger(__name__)

RECORD = "adapt.json"
INTERRUPTED = 130  # a stage's exit status after Ctrl-C (nmt.command)
FLAGS = ("Keys a gate names are this run's params.yaml, which nmt adapt writes: finetune.max_general_drop is "
         "--max-drop, the max_filtered_rate and max_duplicate_rate of data.mixes.adapt.sources[0-2] are "
         "--max-dropped and --max-repeated, finetune.* --max-steps and --lr; others are the recipe's (--recipe)")


class StepFailed(NmtError):
    """A stage of the run failed; it has said why (its gate's report names the checks)."""


@dataclass(frozen=True)
class Step:
    name: str  # the stage, as `nmt STAGE` names it
    module: str  # its module (main(argv))
    argv: tuple[str, ...]
    outputs: tuple[Path, ...]  # what it leaves when it passed

    @property
    def reads(self) -> tuple[str, ...]:
        """The params it reads: sections or dotted keys (pipeline/stages.yaml's `params` of the stage)."""
        return READS[self.name]


@dataclass(frozen=True)
class Folders:
    """The run's layout under `--out`."""

    root: Path

    def __getattr__(self, name: str) -> Path:  # data, models, reports, cache
        return self.root / name


def steps(req: AdaptRequest, plan: Plan) -> list[Step]:
    f = Folders(req.out)
    data, models, reports = f.data, f.models, f.reports
    p = ("--params", str(plan.params))
    replay = ("--replay", str(plan.replay)) if plan.replay is not None else ()
    found = [
        Step("download", "nmt.data.download", (*p, "--out", f"{data}/raw"), (data / "raw",)),
        Step("validate", "nmt.data.validate", (*p, "--raw", f"{data}/raw", "--out", f"{data}/validated", "--reports",
                                               f"{reports}/data"), (data / "validated", reports / "data" / "raw.json")),
        Step("tokenize", "nmt.data.tokenize", (*p, "--in", f"{data}/validated", "--out", f"{data}/tokens", "--reports",
                                               f"{reports}/data", "--cache-dir", f"{f.cache}/tokenize"),
             (data / "tokens",)),
        Step("finetune-parent", "nmt.finetune.parent", (*p, "--parent", str(plan.parent), "--direction",
                                                        plan.direction, "--tokens", f"{data}/tokens", "--out",
                                                        f"{data}/vocab", "--reports", f"{reports}/validation"),
             (data / "vocab",)),
        Step("binarize", "nmt.data.binarize", (*p, "--direction", plan.direction, "--tokens", f"{data}/tokens",
                                               "--vocab", f"{data}/vocab", "--out", f"{data}/bin", "--reports",
                                               f"{reports}/validation"), (data / "bin",)),
        Step("finetune", "nmt.finetune.stage", (*p, "--parent", str(plan.parent), "--vocab", f"{data}/vocab", "--bin",
                                                f"{data}/bin", *replay, "--checkpoints", f"{models}/checkpoints",
                                                "--model", f"{models}/model.pt", "--reports", f"{reports}/validation",
                                                "--train-reports", f"{reports}/train"), (models / "model.pt",)),
        Step("evaluate", "nmt.evaluate.stage", (*p, "--model", f"{models}/model.pt", "--data", f"{data}/validated",
                                                "--tokens", f"{data}/tokens", "--reports", str(reports), "--gates",
                                                f"{reports}/validation", "--curves", f"{reports}/train/curves.png"),
             (reports / "metrics.json",)),
        Step("evaluate-parent", "nmt.evaluate.stage", (*p, "--model", str(plan.parent), "--data", f"{data}/validated",
                                                       "--tokens", f"{data}/tokens", "--reports", f"{reports}/parent",
                                                       "--gates", f"{reports}/parent/validation"),
             (reports / "parent" / "metrics.json",)),
        Step("finetune-compare", "nmt.finetune.compare", (*p, "--parent-reports", f"{reports}/parent", "--reports",
                                                          str(reports), "--data", f"{data}/validated", "--curves",
                                                          f"{reports}/train/curves.png", "--out",
                                                          f"{reports}/compare", "--gates", f"{reports}/validation"),
             (reports / "compare" / "finetune.md",)),
    ]
    if req.export:
        found.append(Step("export", "nmt.export.stage", (*p, "--model", f"{models}/model.pt", "--data",
                                                         f"{data}/validated", "--metrics", f"{reports}/metrics.json",
                                                         "--out", f"{models}/onnx", "--reports",
                                                         f"{reports}/validation", "--export-metrics",
                                                         f"{reports}/export.json", "--corpus-report",
                                                         f"{reports}/data/raw.json"), (models / "onnx",)))
    return found


DATA = ("data.corpus", "data.corpora", "data.mixes")
READS = {"download": DATA, "validate": (*DATA, "validate"), "tokenize": (*DATA, "tokenize"),
         "finetune-parent": ("data.direction", "tokenize"), "binarize": ("data.direction",),
         "finetune": ("finetune.lr", "finetune.warmup", "finetune.cooldown", "finetune.max_steps", "finetune.replay",
                      "train"),
         "evaluate": ("evaluate",), "evaluate-parent": ("evaluate",),
         "finetune-compare": ("data.direction", "finetune.general_sets", "finetune.max_general_drop"),
         "export": ("export", "evaluate.beam_size", "evaluate.alpha", "evaluate.max_extra")}


def _value(params: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        params = params.get(part, {}) if isinstance(params, dict) else {}
    return params


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def read_record(path: Path) -> dict[str, dict[str, str]]:
    """The record of an earlier run; an unreadable one is no record (every step runs again)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        return {"done": dict(record["done"]), "started": dict(record["started"])}
    except (OSError, ValueError, KeyError, TypeError):
        return {"done": {}, "started": {}}


def run_steps(req: AdaptRequest, plan: Plan, force: bool = False, reached: list[str] | None = None) -> None:
    """Run every step not already done with the same key; `StepFailed` names the one that failed. `reached`
    gets the name of each step that passed or was up to date, and of the one that failed."""
    record_path = req.out / RECORD
    record = {"done": {}, "started": {}} if force else read_record(record_path)
    if force:
        shutil.rmtree(req.out / "models" / "checkpoints", ignore_errors=True)
    params = read_params(plan.params, WithFinetune)
    key = _digest([sha256_file(plan.parent), sha256_file(plan.replay / "manifest.json") if plan.replay else None])
    todo, ran = steps(req, plan), False
    for i, step in enumerate(todo, start=1):
        key = _digest([key, step.name, step.argv, {k: _value(params, k) for k in step.reads}])
        (reached if reached is not None else []).append(step.name)
        if not ran and record["done"].get(step.name) == key and all(p.exists() for p in step.outputs):
            log.info("adapt: step %d of %d, %s: up to date", i, len(todo), step.name)
            continue
        ran = True
        record["done"].pop(step.name, None)
        if step.name == "finetune" and record["started"].get(step.name) not in (None, key):
            log.info("adapt: the fine-tune's settings or data changed since its checkpoints were written: "
                     "starting afresh")
            shutil.rmtree(req.out / "models" / "checkpoints", ignore_errors=True)
        record["started"][step.name] = key
        atomic_write_text(record_path, json.dumps(record, indent=2) + "\n")
        log.info("adapt: step %d of %d, %s", i, len(todo), step.name)
        status = importlib.import_module(step.module).main(list(step.argv))
        if status == INTERRUPTED:
            raise KeyboardInterrupt
        if status:
            raise StepFailed(f"step {i} of {len(todo)}, {step.name}, failed (said above); fix what it names and run "
                             f"the same command again: the steps done are not run again. {FLAGS}")
        record["done"][step.name] = key
        atomic_write_text(record_path, json.dumps(record, indent=2) + "\n")
