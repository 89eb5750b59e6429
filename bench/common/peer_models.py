"""The peers bench/train_throughput.py times against ours: what each one is, and how it gets our weights.

- `straightforward` (`StraightforwardTransformer`): The Annotated Transformer's way, with
  `ManualAttention` (masked_fill + softmax, separate q/k/v projections), logits at every position,
  and `DenseLabelSmoothing` (a dense (tokens x vocab) smoothed target and nn.KLDivLoss);
- `torch_nn_transformer` (`TorchTransformer`): torch.nn.Transformer of the same shape, with its
  dropouts set to ours, with our embeddings, tied output and loss (nmt/train/loss.py).

Both share `Embedded` (scaled embeddings, sinusoidal positions, the output layer tied as ours is),
take their sizes and dropout settings from the same ModelConfig as ours, and hold a copy of our
weights (`copy_from`: our fused kv_proj split or stacked into the peer's layout). `build(name, ...)`
gives the (model, criterion) of any of `MODELS`, ours included.
"""

from __future__ import annotations

import math
import warnings

import torch
from torch import Tensor, nn

from nmt.config.model import ModelConfig
from nmt.model.layers import MultiHeadAttention, sinusoidal_table
from nmt.model.transformer import Transformer
from nmt.text.vocab import PAD_ID
from nmt.train.loss import LabelSmoothingKL

MODELS = ("ours", "straightforward", "torch_nn_transformer")
PEERS = MODELS[1:]


