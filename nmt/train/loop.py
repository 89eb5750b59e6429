"""Stage 5, train: the Transformer on token-budget batches with Adam + Noam (5.3) and the
label-smoothed KL loss (5.4); validation, early stopping and checkpoint averaging (6.1).

Read top to bottom: set up (device, data, model, optimizer, resume), then for each epoch
for each group of `accum_steps` batches one update; at each epoch end validate, log and
checkpoint. SIGTERM / Ctrl-C finish the current update, checkpoint and stop; a NaN loss
stops with the step and batch named and the last good checkpoint kept. Multi-GPU /
multi-node through `torchrun` (DistributedDataParallel); bf16 autocast on CUDA and on CPUs with
native bf16 matmuls (`train.precision`).
"""

from __future__ import annotations

import logging
import math
import signal
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from nmt.config.model import ModelConfig
from nmt.config.train import TrainConfig
from nmt.errors import ConfigError, NmtError, TrainingDiverged, TrainingInterrupted
from nmt.model import checkpoint
from nmt.model.transformer import Transformer, build_model
from nmt.text.vocab import PAD_ID
from nmt.text.vocabularies import load_vocabularies
from nmt.train.batching import (
    Batch,
    collate,
    epoch_pairs,
    load_pairs,
    load_token_pairs,
    make_batches,
    padding_waste,
    shard,
)
from nmt.train.distributed import Dist, all_sum, init_distributed
from nmt.train.loss import LabelSmoothingKL
from nmt.train.monitor import greedy_bleu, validation_loss
from nmt.train.resume import Progress, restore, resume_conflict, state_dict
from nmt.train.schedule import build_optimizer

log = logging.getLogger(__name__)


class GracefulStop:
    """SIGTERM / first Ctrl-C set a flag the loop checks after each update; a second Ctrl-C aborts."""

    def __init__(self) -> None:
        self.requested = False
        self._old: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.requested = True
        log.warning("received %s: finishing this update, then checkpointing", signal.Signals(signum).name)

    def __enter__(self) -> GracefulStop:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def pick_device(kind: str, info: Dist) -> torch.device:
    if kind == "cuda" or (kind == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise NmtError("train.device is 'cuda' but no CUDA device is available; use 'auto' or 'cpu'")
        torch.cuda.set_device(info.local_rank)
        return torch.device("cuda", info.local_rank)
    return torch.device("cpu")


def use_bf16(precision: str, device: torch.device) -> bool:
    """bf16 autocast for `train.precision` on `device` (auto: CUDA, or a CPU with native bf16 matmuls)."""
    if precision != "auto":
        return precision == "bf16"
    if device.type == "cuda":
        return True
    return any(getattr(torch.cpu, probe, lambda: False)() for probe in ("_is_avx512_bf16_supported",
                                                                          "_is_amx_tile_supported"))


def update(net: torch.nn.Module, group: list[Batch], criterion: LabelSmoothingKL, optimizer, scheduler,
           cfg: TrainConfig, device: torch.device, info: Dist, bf16: bool) -> tuple[float, int]:
    """One optimizer update over `group` (gradient accumulation); returns (loss sum, target tokens)."""
    net.train()
    n_tokens = sum(b.n_tgt_tokens for b in group)
    loss_sum = 0.0
    for i, batch in enumerate(group):
        batch = batch.to(device)
        sync = net.no_sync() if info.enabled and i < len(group) - 1 else nullcontext()
        with sync, torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            keep = batch.tgt_out != PAD_ID  # (B, T): only these positions reach the output layer
            logits = net(batch.src, batch.tgt_in, keep)  # (N, V)
            kl_sum, _ = criterion(logits, batch.tgt_out[keep])
            (kl_sum / n_tokens).backward()
        loss_sum += kl_sum.item()
    loss_sum, n_tokens = all_sum([loss_sum, float(n_tokens)], info, device)
    if not math.isfinite(loss_sum):
        optimizer.zero_grad(set_to_none=True)
        return loss_sum, int(n_tokens)
    if cfg.clip_norm:
        torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.clip_norm)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return loss_sum, int(n_tokens)


