"""Stage 5, train: the Transformer on token-budget batches with Adam + Noam (5.3) and the
label-smoothed KL loss (5.4); validation, early stopping and checkpoint averaging (6.1).

Read top to bottom: `setup()` builds the `Run` (device, data, model, optimizer, resumed
progress); `train()` then, for each epoch, builds this rank's batches (`epoch_batches()`),
runs one `update()` per group of `accum_steps` batches (`run_epoch()`), and at the epoch end
validates, logs and updates early stopping (`end_of_epoch()`) and checkpoints (`save()`).
SIGTERM / Ctrl-C finish the current update, checkpoint and stop; a NaN loss stops with the
step and batch named and the last good checkpoint kept. Multi-GPU / multi-node through
`torchrun` (DistributedDataParallel); bf16 autocast on CUDA and on CPUs with native bf16
matmuls (`train.precision`).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import NamedTuple, cast

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from nmt import ranking
from nmt.config.model import ModelConfig
from nmt.config.train import TrainConfig
from nmt.errors import ConfigError, DataError, NmtError, TrainingInterrupted
from nmt.files.killpoints import kill_point
from nmt.model import checkpoint
from nmt.model.transformer import Transformer, build_model
from nmt.text.vocabularies import Vocabularies, load_vocabularies
from nmt.train.batching import (
    Pairs,
    TrainingData,
    collate,
    epoch_pairs,
    length_batches,
    lengths,
    load_training_data,
    padding_waste,
    shard,
)
from nmt.train.distributed import Dist, init_distributed
from nmt.train.live import log_live, open_live
from nmt.train.loss import LabelSmoothingKL
from nmt.train.monitor import greedy_bleu, validation_loss
from nmt.train.pairs import bin_direction
from nmt.train.resume import Progress, restore, resume_conflict, state_dict
from nmt.train.run import Run, attention_kernels
from nmt.train.schedule import build_optimizer
from nmt.train.step import Pending, check_losses, guarded_update
from nmt.train.stop import GracefulStop

log = logging.getLogger(__name__)

# the early-stopping metrics and their direction: True when higher is better
HIGHER_IS_BETTER = {"val_bleu": True, "val_loss": False}


class Epoch(NamedTuple):
    """The training data of one epoch on this rank."""

    pairs: Pairs  # this epoch's training pairs (a fresh segmentation under BPE-dropout)
    batches: list[np.ndarray]  # this rank's batches: indices into `pairs`
    waste: float  # share of padding positions in `batches`


def train(model_cfg: ModelConfig, cfg: TrainConfig, vocab_dir: Path, tokens_dir: Path, ckpt_dir: Path,
          live_dir: Path | None = None, bin_dir: Path | None = None) -> tuple[Transformer, Progress]:
    """Train, resuming from the newest checkpoint in `ckpt_dir` when it belongs to the same
    configuration and vocabulary (else starting over); return the model and its progress. The pairs
    are memory-mapped from `bin_dir` (data/bin) when given, else numericalised from `tokens_dir`.

    Call `nmt.train.distributed.shutdown()` after the last collective operation of a distributed run."""
    run, prog = setup(model_cfg, cfg, vocab_dir, tokens_dir, ckpt_dir, live_dir, bin_dir)
    with GracefulStop() as stop, attention_kernels(run.device, cfg.cudnn_attention):
        while prog.epoch < cfg.epochs and not _reached(cfg, prog):
            epoch = epoch_batches(run, prog)
            seconds = run_epoch(run, prog, epoch, stop)
            if prog.batch < len(epoch.batches):  # stopped by train.max_steps inside the epoch
                save(run, prog, epoch_end=False)
                break
            prog.epoch, prog.batch = prog.epoch + 1, 0
            improved = end_of_epoch(run, prog, epoch.waste, seconds)
            save(run, prog, epoch_end=True, best=improved)
            if prog.bad_epochs >= cfg.patience:
                log.info("early stopping: %s did not improve for %d epochs", cfg.early_stop_metric, cfg.patience)
                break
    if run.live is not None:
        run.live.end()
    return run.model, prog


def setup(model_cfg: ModelConfig, cfg: TrainConfig, vocab_dir: Path, tokens_dir: Path, ckpt_dir: Path,
          live_dir: Path | None, bin_dir: Path | None = None) -> tuple[Run, Progress]:
    """Device, data, model, optimizer and loss, and a resumed checkpoint's progress (else a fresh
    `Progress`). Torch's RNG is seeded, drawn by `build_model`, then replaced by a resumed state."""
    info = init_distributed("cuda" if cfg.device != "cpu" and torch.cuda.is_available() else "cpu")
    device = pick_device(cfg.device, info)
    if device.type == "cpu" and cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)
    vocabs = load_vocabularies(vocab_dir, bin_direction(bin_dir))  # one vocab stage, either direction
    if cfg.bpe_dropout > 0 and vocabs.bpe is None:
        raise ConfigError(f"train.bpe_dropout={cfg.bpe_dropout:g} needs a BPE vocabulary, but {vocab_dir} is word "
                          "level; set vocab.kind: bpe or train.bpe_dropout: 0")
    data = load_training_data(cfg, vocabs, tokens_dir, bin_dir)
    model = build_model(model_cfg, vocabs.src, vocabs.tgt).to(device)
    optimizer, scheduler = build_optimizer(model, model_cfg.d_model, cfg.warmup, cfg.lr_factor,
                                           total=planned_updates(cfg, data, vocabs, info), cooldown=cfg.cooldown)
    criterion = LabelSmoothingKL(len(vocabs.tgt), cfg.label_smoothing)
    ckpts = checkpoint.CheckpointDir(ckpt_dir, cfg.keep_last)
    prog = _resume(ckpts, model_cfg, cfg, vocabs, model, optimizer, scheduler, info)
    net: torch.nn.Module = DistributedDataParallel(model) if info.enabled else model
    if cfg.compile:
        mode = None if cfg.compile_mode == "default" else cfg.compile_mode
        net = cast(torch.nn.Module, torch.compile(net, mode=mode))
    run = Run(model_cfg=model_cfg, cfg=cfg, vocabs=vocabs, token_pairs=data.tokens, train_pairs=data.train,
              val_pairs=data.val, model=model, net=net, criterion=criterion, optimizer=optimizer,
              scheduler=scheduler, ckpts=ckpts, device=device, info=info, bf16=use_bf16(cfg.precision, device),
              lazy_checks=lazy_loss_checks(device), all_positions=all_positions(cfg.loss_positions, device),
              live=open_live(live_dir, resume=prog is not None, step=prog.step if prog else 0)
              if info.main else None)
    log.info("model: %s parameters on %s x%d (%s); %d training pairs",
             f"{sum(p.numel() for p in model.parameters()):,}", device, info.world,
             "bf16 autocast" if run.bf16 else "fp32", len(run.train_pairs))
    return run, prog or Progress()


