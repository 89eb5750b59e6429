"""One training update (paper 5.3-5.4) and the reading of its loss: the step of `nmt.train.loop`.

`update()` runs the forward and backward passes of a group of batches and the optimizer step
without waiting on the device; `check_losses()` reads a window of losses back at once and stops
a run whose loss went non-finite, naming the update.
"""

from __future__ import annotations

import math
from contextlib import nullcontext
from typing import NamedTuple, cast

import torch
from torch.nn.parallel import DistributedDataParallel

from nmt.errors import NmtError, TrainingDiverged
from nmt.text.vocab import PAD_ID
from nmt.train.batching import Batch
from nmt.train.distributed import all_sum, all_sum_tensor
from nmt.train.resume import Progress
from nmt.train.run import Run


class Pending(NamedTuple):
    """An update whose loss has not been read back from the device yet."""

    step: int  # the update's number (1-based)
    first: int  # its batches in the epoch: first .. last
    last: int
    loss: torch.Tensor | float  # loss sum over its target tokens (all ranks), a device scalar until read
    n_tokens: int  # target tokens (all ranks)


def check_losses(run: Run, prog: Progress, pending: list[Pending]) -> Pending:
    """Read the pending losses (one synchronisation); the last update with its loss as a float.
    A non-finite loss stops the run naming the first such update; its parameter update was skipped
    (`update()`), so the weights and the last checkpoint are those before it."""
    values = torch.stack([torch.as_tensor(p.loss, dtype=torch.float32) for p in pending]).tolist()
    for p, value in zip(pending, values):
        if not math.isfinite(value):
            raise TrainingDiverged(
                f"loss is {value} at update {p.step} (epoch {prog.epoch + 1}, batches {p.first}-{p.last}); "
                f"last good checkpoint: {run.ckpts.latest()}; lower train.lr_factor or set train.clip_norm")
    return pending[-1]._replace(loss=values[-1])


def guarded_update(run: Run, prog: Progress, group: list[Batch]) -> tuple[torch.Tensor, int]:
    """`update()`, with running out of GPU memory raised as an error that says what to do."""
    try:
        return update(run, group)
    except torch.OutOfMemoryError:
        raise NmtError(f"out of GPU memory at update {prog.step + 1}; lower train.max_tokens "
                       f"(now {run.cfg.max_tokens}) and raise train.accum_steps to keep the batch size") from None


def loss(run: Run, batch: Batch) -> torch.Tensor:
    """Summed label-smoothed KL of one batch (on the device), by the run's path: every target position
    (`all_positions`: fixed shapes, nothing waits on the device) or the real ones only; output layer and
    loss together, `train.loss_chunk` positions at a time, or the whole logits at once."""
    chunk, generator = run.cfg.loss_chunk, run.model.generator.weight
    if run.all_positions:
        if chunk:
            return run.criterion.projected(run.net(batch.src, batch.tgt_in, project=False), generator,
                                           batch.tgt_out, chunk)[0]
        return run.criterion.masked(run.net(batch.src, batch.tgt_in), batch.tgt_out)[0]  # (B, T, V) logits
    keep = batch.tgt_out != PAD_ID  # (B, T): only these positions reach the output layer
    if chunk:
        return run.criterion.projected(run.net(batch.src, batch.tgt_in, keep, project=False), generator,
                                       batch.tgt_out[keep], chunk)[0]
    return run.criterion(run.net(batch.src, batch.tgt_in, keep), batch.tgt_out[keep])[0]  # (N, V) logits


def update(run: Run, group: list[Batch]) -> tuple[torch.Tensor, int]:
    """One optimizer update over `group` (gradient accumulation); returns (loss sum as a device
    scalar, target tokens), summed over ranks. No host synchronisation on one process: a non-finite
    loss reaches the fused Adam as `found_inf`, which then leaves weights and moments unchanged (the
    mechanism of mixed-precision loss scaling); other optimizers are checked on the host."""
    net, cfg, device, info = run.net, run.cfg, run.device, run.info
    net.train()
    n_tokens = sum(b.n_tgt_tokens for b in group)
    loss_sum = torch.zeros((), dtype=torch.float32, device=device)
    for i, batch in enumerate(group):
        batch = batch.to(device)
        sync = cast(DistributedDataParallel, net).no_sync() if info.enabled and i < len(group) - 1 else nullcontext()
        with sync, torch.autocast(device.type, dtype=torch.bfloat16, enabled=run.bf16):
            kl_sum = loss(run, batch)
            (kl_sum / n_tokens).backward()
        loss_sum += kl_sum.detach().float()
    if info.enabled:
        loss_sum = all_sum_tensor(loss_sum, info)
        n_tokens = int(all_sum([float(n_tokens)], info, device)[0])
    bad = ~torch.isfinite(loss_sum)
    if run.optimizer.defaults.get("fused"):
        run.optimizer.found_inf = bad.float()  # type: ignore[attr-defined]  # read by the fused kernel on the device
    elif bad.item():
        run.optimizer.zero_grad(set_to_none=True)
        return loss_sum, n_tokens
    if cfg.clip_norm:
        torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.clip_norm)
    run.optimizer.step()
    run.scheduler.step()
    run.optimizer.zero_grad(set_to_none=True)
    return loss_sum, n_tokens