class DenseLabelSmoothing(nn.Module):
    """The textbook construction: a full (tokens x vocab) smoothed target and nn.KLDivLoss.

    The target is exactly ours (nmt/train/loss.py): 1 - eps on the gold token, eps / (V - 2) on
    every other token but <pad>, rows whose gold token is <pad> all zero; summed over tokens."""

    def __init__(self, vocab_size: int, eps: float = 0.1) -> None:
        super().__init__()
        self.V, self.eps, self.kl = vocab_size, eps, nn.KLDivLoss(reduction="sum")

    def forward(self, logits: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
        logp = torch.log_softmax(logits.reshape(-1, self.V).float(), dim=-1)  # (N, V), fp32 as ours
        t = target.reshape(-1)
        dist = torch.full_like(logp, self.eps / (self.V - 2))
        dist.scatter_(1, t[:, None], 1.0 - self.eps)
        dist[:, PAD_ID] = 0
        dist[t == PAD_ID] = 0
        return self.kl(logp, dist), (t != PAD_ID).sum()


class ManualAttention(nn.Module):
    """Multi-head attention written out: q/k/v projections, masked_fill, softmax, dropout."""

    def __init__(self, d: int, h: int, p: float) -> None:
        super().__init__()
        self.h, self.dk = h, d // h
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.drop = nn.Dropout(p)  # on the attention weights: p = our attn_dropout

    def forward(self, x: Tensor, mem: Tensor, mask: Tensor) -> Tensor:
        B = x.shape[0]
        q, k, v = (f(t).view(B, -1, self.h, self.dk).transpose(1, 2)
                   for f, t in ((self.q, x), (self.k, mem), (self.v, mem)))  # (B, h, T, dk)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        scores = scores.masked_fill(~mask, -1e9)
        y = self.drop(scores.softmax(-1)) @ v
        return self.o(y.transpose(1, 2).reshape(B, -1, self.h * self.dk))

    @torch.no_grad()
    def copy_from(self, ours: MultiHeadAttention) -> None:
        """Our fused kv_proj holds K's rows first, then V's (`chunk(2)` in project_kv)."""
        d = ours.q_proj.out_features
        self.q.load_state_dict(ours.q_proj.state_dict())
        self.o.load_state_dict(ours.out_proj.state_dict())
        for lin, rows in ((self.k, slice(0, d)), (self.v, slice(d, 2 * d))):
            lin.weight.copy_(ours.kv_proj.weight[rows])
            lin.bias.copy_(ours.kv_proj.bias[rows])


class Embedded(nn.Module):
    """Scaled embeddings + sinusoidal positions, and the output layer, tied as ours is."""

    def __init__(self, cfg: ModelConfig, vs: int, vt: int) -> None:
        super().__init__()
        d, self.d, self.norm_first = cfg.d_model, cfg.d_model, cfg.norm_first
        self.te = nn.Embedding(vt, d)
        self.se = self.te if cfg.tie_source else nn.Embedding(vs, d)
        self.register_buffer("pe", sinusoidal_table(cfg.max_len, d), persistent=False)
        self.drop = nn.Dropout(cfg.dropout)
        self.gen = nn.Linear(d, vt, bias=False)
        if cfg.tie_output:
            self.gen.weight = self.te.weight

    def embed(self, table: nn.Embedding, ids: Tensor) -> Tensor:
        return self.drop(table(ids) * math.sqrt(self.d) + self.pe[: ids.shape[1]])

    @torch.no_grad()
    def copy_embeddings(self, ours: Transformer) -> None:
        self.se.weight.copy_(ours.src_embed.weight)
        self.te.weight.copy_(ours.tgt_embed.weight)
        self.gen.weight.copy_(ours.generator.weight)  # the same tensor as te's when tied


class StraightforwardTransformer(Embedded):
    """The Annotated-Transformer style: manual attention, a residual block written per layer."""

    def __init__(self, cfg: ModelConfig, vs: int, vt: int) -> None:
        super().__init__(cfg, vs, vt)
        d = cfg.d_model

        def block(n_attn: int) -> nn.ModuleDict:
            return nn.ModuleDict({
                "attn": nn.ModuleList(ManualAttention(d, cfg.n_heads, cfg.attn_dropout) for _ in range(n_attn)),
                "norms": nn.ModuleList(nn.LayerNorm(d) for _ in range(n_attn + 1)),
                "ff": nn.Sequential(nn.Linear(d, cfg.d_ff), nn.ReLU(), nn.Linear(cfg.d_ff, d))})
        self.enc = nn.ModuleList(block(1) for _ in range(cfg.n_layers))
        self.dec = nn.ModuleList(block(2) for _ in range(cfg.n_layers))
        # as ours: a final LayerNorm per stack with pre-norm only
        self.enc_norm = nn.LayerNorm(d) if cfg.norm_first else nn.Identity()
        self.dec_norm = nn.LayerNorm(d) if cfg.norm_first else nn.Identity()

    def residual(self, x: Tensor, norm: nn.Module, sublayer) -> Tensor:
        if self.norm_first:
            return x + self.drop(sublayer(norm(x)))
        return norm(x + self.drop(sublayer(x)))

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        T = tgt.shape[1]
        smask = (src != PAD_ID)[:, None, None, :]
        causal = torch.ones(T, T, dtype=torch.bool, device=tgt.device).tril()
        tmask = (tgt != PAD_ID)[:, None, None, :] & causal
        x = self.embed(self.se, src)
        for b in self.enc:
            x = self.residual(x, b["norms"][0], lambda z, b=b: b["attn"][0](z, z, smask))
            x = self.residual(x, b["norms"][1], b["ff"])
        x = self.enc_norm(x)
        y = self.embed(self.te, tgt)
        for b in self.dec:
            y = self.residual(y, b["norms"][0], lambda z, b=b: b["attn"][0](z, z, tmask))
            y = self.residual(y, b["norms"][1], lambda z, b=b: b["attn"][1](z, x, smask))
            y = self.residual(y, b["norms"][2], b["ff"])
        return self.gen(self.dec_norm(y))

    @torch.no_grad()
    def copy_from(self, ours: Transformer) -> None:
        self.copy_embeddings(ours)
        for mine, theirs in zip(self.enc, ours.encoder):
            mine["attn"][0].copy_from(theirs.self_attn)
        for mine, theirs in zip(self.dec, ours.decoder):
            mine["attn"][0].copy_from(theirs.self_attn)
            mine["attn"][1].copy_from(theirs.cross_attn)
        for mine, theirs in [*zip(self.enc, ours.encoder), *zip(self.dec, ours.decoder)]:
            residuals = [theirs.res1, theirs.res2, *([theirs.res3] if hasattr(theirs, "res3") else [])]
            for norm, res in zip(mine["norms"], residuals):
                norm.load_state_dict(res.norm.state_dict())
            mine["ff"][0].load_state_dict(theirs.ffn.w1.state_dict())
            mine["ff"][2].load_state_dict(theirs.ffn.w2.state_dict())
        self.enc_norm.load_state_dict(ours.enc_norm.state_dict())
        self.dec_norm.load_state_dict(ours.dec_norm.state_dict())


class TorchTransformer(Embedded):
    """torch.nn.Transformer of the same shape, with our embeddings, tied output and loss."""

    def __init__(self, cfg: ModelConfig, vs: int, vt: int) -> None:
        super().__init__(cfg, vs, vt)
        with warnings.catch_warnings():  # pre-norm: "enable_nested_tensor is True, but ... norm_first was True"
            warnings.filterwarnings("ignore", message="enable_nested_tensor")
            self.tf = nn.Transformer(cfg.d_model, cfg.n_heads, cfg.n_layers, cfg.n_layers, cfg.d_ff, cfg.dropout,
                                     batch_first=True, norm_first=cfg.norm_first)
        # nn.Transformer has one `dropout` for everything. Its MultiheadAttention modules read the
        # attention-weight dropout from their float attribute `dropout`: set it to our attn_dropout.
        # Its layers also drop out inside the feed-forward block (linear2(dropout(relu(linear1(x))))),
        # which ours does not: that `dropout` module becomes an identity. The residual dropouts
        # (dropout1/2/3) stay at cfg.dropout, as ours.
        for layer in [*self.tf.encoder.layers, *self.tf.decoder.layers]:
            for attn in (layer.self_attn, getattr(layer, "multihead_attn", None)):
                if attn is not None:
                    attn.dropout = cfg.attn_dropout
            layer.dropout = nn.Identity()
        # nn.Transformer always ends each stack with a LayerNorm; ours has one with pre-norm only
        # (post-norm already normalises every sub-layer's output), so post-norm drops them.
        if not cfg.norm_first:
            self.tf.encoder.norm, self.tf.decoder.norm = nn.Identity(), nn.Identity()

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        T = tgt.shape[1]
        x, y = self.embed(self.se, src), self.embed(self.te, tgt)
        causal = nn.Transformer.generate_square_subsequent_mask(T, device=tgt.device, dtype=torch.bool)
        out = self.tf(x, y, tgt_mask=causal, tgt_is_causal=True, src_key_padding_mask=src == PAD_ID,
                      memory_key_padding_mask=src == PAD_ID, tgt_key_padding_mask=tgt == PAD_ID)
        return self.gen(out)

    @torch.no_grad()
    def copy_from(self, ours: Transformer) -> None:
        """nn.MultiheadAttention stacks q, k, v in `in_proj_weight`: q_proj then our fused kv_proj."""
        self.copy_embeddings(ours)

        def attention(mine: nn.MultiheadAttention, theirs: MultiHeadAttention) -> None:
            mine.in_proj_weight.copy_(torch.cat([theirs.q_proj.weight, theirs.kv_proj.weight]))
            mine.in_proj_bias.copy_(torch.cat([theirs.q_proj.bias, theirs.kv_proj.bias]))
            mine.out_proj.load_state_dict(theirs.out_proj.state_dict())

        for mine, theirs in zip(self.tf.encoder.layers, ours.encoder):
            attention(mine.self_attn, theirs.self_attn)
        for mine, theirs in zip(self.tf.decoder.layers, ours.decoder):
            attention(mine.self_attn, theirs.self_attn)
            attention(mine.multihead_attn, theirs.cross_attn)
            mine.norm3.load_state_dict(theirs.res3.norm.state_dict())
        for mine, theirs in [*zip(self.tf.encoder.layers, ours.encoder), *zip(self.tf.decoder.layers, ours.decoder)]:
            mine.norm1.load_state_dict(theirs.res1.norm.state_dict())
            mine.norm2.load_state_dict(theirs.res2.norm.state_dict())
            mine.linear1.load_state_dict(theirs.ffn.w1.state_dict())
            mine.linear2.load_state_dict(theirs.ffn.w2.state_dict())
        self.tf.encoder.norm.load_state_dict(ours.enc_norm.state_dict())
        self.tf.decoder.norm.load_state_dict(ours.dec_norm.state_dict())


def build(name: str, ours: Transformer, smoothing: float) -> tuple[nn.Module, nn.Module]:
    """(model, criterion) of `name`; a peer starts from a copy of `ours`' weights."""
    vs, vt = ours.src_embed.num_embeddings, ours.generator.out_features
    if name == "ours":
        return ours, LabelSmoothingKL(vt, smoothing)
    if name == "straightforward":
        model = StraightforwardTransformer(ours.cfg, vs, vt)
        model.copy_from(ours)
        return model, DenseLabelSmoothing(vt, smoothing)
    if name == "torch_nn_transformer":
        model = TorchTransformer(ours.cfg, vs, vt)
        model.copy_from(ours)
        return model, LabelSmoothingKL(vt, smoothing)
    raise ValueError(f"unknown model {name!r}; one of {MODELS}")