def planned_updates(cfg: TrainConfig, data: TrainingData, vocabs: Vocabularies, info: Dist) -> int | None:
    """The updates the run will make, which `train.cooldown` anneals towards: epochs x the first epoch's
    updates on this rank, or `train.max_steps` if fewer; None without a cooldown (nothing needs it).
    Under BPE-dropout the first epoch is segmented as it will train; later epochs' fresh segmentations
    may differ by a few batches, and updates past the plan run at rate 0."""
    if cfg.cooldown <= 0:
        return None
    pairs = data.train if cfg.bpe_dropout <= 0 else epoch_pairs(data.tokens, vocabs, cfg.max_len, cfg.bpe_dropout,
                                                               cfg.seed, 0)
    batches = shard(length_batches(*lengths(pairs), cfg.max_tokens, cfg.seed, 0), info.rank, info.world)
    total = cfg.epochs * -(-len(batches) // cfg.accum_steps)
    return total if cfg.max_steps is None else min(total, cfg.max_steps)


def pick_device(kind: str, info: Dist) -> torch.device:
    """The device `train.device` names: this process's GPU (`LOCAL_RANK`) for cuda / auto with CUDA, else the CPU."""
    if kind == "cuda" or (kind == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise NmtError("train.device is 'cuda' but no CUDA device is available; use 'auto' or 'cpu'")
        torch.cuda.set_device(info.local_rank)
        return torch.device("cuda", info.local_rank)
    return torch.device("cpu")


def lazy_loss_checks(device: torch.device) -> bool:
    """Read losses back at log points only (an accelerator: the host does not wait on it every
    update); on a CPU after every update, which costs nothing there."""
    return device.type != "cpu"


def all_positions(loss_positions: str, device: torch.device) -> bool:
    """`train.loss_positions` on `device`: True to project every target position (auto: on CUDA)."""
    return loss_positions == "all" or (loss_positions == "auto" and device.type == "cuda")


def use_bf16(precision: str, device: torch.device) -> bool:
    """bf16 autocast for `train.precision` on `device` (auto: CUDA, or a CPU with native bf16 matmuls)."""
    if precision != "auto":
        return precision == "bf16"
    if device.type == "cuda":
        return True
    return any(getattr(torch.cpu, probe, lambda: False)() for probe in ("_is_avx512_bf16_supported",
                                                                          "_is_amx_tile_supported"))


def _resume(ckpts: checkpoint.CheckpointDir, model_cfg: ModelConfig, cfg: TrainConfig, vocabs: Vocabularies,
            model: Transformer, optimizer, scheduler, info: Dist) -> Progress | None:
    """Restore the newest good checkpoint into `model`, `optimizer`, `scheduler` and torch's RNG and
    return its progress; None when there is none, or it belongs to another run (then removed). A
    damaged one (its seal does not match, it does not load) is removed and the one before it resumed:
    the updates since are trained again, to the same weights."""
    for latest in ckpts.newest_first():
        try:
            state = checkpoint.load(latest)
            break
        except DataError as exc:
            log.warning("%s; resuming from the checkpoint before it", exc)
            if info.main:
                latest.unlink(missing_ok=True)
    else:
        return None
    conflict = resume_conflict(state, model_cfg, cfg, vocabs)
    if conflict is None:
        return restore(state, latest, model, optimizer, scheduler)
    log.warning("not resuming from %s: %s; training from scratch", latest, conflict)
    if info.main:
        ckpts.clear()
    return None


def epoch_batches(run: Run, prog: Progress) -> Epoch:
    """This rank's share of the batches of epoch `prog.epoch`, rebuilt from the seed and the epoch."""
    cfg, info = run.cfg, run.info
    pairs = run.train_pairs
    if cfg.bpe_dropout > 0:
        pairs = epoch_pairs(run.token_pairs, run.vocabs, cfg.max_len, cfg.bpe_dropout, cfg.seed, prog.epoch)
    batches = shard(length_batches(*lengths(pairs), cfg.max_tokens, cfg.seed, prog.epoch), info.rank, info.world)
    waste = padding_waste(pairs, batches)
    if info.main and prog.batch == 0:
        log.info("epoch %d: %d batches per process, %.1f%% padding", prog.epoch + 1, len(batches), 100 * waste)
    return Epoch(pairs, batches, waste)


def run_epoch(run: Run, prog: Progress, epoch: Epoch, stop: GracefulStop, updates: tqdm | None = None) -> float:
    """Updates over `epoch.batches` from `prog.batch` on, until the epoch or `train.max_steps`
    ends; checkpoints every `train.save_every` updates, and on SIGTERM / Ctrl-C, then stops.
    Returns the seconds spent. `updates`: a bar that counts updates across epochs (the fine-tune's,
    to its max_steps, with the time left) in place of this epoch's bar of batches.

    The losses stay on the device and are read (one host synchronisation) only where they are
    needed: at a log point, before a checkpoint and at the epoch's end; on a CPU, after every update."""
    cfg, batches = run.cfg, epoch.batches
    bar = updates if updates is not None else tqdm(total=len(batches), initial=prog.batch, unit="batch",
                                                   desc=f"epoch {prog.epoch + 1}",
                                                   disable=None if run.info.main else True, leave=False)
    seen, started = 0, time.perf_counter()
    pending: list[Pending] = []
    while prog.batch < len(batches) and not _reached(cfg, prog):
        group = [collate(epoch.pairs, idx, cfg.pad_multiple)
                 for idx in batches[prog.batch:prog.batch + cfg.accum_steps]]
        loss, n_tokens = guarded_update(run, prog, group)
        pending.append(Pending(prog.step + 1, prog.batch, prog.batch + len(group) - 1, loss, n_tokens))
        prog.step, prog.batch = prog.step + 1, prog.batch + len(group)
        kill_point("train-update")
        seen += n_tokens
        bar.update(1 if updates is not None else len(group))
        logs = prog.step % cfg.log_every == 0 or prog.batch >= len(batches) or _reached(cfg, prog)
        saves = bool(cfg.save_every) and prog.step % cfg.save_every == 0
        if logs or saves or stop.requested or not run.lazy_checks:
            last = check_losses(run, prog, pending)
            pending.clear()
        if logs:
            record = {"step": prog.step, "train_loss": float(last.loss) / max(last.n_tokens, 1),
                      "lr": float(run.scheduler.get_last_lr()[0]),
                      "tokens_per_s": seen / (time.perf_counter() - started)}
            prog.history.append(record)
            bar.set_postfix(loss=f"{record['train_loss']:.3f}", lr=f"{record['lr']:.2e}",
                            tok_s=f"{record['tokens_per_s']:.0f}")
            log_live(run.live, record)
        if saves:
            save(run, prog, epoch_end=False)
        if stop.requested:
            path = save(run, prog, epoch_end=False)
            raise TrainingInterrupted(f"stopped at update {prog.step}; checkpoint {path}; run again to resume")
    if updates is None:
        bar.close()
    return time.perf_counter() - started


def end_of_epoch(run: Run, prog: Progress, waste: float, seconds: float) -> bool:
    """Validate, log, update early stopping on `train.early_stop_metric`; True if this epoch
    is the best so far. `seconds`: the epoch's updates took that long (recorded as `epoch_s`,
    the validation's as `val_s`)."""
    cfg = run.cfg
    record: dict[str, float] = {"step": prog.step, "epoch": prog.epoch, "padding_waste": waste}
    started = time.perf_counter()
    record["val_loss"] = validation_loss(run.model, run.val_pairs, run.criterion, cfg.max_tokens, run.device, run.bf16)
    if cfg.val_bleu_sentences:
        record["val_bleu"] = greedy_bleu(run.model, run.val_pairs[: cfg.val_bleu_sentences], run.vocabs, run.device)
    record["epoch_s"], record["val_s"] = seconds, time.perf_counter() - started
    prog.history.append(record)
    log_live(run.live, record)
    if run.info.main:  # an epoch that max_steps cut short is the one under way (prog.epoch counts whole ones)
        cut = f" (cut short at batch {prog.batch})" if prog.batch else ""
        log.info("epoch %d%s: %s", prog.epoch + 1 if prog.batch else prog.epoch, cut,
                 ", ".join(f"{k}={v:.4g}" for k, v in record.items() if k != "epoch"))
    # the metric itself, never another one in its place (TrainConfig requires val_bleu_sentences for val_bleu)
    metric = record[cfg.early_stop_metric]
    improved = ranking.improves(metric, prog.best, higher=HIGHER_IS_BETTER[cfg.early_stop_metric])  # strictly
    prog.best, prog.bad_epochs = (metric, 0) if improved else (prog.best, prog.bad_epochs + 1)
    if improved:
        prog.best_step = prog.step  # best.pt must hold this update's weights (nmt/train/stage.py checks)
    return improved


def save(run: Run, prog: Progress, epoch_end: bool, best: bool = False) -> Path | None:
    """Checkpoint the run (rank 0 writes and returns the path; other ranks return None)."""
    if not run.info.main:
        return None
    state = state_dict(run.model, run.model_cfg, run.cfg, run.vocabs, run.optimizer, run.scheduler, prog)
    return run.ckpts.write(state, epoch_end, best)


def _reached(cfg: TrainConfig, prog: Progress) -> bool:
    return cfg.max_steps is not None and prog.step >= cfg.max_steps
