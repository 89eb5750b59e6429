"""KL-divergence label-smoothing loss (Szegedy et al. 2016; Vaswani et al. 2017, 5.4).

The smoothed target puts `1 - eps` on the gold token and spreads `eps` evenly over the
rest of the vocabulary except the gold token and <pad> (as in pytorch-original-transformer);
rows whose gold token is <pad> are ignored. The loss is KL(target || model) summed over
non-pad rows; `forward` returns the sum and the number of non-pad tokens so callers can
report a per-token mean and accumulate gradients exactly.

It is computed without building the (tokens x vocab) target. With s = eps / (V - 2) and
log q = logits - logsumexp(logits), for one row with gold token g:

    KL = sum_v p_v log p_v - sum_v p_v log q_v
       = H  - (1 - eps) log q_g - s * (sum_v log q_v - log q_pad - log q_g)

where H = (1 - eps) log(1 - eps) + (V - 2) s log s is the same constant for every row.
Its gradient is written out, since the target sums to one: dKL/dlogits = q - p. So the
backward pass is one (tokens x vocab) tensor, the softmax kept from the forward pass, with
`s` subtracted everywhere and the gold and <pad> columns corrected, instead of autograd's
separate dense gradients of logsumexp, gather, column select and sum.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from nmt.text.vocab import PAD_ID


class _SmoothedKL(torch.autograd.Function):
    """Per-row KL of (N, V) float logits against the smoothed targets of (N,) gold ids."""

    @staticmethod
    def forward(ctx, logits: Tensor, target: Tensor, confidence: float, spread: float, entropy: float,
                pad_id: int) -> Tensor:
        top = logits.amax(dim=-1, keepdim=True)  # (N, 1)
        q = torch.exp(logits - top)  # (N, V), normalised below into the model's distribution
        total = q.sum(dim=-1, keepdim=True)
        lse = (top + total.log()).squeeze(1)  # (N,)
        q.div_(total)
        V = logits.shape[-1]
        logq_gold = logits.gather(1, target[:, None]).squeeze(1) - lse
        logq_pad = logits[:, pad_id] - lse
        logq_sum = logits.sum(dim=-1) - V * lse
        ctx.save_for_backward(q, target)
        ctx.confidence, ctx.spread, ctx.pad_id = confidence, spread, pad_id
        return entropy - confidence * logq_gold - spread * (logq_sum - logq_pad - logq_gold)

    @staticmethod
    def backward(ctx, grad_kl: Tensor):  # type: ignore[override]
        q, target = ctx.saved_tensors
        grad = q.sub_(ctx.spread)  # q - p off the gold and <pad> columns (q is not needed again)
        grad[:, ctx.pad_id] += ctx.spread  # p_pad = 0
        rows = torch.arange(len(target), device=grad.device)
        grad[rows, target] += ctx.spread - ctx.confidence  # p_gold = 1 - eps
        return grad.mul_(grad_kl[:, None]), None, None, None, None, None


class LabelSmoothingKL(nn.Module):
    def __init__(self, vocab_size: int, smoothing: float = 0.1, pad_id: int = PAD_ID) -> None:
        super().__init__()
        if not 0.0 <= smoothing < 1.0:
            raise ValueError("smoothing must be in [0, 1)")
        self.V, self.eps, self.pad_id = vocab_size, smoothing, pad_id
        self.confidence = 1.0 - smoothing
        self.spread = smoothing / (vocab_size - 2)
        self.entropy_const = (self.confidence * math.log(self.confidence)
                              + (smoothing * math.log(self.spread) if smoothing > 0 else 0.0))

    def forward(self, logits: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
        """logits (..., V), target (...) ids -> (summed KL over non-pad tokens, their count)."""
        logits = logits.reshape(-1, self.V).float()
        target = target.reshape(-1)
        keep = target != self.pad_id
        if not bool(keep.all()):  # callers that already dropped padding skip this copy
            logits, target = logits[keep], target[keep]  # (N, V), (N,)
        kl = _SmoothedKL.apply(logits, target, self.confidence, self.spread, self.entropy_const, self.pad_id)
        return kl.sum(), keep.sum()

    def masked(self, logits: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
        """`forward` with every row computed and the <pad> rows masked out instead of selected
        away: no data-dependent shape, so no wait on the device (the accelerator's path)."""
        logits = logits.reshape(-1, self.V).float()
        target = target.reshape(-1)
        keep = target != self.pad_id
        kl = _SmoothedKL.apply(logits, target, self.confidence, self.spread, self.entropy_const, self.pad_id)
        return torch.where(keep, kl, 0.0).sum(), keep.sum()
