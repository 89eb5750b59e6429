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

`projected()` goes one step further (`train.loss_chunk`): it takes the decoder's last hidden states and
the output layer's weight, and runs output layer, loss and both their gradients `chunk` rows at a time,
so the (tokens x vocab) logits never exist whole, in bf16 or in fp32 (the largest activation of a step
and, on a GPU, several passes over it: cast, exp, sum, gradient). The gradients are made in the forward
pass and scaled by the incoming gradient of the summed loss in the backward pass.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from nmt.text.vocab import PAD_ID


def _row_kl(logits: Tensor, target: Tensor, confidence: float, spread: float, entropy: float,
            pad_id: int, grad: bool) -> tuple[Tensor, Tensor | None]:
    """Per-row KL of (C, V) fp32 logits (the module docstring's formula) and, with `grad`, its gradient
    dKL/dlogits = q - p, made in place of the softmax q."""
    top = logits.amax(dim=-1, keepdim=True)
    q = torch.exp(logits - top)  # (C, V)
    total = q.sum(dim=-1, keepdim=True)
    lse = (top + total.log()).squeeze(1)  # (C,)
    logq_gold = logits.gather(1, target[:, None]).squeeze(1) - lse
    kl = entropy - confidence * logq_gold - spread * (logits.sum(dim=-1) - logits.shape[-1] * lse
                                                      - (logits[:, pad_id] - lse) - logq_gold)
    if not grad:
        return kl, None
    g = q.div_(total).sub_(spread)  # q - p off the gold and <pad> columns
    g[:, pad_id] += spread  # p_pad = 0
    g[torch.arange(len(target), device=g.device), target] += spread - confidence  # p_gold = 1 - eps
    return kl, g


class _SmoothedKL(torch.autograd.Function):
    """Per-row KL of (N, V) float logits against the smoothed targets of (N,) gold ids."""

    @staticmethod
    def forward(ctx, logits: Tensor, target: Tensor, confidence: float, spread: float, entropy: float,
                pad_id: int) -> Tensor:
        kl, grad = _row_kl(logits, target, confidence, spread, entropy, pad_id, grad=True)
        ctx.save_for_backward(grad)  # (N, V) q - p: the one tensor of the size of the logits kept
        return kl

    @staticmethod
    def backward(ctx, grad_kl: Tensor):
        (grad,) = ctx.saved_tensors
        return grad.mul_(grad_kl[:, None]), None, None, None, None, None


class _ProjectedSmoothedKL(torch.autograd.Function):
    """Summed KL of logits = hidden @ weight^T over the rows where `keep`, `chunk` rows at a time."""

    @staticmethod
    def forward(ctx, hidden: Tensor, weight: Tensor, target: Tensor, keep: Tensor, chunk: int, dtype: torch.dtype,
                consts: tuple[float, float, float, int], grad: bool) -> Tensor:
        w = weight.to(dtype)  # (V, d), as autocast would cast it
        total = torch.zeros((), dtype=torch.float32, device=hidden.device)
        grad_h = torch.empty_like(hidden, dtype=torch.float32) if grad else None  # (N, d)
        grad_w = torch.zeros_like(weight, dtype=torch.float32) if grad else None  # (V, d)
        with torch.autocast(hidden.device.type, enabled=False):
            for start in range(0, hidden.shape[0], chunk):
                h = hidden[start:start + chunk].to(dtype)  # (C, d)
                kl, g = _row_kl((h @ w.T).float(), target[start:start + chunk], *consts, grad=grad)
                mask = keep[start:start + chunk]
                total += torch.where(mask, kl, 0.0).sum()
                if g is not None:
                    assert grad_h is not None and grad_w is not None
                    g = g.mul_(mask[:, None]).to(dtype)  # (C, V): <pad> rows give nothing
                    grad_h[start:start + chunk] = g @ w
                    grad_w += (g.T @ h).float()
        ctx.save_for_backward(grad_h, grad_w)
        ctx.dtypes = (hidden.dtype, weight.dtype)
        return total

    @staticmethod
    def backward(ctx, grad_total: Tensor):
        grad_h, grad_w = ctx.saved_tensors
        return ((grad_h * grad_total).to(ctx.dtypes[0]), (grad_w * grad_total).to(ctx.dtypes[1]),
                None, None, None, None, None, None)


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
        kl = self._row_kl(logits, target)
        return kl.sum(), keep.sum()

    def masked(self, logits: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
        """`forward` with every row computed and the <pad> rows masked out instead of selected
        away: no data-dependent shape, so no wait on the device (the accelerator's path)."""
        logits = logits.reshape(-1, self.V).float()
        target = target.reshape(-1)
        keep = target != self.pad_id
        kl = self._row_kl(logits, target)
        return torch.where(keep, kl, 0.0).sum(), keep.sum()

    def _row_kl(self, logits: Tensor, target: Tensor) -> Tensor:
        """Per-row KL; its gradient is made only when autograd wants one (not in validation)."""
        consts = (self.confidence, self.spread, self.entropy_const, self.pad_id)
        if torch.is_grad_enabled() and logits.requires_grad:
            return _SmoothedKL.apply(logits, target, *consts)
        return _row_kl(logits, target, *consts, grad=False)[0]

    def projected(self, hidden: Tensor, weight: Tensor, target: Tensor, chunk: int) -> tuple[Tensor, Tensor]:
        """`masked` of the logits `hidden @ weight^T` without making them whole (`train.loss_chunk`):
        hidden (..., d) decoder states, weight (V, d) the output layer's, target (...) ids ->
        (summed KL over non-pad tokens, their count). Under autocast the products run in its dtype."""
        hidden = hidden.reshape(-1, hidden.shape[-1])
        target = target.reshape(-1)
        keep = target != self.pad_id
        device = hidden.device.type
        dtype = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else hidden.dtype
        consts = (self.confidence, self.spread, self.entropy_const, self.pad_id)
        grad = torch.is_grad_enabled() and (hidden.requires_grad or weight.requires_grad)  # not in validation
        return _ProjectedSmoothedKL.apply(hidden, weight, target, keep, chunk, dtype, consts, grad), keep.sum()
