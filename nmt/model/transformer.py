"""The Transformer of "Attention Is All You Need" (Vaswani et al. 2017), section 3.

`encode()` maps source ids to memory (3.1, encoder); `decode()` maps memory and the shifted
target to next-token logits (3.1, decoder; 3.4, softmax). Embeddings are scaled by
sqrt(d_model) and share weights with the output projection (and, with one vocabulary, the
source embedding) as in 3.4. Search decodes one position at a time with a key/value cache
(`nmt.model.incremental`). `build_model()` is the one factory.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import cast

import torch
from torch import Tensor, nn

from nmt.config.model import ModelConfig
from nmt.errors import ConfigError
from nmt.model.layers import (
    DecoderLayer,
    Dropout,
    EncoderLayer,
    MultiHeadAttention,
    padding_mask,
    sinusoidal_table,
)
from nmt.text.vocab import PAD_ID, Vocabulary

__all__ = ["ModelConfig", "Transformer", "build_model", "padding_mask"]


class Transformer(nn.Module):
    pe: Tensor  # the buffer register_buffer adds
    def __init__(self, cfg: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> None:
        super().__init__()
        self.cfg = cfg
        self.src_embed = nn.Embedding(src_vocab_size, cfg.d_model, padding_idx=PAD_ID)
        self.tgt_embed = (self.src_embed if cfg.tie_source
                          else nn.Embedding(tgt_vocab_size, cfg.d_model, padding_idx=PAD_ID))
        self.register_buffer("pe", sinusoidal_table(cfg.max_len, cfg.d_model), persistent=False)
        self.drop = Dropout(cfg.dropout)
        self.encoder = cast(Sequence[EncoderLayer], nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_layers)))
        self.decoder = cast(Sequence[DecoderLayer], nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_layers)))
        # pre-norm leaves the residual stream un-normalised: one final LayerNorm per stack
        self.enc_norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()
        self.dec_norm = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()
        self.generator = nn.Linear(cfg.d_model, tgt_vocab_size, bias=False)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        if cfg.tie_output:
            self.generator.weight = self.tgt_embed.weight
        with torch.no_grad():
            self.src_embed.weight[PAD_ID].zero_()
            self.tgt_embed.weight[PAD_ID].zero_()

    def embed(self, embedding: nn.Embedding, ids: Tensor, start: int = 0) -> Tensor:
        """Embedding * sqrt(d_model) + positional encoding, then dropout (3.4, 3.5, 5.4)."""
        T = ids.shape[1]
        if start + T > self.cfg.max_len:
            raise ValueError(f"sequence of {start + T} positions exceeds model.max_len={self.cfg.max_len}")
        return self.drop(embedding(ids) * math.sqrt(self.cfg.d_model) + self.pe[start:start + T])

    def encode(self, src: Tensor, src_mask: Tensor) -> Tensor:
        """(B, S) ids, (B, 1, 1, S) mask -> memory (B, S, d_model)."""
        x = self.embed(self.src_embed, src)
        for layer in self.encoder:
            x = layer(x, src_mask)
        return self.enc_norm(x)

    def decode(self, tgt_in: Tensor, memory: Tensor, src_mask: Tensor, keep: Tensor | None = None,
               project: bool = True) -> Tensor:
        """(B, T) shifted target ids + memory -> logits (B, T, V); position t sees targets <= t.

        With `keep` (B, T) bool, only the kept positions are projected: logits (N, V). Training
        passes the non-pad positions, so the largest matmul skips padding. Without `project`, the
        decoder's last states (B, T, d_model) or (N, d_model), for a loss that applies `generator`
        itself (`LabelSmoothingKL.projected`)."""
        x = self.embed(self.tgt_embed, tgt_in)
        for layer in self.decoder:
            x, _ = layer(x, layer.cross_attn.project_kv(memory), src_mask)
        x = self.dec_norm(x)
        x = x if keep is None else x[keep]
        return self.generator(x) if project else x

    def forward(self, src: Tensor, tgt_in: Tensor, keep: Tensor | None = None, project: bool = True) -> Tensor:
        src_mask = padding_mask(src)
        return self.decode(tgt_in, self.encode(src, src_mask), src_mask, keep, project)

    @contextmanager
    def capture_attention(self) -> Iterator[dict[str, list[Tensor]]]:
        """Keep attention weights of the forward passes run inside the block (reports).

        Yields a dict filled on exit: encoder / decoder_self / cross -> one (B, h, Tq, Tk)
        tensor per layer. Outside the block attention runs through the fused kernel.
        """
        modules = [m for m in self.modules() if isinstance(m, MultiHeadAttention)]
        weights: dict[str, list[Tensor]] = {}
        for m in modules:
            m.capture, m.weights = True, None
        try:
            yield weights
        finally:
            for m in modules:
                m.capture = False
            weights["encoder"] = [cast(Tensor, layer.self_attn.weights) for layer in self.encoder]
            weights["decoder_self"] = [cast(Tensor, layer.self_attn.weights) for layer in self.decoder]
            weights["cross"] = [cast(Tensor, layer.cross_attn.weights) for layer in self.decoder]
            for m in modules:
                m.weights = None


def build_model(cfg: ModelConfig, src_vocab: Vocabulary, tgt_vocab: Vocabulary) -> Transformer:
    """The one factory: checks that the configured weight tying fits the vocabularies."""
    if cfg.tie_source and src_vocab != tgt_vocab:
        raise ConfigError(f"model.tie_source: sharing source and target embeddings needs one vocabulary "
                          f"(set vocab.joint: true); got {len(src_vocab)} source and {len(tgt_vocab)} target symbols")
    return Transformer(cfg, len(src_vocab), len(tgt_vocab))
