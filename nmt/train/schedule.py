"""Adam with the warm-up / inverse-square-root schedule of Vaswani et al. 2017, 5.3.

    lrate = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)

`step` counts optimizer updates from 1. Adam uses beta1 = 0.9, beta2 = 0.98, eps = 1e-9.

With `cooldown` > 0 (not in the paper) the last `cooldown` share of the planned updates multiplies that
rate by a factor falling linearly from 1 to 0: warm-up, the paper's decay, then an annealing phase, as
warmup-stable-decay schedules do (Hu et al. 2024; Hagele et al. 2024: a short training ends far better
annealed than at the inverse-square-root rate, which has only halved after 4x the warm-up).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


def noam_lr(step: int, d_model: int, warmup: int, factor: float, total: int | None = None,
            cooldown: float = 0.0) -> float:
    """The rate of update `step`; with `cooldown` > 0 and `total` planned updates, annealed to 0 over
    the last `cooldown` share of them (reaching 0 after update `total`)."""
    step = max(step, 1)
    rate = factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)
    if cooldown > 0 and total:
        span = max(round(cooldown * total), 1)
        rate *= min(1.0, max(total - step + 1, 0) / span)
    return rate


@dataclass
class NoamSchedule:
    """The multiplier LambdaLR applies after `done` updates: the rate of update `done + 1`. A callable
    object rather than a lambda, so the scheduler's state_dict keeps these fields and a resumed run
    anneals towards the total it planned when it started."""

    d_model: int
    warmup: int
    factor: float
    total: int | None = None  # the planned updates (None: no cooldown)
    cooldown: float = 0.0  # the share of `total` annealed to 0 at the end

    def __call__(self, done: int) -> float:
        return noam_lr(done + 1, self.d_model, self.warmup, self.factor, self.total, self.cooldown)


def build_optimizer(model: nn.Module, d_model: int, warmup: int, factor: float, weight_decay: float = 0.0,
                    total: int | None = None, cooldown: float = 0.0,
                    ) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """Adam(0.9, 0.98, 1e-9), fused (one kernel for all parameters, on CPU and CUDA), driven
    by the Noam schedule (base lr 1), annealed over the last `cooldown` share of `total` updates."""
    params = [p for p in model.parameters() if p.requires_grad]
    fused = all(p.device.type in ("cpu", "cuda") for p in params)
    optimizer = torch.optim.Adam(params, lr=1.0, betas=(0.9, 0.98), eps=1e-9, weight_decay=weight_decay,
                                 fused=fused or None)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, NoamSchedule(d_model, warmup, factor, total, cooldown))
    return optimizer, scheduler
