"""The fine-tune's training run: the parent's weights continued on the new corpus (plus replay), on the
fine-tune's own schedule and budget, with the train stage's update, validation and checkpoints.

Read top to bottom: `load_parent()` reads the model the run starts from; `setup()` builds the
train loop's `Run` around it (fresh Adam, `FinetuneSchedule`); `finetune()` runs epochs of the new
pairs and a fresh replay sample (`nmt.finetune.replay`) through `nmt.train.loop.run_epoch` and
`end_of_epoch` until `max_steps`, early stopping or `max_minutes` (`Deadline`). A run resumes from
its checkpoints only with the settings it started with (`run.json` beside them): other settings
are an error naming them, never a silent restart that throws the done updates away.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch

from nmt.config.finetune import FinetuneConfig
from nmt.config.model import ModelConfig
from nmt.config.train import TrainConfig
from nmt.errors import ConfigError, DataError, TrainingInterrupted
from nmt.files.atomic import atomic_write_text
from nmt.files.digest import sha256_file
from nmt.finetune.replay import epoch_mix
from nmt.model import checkpoint
from nmt.model.transformer import Transformer, build_model
from nmt.text.vocabularies import Vocabularies, load_vocabularies
from nmt.train.batching import length_batches, lengths, padding_waste
from nmt.train.distributed import init_distributed
from nmt.train.live import open_live
from nmt.train.loop import Epoch, all_positions, end_of_epoch, lazy_loss_checks, pick_device, run_epoch, save, use_bf16
from nmt.train.loss import LabelSmoothingKL
from nmt.train.pairs import PairArrays, bin_direction, open_split
from nmt.train.resume import Progress, restore, resume_conflict
from nmt.train.run import Run, attention_kernels
from nmt.train.stop import GracefulStop

log = logging.getLogger(__name__)

RUN_RECORD = "run.json"  # beside the checkpoints: the settings and parent they were trained with
_CODE = ("finetune/loop.py", "finetune/replay.py")  # modules that decide the weights beyond nmt/train's
_NMT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Parent:
    """The trained model a fine-tune starts from: a model file or a training checkpoint."""

    path: Path
    sha256: str  # of the file: the fine-tune's record of where it came from
    state: dict[str, Any]
    model_cfg: ModelConfig
    vocabs: Vocabularies


def load_parent(path: Path) -> Parent:
    state = checkpoint.load(path)  # DataError naming the file: missing, damaged, not a model
    return Parent(Path(path), sha256_file(Path(path)), state, checkpoint.model_config_of(state),
                  checkpoint.vocabs_of(state))


def check_fits(parent: Parent, vocabs: Vocabularies, vocab_dir: Path) -> None:
    """The new corpus's ids must have been made with the parent's vocabularies, in its direction."""
    if vocabs.direction != parent.vocabs.direction:
        raise DataError(f"{parent.path} translates {parent.vocabs.direction}, the fine-tune's data is "
                        f"{vocabs.direction} ({vocab_dir}); set data.direction: {parent.vocabs.direction} in the "
                        "fine-tune's params")
    for side in ("src", "tgt"):
        if parent.vocabs.manifest[side]["sha256"] != vocabs.manifest[side]["sha256"]:
            raise DataError(f"{vocab_dir}: its {side} vocabulary is not {parent.path}'s; a fine-tune keeps the "
                            "parent's vocabularies: write them with the finetune parent stage "
                            "(`nmt finetune-parent`) and binarize the new corpus with them")


@dataclass
class FinetuneSchedule:
    """LambdaLR's multiplier after `done` updates (a callable object: the scheduler's state keeps it)."""

    lr: float
    warmup: int
    cooldown: float
    max_steps: int

    def __call__(self, done: int) -> float:
        """Linear warm-up over `warmup` updates, `lr` held, then linear to 0 over the last `cooldown`
        share of `max_steps` (0 after update `max_steps`)."""
        step = done + 1
        rate = self.lr * min(1.0, step / self.warmup) if self.warmup else self.lr
        if self.cooldown > 0:
            span = max(round(self.cooldown * self.max_steps), 1)
            rate *= min(1.0, max(self.max_steps - step + 1, 0) / span)
        return rate


class Deadline(GracefulStop):
    """GracefulStop that also asks the loop to stop (checkpointed) once `minutes` have passed."""

    def __init__(self, minutes: float | None) -> None:
        super().__init__()
        self._signalled, self.expired = False, False
        self._end = None if minutes is None else time.monotonic() + 60.0 * minutes

    @property  # type: ignore[override]
    def requested(self) -> bool:
        if not self._signalled and self._end is not None and time.monotonic() >= self._end:
            self.expired = True
        return self._signalled or self.expired

    @requested.setter
    def requested(self, value: bool) -> None:
        self._signalled = value


def code_fingerprint() -> str:
    digest = hashlib.sha256()
    for name in _CODE:
        digest.update((_NMT / name).read_bytes())
    return digest.hexdigest()


def run_record(parent: Parent, ft: FinetuneConfig, cfg: TrainConfig) -> dict[str, Any]:
    record = {"parent": {"path": str(parent.path), "sha256": parent.sha256}, "finetune": asdict(ft),
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
            ckpts.clear()
            found = []
        elif changed:
            raise ConfigError(f"{ckpts.root}: a fine-tune with other settings stopped here ({'; '.join(changed)}); "
                              f"set them back to resume it, or delete {ckpts.root} to start this one afresh")
        elif (old.get("parent", {}).get("sha256"), old.get("code")) != (record["parent"]["sha256"], record["code"]):
            log.warning("%s: trained from another parent or with other fine-tune code; starting over", ckpts.root)
            ckpts.clear()
            found = []
    if not found:
        ckpts.root.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(record, indent=2) + "\n")
        return None
    for latest in found:
        try:
            state = checkpoint.load(latest)
            break
        except DataError as exc:
            log.warning("%s; resuming from the checkpoint before it", exc)
            latest.unlink(missing_ok=True)
    else:
        return None
    conflict = resume_conflict(state, run.model_cfg, run.cfg, run.vocabs)
    if conflict is not None:
        log.warning("not resuming from %s: %s; starting over", latest, conflict)
        ckpts.clear()
        return None
    return restore(state, latest, run.model, run.optimizer, run.scheduler)


_FREE = {"epochs", "patience", "log_every", "save_every", "num_threads", "device", "max_val_loss", "keep_last",
         "average_last", "compile"}  # train settings a resumed fine-tune may change
_FT_FREE = {"max_minutes", "general_sets", "max_general_drop"}  # and finetune settings (the clock, the compare gate)


def finished(ckpts: checkpoint.CheckpointDir, prog: Progress, why: str) -> None:
    """Mark the run in `run.json` as done (another run with other settings may then replace it)."""
    path = ckpts.root / RUN_RECORD
    record = json.loads(path.read_text(encoding="utf-8"))
    record["finished"] = {"step": prog.step, "why": why}
    atomic_write_text(path, json.dumps(record, indent=2) + "\n")


@dataclass(frozen=True)
class Data:
    new: PairArrays  # the new corpus's training pairs within train.max_len
    replay: PairArrays | None  # the parent's training pairs to sample from (None: no replay)
    val: PairArrays  # the new corpus's validation pairs


def open_data(parent: Parent, ft: FinetuneConfig, cfg: TrainConfig, vocab_dir: Path, bin_dir: Path,
              replay_bin: Path | None) -> tuple[Vocabularies, Data]:
    vocabs = load_vocabularies(vocab_dir, bin_direction(bin_dir))
    check_fits(parent, vocabs, vocab_dir)
    if ft.replay > 0 and replay_bin is None:
        raise ConfigError(f"finetune.replay is {ft.replay:g} but no parent training data was given; pass --replay "
                          "(the parent's data/bin) or set finetune.replay: 0")
    replay = open_split(replay_bin, "train", vocabs).within(cfg.max_len) if ft.replay > 0 else None
    return vocabs, Data(open_split(bin_dir, "train", vocabs).within(cfg.max_len), replay,
                        open_split(bin_dir, "val", vocabs))


def setup(parent: Parent, ft: FinetuneConfig, train_cfg: TrainConfig, vocab_dir: Path, bin_dir: Path,
          replay_bin: Path | None, ckpt_dir: Path, live_dir: Path | None) -> tuple[Run, Progress, Data]:
    """The train loop's `Run` with the parent's weights, a fresh Adam on the fine-tune schedule, and the
    resumed progress of an interrupted fine-tune with the same settings."""
    cfg = replace(train_cfg, max_steps=ft.max_steps)
    info = init_distributed("cuda" if cfg.device != "cpu" and torch.cuda.is_available() else "cpu")
    if info.enabled:
        raise ConfigError("a fine-tune runs in one process; run `nmt finetune` without torchrun")
    device = pick_device(cfg.device, info)
    if device.type == "cpu" and cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)
    vocabs, data = open_data(parent, ft, cfg, vocab_dir, bin_dir, replay_bin)
    model: Transformer = build_model(parent.model_cfg, vocabs.src, vocabs.tgt).to(device)
    checkpoint.load_weights(model, parent.state["model"], parent.path)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=1.0, betas=(0.9, 0.98), eps=1e-9, fused=device.type in ("cpu", "cuda"))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, FinetuneSchedule(ft.lr, ft.warmup, ft.cooldown,
                                                                              ft.max_steps))
    ckpts = checkpoint.CheckpointDir(ckpt_dir, cfg.keep_last)
    run = Run(model_cfg=parent.model_cfg, cfg=cfg, vocabs=vocabs, token_pairs=[], train_pairs=data.new,
              val_pairs=data.val, model=model, net=model,
              criterion=LabelSmoothingKL(len(vocabs.tgt), cfg.label_smoothing),
              optimizer=optimizer, scheduler=scheduler, ckpts=ckpts, device=device, info=info,
              bf16=use_bf16(cfg.precision, device), lazy_checks=lazy_loss_checks(device),
              all_positions=all_positions(cfg.loss_positions, device), live=None)
    prog = resume(ckpts, run_record(parent, ft, cfg), run)
    run = replace(run, live=open_live(live_dir, resume=prog is not None, step=prog.step if prog else 0))
    log.info("fine-tuning %s (%s) on %d new pairs%s; update %d of %d", parent.path, vocabs.direction, len(data.new),
             f" + {ft.replay:.0%} replayed" if data.replay is not None else "", prog.step if prog else 0, ft.max_steps)
    return run, prog or Progress(), data


def epoch_of(run: Run, prog: Progress, data: Data, ft: FinetuneConfig) -> Epoch:
    """Epoch `prog.epoch`'s pairs (new + replay sample) and batches, rebuilt from the seed and the epoch."""
    pairs = epoch_mix(data.new, data.replay, ft.replay, run.cfg.seed, prog.epoch)
    batches = length_batches(*lengths(pairs), run.cfg.max_tokens, run.cfg.seed, prog.epoch)
    return Epoch(pairs, batches, padding_waste(pairs, batches))


