"""Adam with the warm-up / inverse-square-root schedule of Vaswani et al. 2017, 5.3.

    lrate = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)

`step` counts optimizer updates from 1. Adam uses beta1 = 0.9, beta2 = 0.98, eps = 1e-9.
"""

from __future__ import annotations

import torch
from torch import nn


def noam_lr(step: int, d_model: int, warmup: int, factor: float) -> float:
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def build_optimizer(model: nn.Module, d_model: int, warmup: int, factor: float,
                    weight_decay: float = 0.0) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """Adam(0.9, 0.98, 1e-9), fused (one kernel for all parameters, on CPU and CUDA), driven
    by the Noam schedule (base lr 1)."""
    params = [p for p in model.parameters() if p.requires_grad]
    fused = all(p.device.type in ("cpu", "cuda") for p in params)
    optimizer = torch.optim.Adam(params, lr=1.0, betas=(0.9, 0.98), eps=1e-9, weight_decay=weight_decay,
                                 fused=fused or None)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda done: noam_lr(done + 1, d_model, warmup, factor))
    return optimizer, scheduler
