"""Building blocks of the Transformer (Vaswani et al. 2017, section 3) and its config.

Scaled dot-product multi-head attention (3.2) through `F.scaled_dot_product_attention`
(fused kernels on GPU) with boolean masks built here and only here, position-wise
feed-forward networks (3.3), sinusoidal positional encoding (3.5), and residual
connections with dropout and LayerNorm (3.1, 5.4): post-norm as in the paper, or pre-norm.
Dropout draws its CPU masks from 16-bit random numbers (`Dropout`), three times faster than
`nn.Dropout`'s per-element Bernoulli draws, which took 15% of a CPU training step.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from nmt.config.model import ModelConfig
from nmt.text.vocab import PAD_ID


def padding_mask(tokens: Tensor) -> Tensor:
    """(B, T) ids -> (B, 1, 1, T) bool, True where a key may be attended to."""
    return (tokens != PAD_ID)[:, None, None, :]


def causal_mask(size: int, device: torch.device | None = None) -> Tensor:
    """(1, 1, T, T) bool, True on and below the diagonal: position i sees positions <= i."""
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()[None, None]


def sinusoidal_table(max_len: int, d_model: int) -> Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...)  (section 3.5)."""
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    inv = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.sin(pos * inv)
    table[:, 1::2] = torch.cos(pos * inv)
    return table


class Dropout(nn.Module):
    """Dropout (section 5.4): zero each element with probability p, scale the rest by 1/(1-p).

    On CPU the mask comes from 16-bit uniform integers, four cut from each 64-bit draw of the
    generator (`torch.manual_seed` makes it reproducible), so p is rounded to a multiple of
    1/65536; `nn.Dropout` spends one 32-bit draw and a float Bernoulli test per element, 3x
    slower. Elsewhere (CUDA) it is `F.dropout`, whose fused kernel is already fast.
    """

    def __init__(self, p: float) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability must be in [0, 1), got {p}")
        self.p = p
        self.threshold = -(2**15) + round(p * 2**16)  # keep where the int16 draw is >= this

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0.0:
            return x
        if x.device.type != "cpu":
            return F.dropout(x, self.p, training=True)
        n = x.numel()
        bits = torch.empty((n + 3) // 4, dtype=torch.int64).random_(-(2**63), None)
        keep = bits.view(torch.int16)[:n].view(x.shape) >= self.threshold
        return x * keep.to(x.dtype).mul_(1.0 / (1.0 - self.p))

    def extra_repr(self) -> str:
        return f"p={self.p}"


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O  (section 3.2.2)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.h, self.d_k, self.p = cfg.n_heads, cfg.d_model // cfg.n_heads, cfg.attn_dropout
        self.q_proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.kv_proj = nn.Linear(cfg.d_model, 2 * cfg.d_model)
        self.out_proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.capture = False  # opt-in: keep the attention weights of the last call (reports)
        self.weights: Tensor | None = None

    def split_heads(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    def project_kv(self, x: Tensor) -> tuple[Tensor, Tensor]:
        k, v = self.kv_proj(x).chunk(2, dim=-1)
        return self.split_heads(k), self.split_heads(v)  # (B, h, T, d_k) each

    def attend(self, x: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, causal: bool = False) -> Tensor:
        """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V; `mask` True = may attend,
        `causal` = each query sees keys up to its own position (training-time decoder)."""
        q = self.split_heads(self.q_proj(x))  # (B, h, Tq, d_k)
        if self.capture:  # explicit softmax so the weights can be kept (reports only)
            if causal:
                mask = causal_mask(q.shape[2], q.device)
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d_k)
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            self.weights = scores.softmax(dim=-1).detach()
            y = self.weights @ v
        elif q.device.type == "cpu" and torch.is_autocast_enabled("cpu"):
            # CPU bf16 autocast: its fp32 attention kernel beats the bf16 one (backward especially)
            with torch.autocast("cpu", enabled=False):
                y = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask,
                                                   is_causal=causal, dropout_p=self.p if self.training else 0.0)
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal,
                                               dropout_p=self.p if self.training else 0.0)
        B, _, T, _ = y.shape
        return self.out_proj(y.transpose(1, 2).reshape(B, T, self.h * self.d_k))  # (B, Tq, d_model)

    def forward(self, x: Tensor, memory: Tensor, mask: Tensor | None) -> Tensor:
        return self.attend(x, *self.project_kv(memory), mask)


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2  (section 3.3)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.w1, self.w2 = nn.Linear(cfg.d_model, cfg.d_ff), nn.Linear(cfg.d_ff, cfg.d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.w2(F.relu(self.w1(x)))


class Residual(nn.Module):
    """LayerNorm(x + Dropout(Sublayer(x))) (post-norm, section 5.4) or x + Dropout(Sublayer(LayerNorm(x)))."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.norm, self.drop, self.norm_first = nn.LayerNorm(cfg.d_model), Dropout(cfg.dropout), cfg.norm_first

    def forward(self, x: Tensor, sublayer) -> Tensor:
        if self.norm_first:
            return x + self.drop(sublayer(self.norm(x)))
        return self.norm(x + self.drop(sublayer(x)))


class EncoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.self_attn, self.ffn = MultiHeadAttention(cfg), FeedForward(cfg)
        self.res1, self.res2 = Residual(cfg), Residual(cfg)

    def forward(self, x: Tensor, src_mask: Tensor) -> Tensor:
        x = self.res1(x, lambda y: self.self_attn(y, y, src_mask))
        return self.res2(x, self.ffn)


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.self_attn, self.cross_attn, self.ffn = MultiHeadAttention(cfg), MultiHeadAttention(cfg), FeedForward(cfg)
        self.res1, self.res2, self.res3 = Residual(cfg), Residual(cfg), Residual(cfg)

    def forward(self, x: Tensor, cross_kv: tuple[Tensor, Tensor], src_mask: Tensor,
                self_kv: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """Without `self_kv`: all target positions at once, causally masked (training).
        With `self_kv` (keys/values of the earlier positions): the next position only."""
        new_kv: tuple[Tensor, Tensor] = (x, x)  # replaced below; keeps mypy calm

        def self_attention(y: Tensor) -> Tensor:
            nonlocal new_kv
            k, v = self.self_attn.project_kv(y)
            if self_kv is not None:
                k, v = torch.cat([self_kv[0], k], dim=2), torch.cat([self_kv[1], v], dim=2)
            new_kv = (k, v)
            return self.self_attn.attend(y, k, v, None, causal=self_kv is None)

        x = self.res1(x, self_attention)
        x = self.res2(x, lambda y: self.cross_attn.attend(y, *cross_kv, src_mask))
        return self.res3(x, self.ffn), new_kv
