"""Incremental decoding: the encoder once, then one position per step over a key/value cache.

This is the model side of search (Vaswani et al. 2017, section 6.1), written once and run two
ways: eagerly by the torch backend (`nmt.decode.backend`) and as the two exported ONNX graphs
(`nmt.export.graphs`), so torch and ONNX Runtime compute the same operations.

Layout, chosen for the step's cost (profiled in ONNX Runtime):
- rows are grouped by sentence: `tokens` is (b, K), K rows (beams) per live sentence;
- the cross-attention keys/values are kept once per *sentence*, and the K rows of a sentence
  attend to them together as K queries, so beams never copy the encoder output;
- keys are stored transposed, (.., d_k, T), so Q K^T is a plain matmul;
- one tensor per layer (no stacking and splitting of the whole cache every step);
- `rows` (b, K) says which earlier row each row continues: the cache is reordered inside
  the step (finished sentences leave, beams are re-ranked) instead of by the caller;
- the step ends with log-softmax and top-k, so only (b, K, 2K) candidates leave it, not a
  (b * K, V) logits matrix. 2K candidates per row are enough for beam search: at most K of a
  sentence's 2K best end in </s>. Greedy search takes the first.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from nmt.model.layers import MultiHeadAttention
from nmt.model.transformer import Transformer, padding_mask


def _attend(attn: MultiHeadAttention, q_in: Tensor, k_t: Tensor, v: Tensor, mask: Tensor | None) -> Tensor:
    """softmax(Q K^T / sqrt(d_k)) V (3.2.1) with pre-transposed keys k_t (N, h, d_k, Tk).

    q_in (N, Tq, d_model), v (N, h, Tk, d_k), mask (N, 1, 1, Tk) True = may attend."""
    q = attn.split_heads(attn.q_proj(q_in)) * (1.0 / math.sqrt(attn.d_k))  # (N, h, Tq, d_k)
    scores = q @ k_t  # (N, h, Tq, Tk)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    y = scores.softmax(dim=-1) @ v  # (N, h, Tq, d_k)
    N, _, Tq, _ = y.shape
    return attn.out_proj(y.transpose(1, 2).reshape(N, Tq, attn.h * attn.d_k))


def _keys_values(attn: MultiHeadAttention, x: Tensor) -> tuple[Tensor, Tensor]:
    """Projected keys, transposed (N, h, d_k, T), and values (N, h, T, d_k)."""
    k, v = attn.project_kv(x)
    return k.transpose(2, 3), v


def best_next(logits: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """The k largest next-token log-probabilities (fp32) and their ids, best first."""
    return torch.topk(torch.log_softmax(logits.float(), dim=-1), k, dim=-1)


class Encoder(nn.Module):
    """src (b, S) -> per decoder layer: cross keys (b, h, d_k, S) and values (b, h, S, d_k)."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(self, src: Tensor) -> list[Tensor]:
        memory = self.model.encode(src, padding_mask(src))  # (b, S, d_model)
        out: list[Tensor] = []
        for layer in self.model.decoder:
            out.extend(_keys_values(layer.cross_attn, memory))
        return out


class DecoderStep(nn.Module):
    """One more position for every row: the 2K best next tokens of each and the grown cache.

    tokens (b, K): newest token per row (<s> at the first step); rows (b, K): the earlier row
    each row continues (its cache); src_mask (b, S); cache: per layer self keys (n, h, d_k, t),
    self values (n, h, t, d_k), then per layer cross keys and values as `Encoder` returns them.
    Returns log-probs (b, K, 2K), ids (b, K, 2K), and the self keys/values grown to t + 1.

    `own_output_weight`: the output projection gets its own transposed copy of the (tied)
    weight, same values; for export: ONNX Runtime's int8 quantiser then sees a plain MatMul
    weight, not one that the embedding lookup shares.
    """

    def __init__(self, model: Transformer, own_output_weight: bool = False) -> None:
        super().__init__()
        self.model = model
        weight = model.generator.weight.detach()
        self.output_t = nn.Parameter(weight.t().contiguous(), requires_grad=False) if own_output_weight else None

    def forward(self, tokens: Tensor, rows: Tensor, src_mask: Tensor, *cache: Tensor) -> tuple[Tensor, ...]:
        model = self.model
        L = len(model.decoder)
        b, K = tokens.shape
        self_kv, cross_kv = cache[:2 * L], cache[2 * L:]
        index = rows.reshape(-1)  # (b*K,)
        x = model.embed(model.tgt_embed, tokens.reshape(-1, 1), start=self_kv[1].shape[2])  # (b*K, 1, d)
        mask = src_mask[:, None, None, :]  # (b, 1, 1, S)
        grown: list[Tensor] = []
        for i, layer in enumerate(model.decoder):
            k_t, v = self_kv[2 * i].index_select(0, index), self_kv[2 * i + 1].index_select(0, index)

            def self_attention(y: Tensor, layer=layer, k_t=k_t, v=v) -> Tensor:
                new_k, new_v = _keys_values(layer.self_attn, y)
                grown.extend([torch.cat([k_t, new_k], dim=3), torch.cat([v, new_v], dim=2)])
                return _attend(layer.self_attn, y, grown[-2], grown[-1], None)

            def cross_attention(y: Tensor, layer=layer, i=i) -> Tensor:
                by_sentence = y.reshape(b, K, y.shape[-1])  # a sentence's K rows are K queries
                out = _attend(layer.cross_attn, by_sentence, cross_kv[2 * i], cross_kv[2 * i + 1], mask)
                return out.reshape(y.shape)

            x = layer.res1(x, self_attention)
            x = layer.res2(x, cross_attention)
            x = layer.res3(x, layer.ffn)
        h = model.dec_norm(x.reshape(b * K, -1))  # (b*K, d)
        logits = F.linear(h, model.generator.weight) if self.output_t is None else h @ self.output_t
        logp, ids = best_next(logits, 2 * K)  # (b*K, 2K)
        return (logp.reshape(b, K, 2 * K), ids.reshape(b, K, 2 * K), *grown)


def empty_cache(model: Transformer, rows: int, device: torch.device | None = None) -> list[Tensor]:
    """Self keys/values of length 0 for `rows` rows: the cache before the first step."""
    cfg = model.cfg
    d_k = cfg.d_model // cfg.n_heads
    out: list[Tensor] = []
    for _ in model.decoder:
        out += [torch.zeros(rows, cfg.n_heads, d_k, 0, device=device),
                torch.zeros(rows, cfg.n_heads, 0, d_k, device=device)]
    return out