def finetune(parent: Parent, ft: FinetuneConfig, train_cfg: TrainConfig, vocab_dir: Path, bin_dir: Path,
             replay_bin: Path | None, ckpt_dir: Path, live_dir: Path | None = None
             ) -> tuple[Transformer, Progress, str]:
    """Fine-tune; return the model (the weights at the end), its progress, and why training stopped."""
    run, prog, data = setup(parent, ft, train_cfg, vocab_dir, bin_dir, replay_bin, ckpt_dir, live_dir)
    why = f"train.epochs ({run.cfg.epochs}) done"
    with Deadline(ft.max_minutes) as stop, attention_kernels(run.device, run.cfg.cudnn_attention):
        while prog.epoch < run.cfg.epochs:
            if prog.step >= ft.max_steps:
                why = f"finetune.max_steps ({ft.max_steps}) reached"
                break
            epoch, started = epoch_of(run, prog, data, ft), time.perf_counter()
            try:
                run_epoch(run, prog, epoch, stop)
            except TrainingInterrupted:  # checkpointed by run_epoch; the clock's stop ends the run as usual
                if not stop.expired:
                    raise
                why = f"finetune.max_minutes ({ft.max_minutes:g}) reached at update {prog.step}"
                end_of_epoch(run, prog, epoch.waste, time.perf_counter() - started)
                break
            whole = prog.batch >= len(epoch.batches)  # else max_steps was reached inside the epoch
            if whole:
                prog.epoch, prog.batch = prog.epoch + 1, 0
            improved = end_of_epoch(run, prog, epoch.waste, time.perf_counter() - started)
            save(run, prog, epoch_end=whole, best=improved and whole)
            if prog.bad_epochs >= run.cfg.patience:
                why = f"early stopping ({run.cfg.early_stop_metric} flat for {run.cfg.patience} epochs)"
                break
    if run.live is not None:
        run.live.end()
    finished(run.ckpts, prog, why)
    log.info("fine-tune stopped: %s", why)
    return run.model, prog, why