def train(model_cfg: ModelConfig, cfg: TrainConfig, vocab_dir: Path, tokens_dir: Path, ckpt_dir: Path,
          live_dir: Path | None = None) -> tuple[Transformer, Progress]:
    """Train, resuming from the newest checkpoint in `ckpt_dir` when it belongs to the same
    configuration and vocabulary (else starting over); return the model and its progress.

    Call `nmt.distributed.shutdown()` after the last collective operation of a distributed run."""
    info = init_distributed("cuda" if cfg.device != "cpu" and torch.cuda.is_available() else "cpu")
    device = pick_device(cfg.device, info)
    if device.type == "cpu" and cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed)
    vocabs = load_vocabularies(vocab_dir)
    if cfg.bpe_dropout > 0 and vocabs.bpe is None:
        raise ConfigError(f"train.bpe_dropout={cfg.bpe_dropout:g} needs a BPE vocabulary, but {vocab_dir} is word "
                       "level; set vocab.kind: bpe or train.bpe_dropout: 0")
    token_pairs = load_token_pairs(tokens_dir, "train", vocabs) if cfg.bpe_dropout > 0 else []
    train_pairs = load_pairs(tokens_dir, "train", vocabs, cfg.max_len)
    val_pairs = load_pairs(tokens_dir, "val", vocabs)
    model = build_model(model_cfg, vocabs.src, vocabs.tgt).to(device)
    optimizer, scheduler = build_optimizer(model, model_cfg.d_model, cfg.warmup, cfg.lr_factor)
    criterion = LabelSmoothingKL(len(vocabs.tgt), cfg.label_smoothing)
    ckpts = checkpoint.CheckpointDir(ckpt_dir, cfg.keep_last)
    latest, prog = ckpts.latest(), Progress()
    if latest is not None:
        state = checkpoint.load(latest)
        conflict = resume_conflict(state, model_cfg, cfg, vocabs)
        if conflict is None:
            prog = restore(state, latest, model, optimizer, scheduler)
        else:
            log.warning("not resuming from %s: %s; training from scratch", latest, conflict)
            if info.main:
                ckpts.clear()
            latest = None
    net: torch.nn.Module = DistributedDataParallel(model) if info.enabled else model
    if cfg.compile:
        net = torch.compile(net)
    live = _open_live(live_dir, resume=latest is not None) if info.main else None
    bf16 = use_bf16(cfg.precision, device)
    log.info("model: %s parameters on %s x%d (%s); %d training pairs", f"{sum(p.numel() for p in model.parameters()):,}",
             device, info.world, "bf16 autocast" if bf16 else "fp32", len(train_pairs))

    def save(epoch_end: bool, best: bool = False) -> Path | None:
        if not info.main:
            return None
        return ckpts.write(state_dict(model, model_cfg, cfg, vocabs, optimizer, scheduler, prog), epoch_end, best)

    with GracefulStop() as stop:
        while prog.epoch < cfg.epochs and not _reached(cfg, prog):
            if cfg.bpe_dropout > 0:
                train_pairs = epoch_pairs(token_pairs, vocabs, cfg.max_len, cfg.bpe_dropout, cfg.seed, prog.epoch)
            batches = shard(make_batches(train_pairs, cfg.max_tokens, cfg.seed, prog.epoch), info.rank, info.world)
            waste = padding_waste(train_pairs, batches)
            if info.main and prog.batch == 0:
                log.info("epoch %d: %d batches per process, %.1f%% padding", prog.epoch + 1, len(batches), 100 * waste)
            bar = tqdm(total=len(batches), initial=prog.batch, desc=f"epoch {prog.epoch + 1}", unit="batch",
                       disable=None if info.main else True, leave=False)
            seen, started = 0, time.perf_counter()
            while prog.batch < len(batches) and not _reached(cfg, prog):
                group = [collate(train_pairs, idx) for idx in batches[prog.batch:prog.batch + cfg.accum_steps]]
                try:
                    loss_sum, n_tokens = update(net, group, criterion, optimizer, scheduler, cfg, device, info, bf16)
                except torch.OutOfMemoryError:
                    raise NmtError(f"out of GPU memory at update {prog.step + 1}; lower train.max_tokens "
                                   f"(now {cfg.max_tokens}) and raise train.accum_steps to keep the batch size") from None
                if not math.isfinite(loss_sum):
                    raise TrainingDiverged(
                        f"loss is {loss_sum} at update {prog.step + 1} (epoch {prog.epoch + 1}, batches "
                        f"{prog.batch}-{prog.batch + len(group) - 1}); last good checkpoint: {ckpts.latest()}; "
                        "lower train.lr_factor or set train.clip_norm")
                prog.step, prog.batch = prog.step + 1, prog.batch + len(group)
                seen += n_tokens
                bar.update(len(group))
                if prog.step % cfg.log_every == 0 or prog.batch >= len(batches):
                    record = {"step": prog.step, "train_loss": loss_sum / max(n_tokens, 1),
                              "lr": scheduler.get_last_lr()[0], "tokens_per_s": seen / (time.perf_counter() - started)}
                    prog.history.append(record)
                    bar.set_postfix(loss=f"{record['train_loss']:.3f}", lr=f"{record['lr']:.2e}",
                                    tok_s=f"{record['tokens_per_s']:.0f}")
                    _log_live(live, record)
                if cfg.save_every and prog.step % cfg.save_every == 0:
                    save(epoch_end=False)
                if stop.requested:
                    path = save(epoch_end=False)
                    raise TrainingInterrupted(f"stopped at update {prog.step}; checkpoint {path}; run again to resume")
            bar.close()
            if prog.batch < len(batches):
                save(epoch_end=False)  # stopped by max_steps inside the epoch
                break
            prog.epoch, prog.batch = prog.epoch + 1, 0
            improved = _end_of_epoch(model, val_pairs, vocabs, criterion, cfg, device, prog, live, info, waste, bf16)
            save(epoch_end=True, best=improved)
            if prog.bad_epochs >= cfg.patience:
                log.info("early stopping: %s did not improve for %d epochs", cfg.early_stop_metric, cfg.patience)
                break
    if live is not None:
        live.end()
    return model, prog


