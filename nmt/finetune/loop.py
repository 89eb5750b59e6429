"""The fine-tune's training run: the parent's weights continued on the new corpus (plus replay), on the
fine-tune's own schedule and budget, with the train stage's update, validation and checkpoints.

Read top to bottom: `load_parent()` reads the model the run starts from; `setup()` builds the
train loop's `Run` around it (fresh Adam, `FinetuneSchedule`); `finetune()` runs epochs of the new
pairs and a fresh replay sample (`nmt.finetune.replay`) through `nmt.train.loop.run_epoch` and
`end_of_epoch` until `max_steps`, early stopping or `max_minutes` (`Deadline`). An interrupted run
resumes from its checkpoints only with the settings it started with (nmt/finetune/resume.py).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import torch
from tqdm import tqdm

from nmt.config.finetune import FinetuneConfig
from nmt.config.model import ModelConfig
from nmt.config.train import TrainConfig
from nmt.errors import ConfigError, DataError, TrainingInterrupted
from nmt.files.digest import sha256_file
from nmt.finetune.replay import epoch_mix
from nmt.finetune.resume import finished, resume, run_record
from nmt.model import checkpoint
from nmt.model.transformer import Transformer, build_model
from nmt.text.vocabularies import Vocabularies, load_vocabularies
from nmt.train.batching import length_batches, lengths, padding_waste
from nmt.train.distributed import init_distributed
from nmt.train.live import open_live
from nmt.train.loop import Epoch, all_positions, end_of_epoch, lazy_loss_checks, pick_device, run_epoch, save, use_bf16
from nmt.train.loss import LabelSmoothingKL
from nmt.train.pairs import PairArrays, bin_direction, open_split
from nmt.train.resume import Progress
from nmt.train.run import Run, attention_kernels
from nmt.train.stop import GracefulStop

log = logging.getLogger(__name__)


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

    @property
    def requested(self) -> bool:
        if not self._signalled and self._end is not None and time.monotonic() >= self._end:
            self.expired = True
        return self._signalled or self.expired

    @requested.setter
    def requested(self, value: bool) -> None:
        self._signalled = value


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
    replay = open_split(cast(Path, replay_bin), "train", vocabs).within(cfg.max_len) if ft.replay > 0 else None
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
    prog = resume(ckpts, run_record(parent.path, parent.sha256, ft, cfg), run)
    run = replace(run, live=open_live(live_dir, resume=prog is not None, step=prog.step if prog else 0))
    log.info("fine-tuning %s (%s) on %d new pairs%s; update %d of %d", parent.path, vocabs.direction, len(data.new),
             f" + {ft.replay:.0%} replayed" if data.replay is not None else "", prog.step if prog else 0, ft.max_steps)
    return run, prog or Progress(), data


def epoch_of(run: Run, prog: Progress, data: Data, ft: FinetuneConfig) -> Epoch:
    """Epoch `prog.epoch`'s pairs (new + replay sample) and batches, rebuilt from the seed and the epoch."""
    pairs = epoch_mix(data.new, data.replay, ft.replay, run.cfg.seed, prog.epoch)
    batches = length_batches(*lengths(pairs), run.cfg.max_tokens, run.cfg.seed, prog.epoch)
    return Epoch(pairs, batches, padding_waste(pairs, batches))


class Clock:
    """Updates done of `total` since `first`, and the time left at the rate so far (a log line where no
    bar is drawn: a pipe, a log file)."""

    def __init__(self, first: int, total: int) -> None:
        self.first, self.total, self.start = first, total, time.monotonic()

    def tell(self, step: int) -> str:
        spent = time.monotonic() - self.start
        left = (self.total - step) * spent / max(step - self.first, 1)
        return (f"update {step} of {self.total} ({step / self.total:.0%}), {spent / 60:.1f} min so far, "
                f"about {left / 60:.1f} min left")


def finetune(parent: Parent, ft: FinetuneConfig, train_cfg: TrainConfig, vocab_dir: Path, bin_dir: Path,
             replay_bin: Path | None, ckpt_dir: Path, live_dir: Path | None = None
             ) -> tuple[Transformer, Progress, str]:
    """Fine-tune; return the model (the weights at the end), its progress, and why training stopped."""
    run, prog, data = setup(parent, ft, train_cfg, vocab_dir, bin_dir, replay_bin, ckpt_dir, live_dir)
    why = f"train.epochs ({run.cfg.epochs}) done"
    updates = tqdm(total=ft.max_steps, initial=prog.step, desc="fine-tune", unit="update", disable=None)
    clock = Clock(prog.step, ft.max_steps)
    with Deadline(ft.max_minutes) as stop, attention_kernels(run.device, run.cfg.cudnn_attention), updates:
        while prog.epoch < run.cfg.epochs:
            if prog.step >= ft.max_steps:
                why = f"finetune.max_steps ({ft.max_steps}) reached"
                break
            epoch, started = epoch_of(run, prog, data, ft), time.perf_counter()
            try:
                run_epoch(run, prog, epoch, stop, updates)
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
            log.info("fine-tune: %s", clock.tell(prog.step))
            if prog.bad_epochs >= run.cfg.patience:
                why = f"early stopping ({run.cfg.early_stop_metric} flat for {run.cfg.patience} epochs)"
                break
    if run.live is not None:
        run.live.end()
    finished(run.ckpts, prog, why)
    log.info("fine-tune stopped: %s", why)
    return run.model, prog, why