def _reached(cfg: TrainConfig, prog: Progress) -> bool:
    return cfg.max_steps is not None and prog.step >= cfg.max_steps


def _end_of_epoch(model, val_pairs, vocabs, criterion, cfg, device, prog, live, info, waste: float,
                  bf16: bool) -> bool:
    """Validate, log, update early stopping; True if this epoch is the best so far."""
    record: dict[str, float] = {"step": prog.step, "epoch": prog.epoch, "padding_waste": waste}
    record["val_loss"] = validation_loss(model, val_pairs, criterion, cfg.max_tokens, device, bf16)
    if cfg.val_bleu_sentences:
        record["val_bleu"] = greedy_bleu(model, val_pairs[: cfg.val_bleu_sentences], vocabs, device)
    prog.history.append(record)
    _log_live(live, record)
    if info.main:
        log.info("epoch %d: %s", prog.epoch, ", ".join(f"{k}={v:.4g}" for k, v in record.items() if k != "epoch"))
    metric = record.get(cfg.early_stop_metric, record["val_loss"])
    sign = -1.0 if cfg.early_stop_metric == "val_loss" else 1.0
    improved = prog.best is None or sign * metric > sign * prog.best
    prog.best, prog.bad_epochs = (metric, 0) if improved else (prog.best, prog.bad_epochs + 1)
    return improved


def _open_live(live_dir: Path | None, resume: bool):
    if live_dir is None:
        return None
    from dvclive import Live
    from scmrepo.exceptions import SCMError

    try:
        return Live(dir=str(live_dir), resume=resume, save_dvc_exp=False, report=None, dvcyaml=None)
    except SCMError as exc:  # DVCLive reads the git revision of the project
        raise NmtError(f"DVCLive cannot log metrics: {exc}; make a first commit (`git commit`) in this "
                       "repository, or run outside it") from None


def _log_live(live, record: dict[str, float]) -> None:
    if live is None:
        return
    live.step = int(record["step"])
    for key, value in record.items():
        if key != "step":
            live.log_metric(key, value)
    live.make_summary()
