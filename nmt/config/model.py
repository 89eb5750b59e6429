"""The `model` section of params.yaml: the Transformer's shape (Vaswani et al. 2017, Table 3)."""

from __future__ import annotations

from dataclasses import dataclass

from nmt.config.loader import require


@dataclass(frozen=True)
class ModelConfig:
    """The `model` section of params.yaml. Defaults: the paper's base model."""

    n_layers: int = 6  # N: layers in the encoder and in the decoder
    d_model: int = 512  # width of every residual stream
    n_heads: int = 8  # h: attention heads; d_k = d_v = d_model / h
    d_ff: int = 2048  # inner width of the position-wise feed-forward network
    dropout: float = 0.1  # P_drop on sub-layer outputs and embedding sums
    attn_dropout: float = 0.0  # dropout on attention weights (0 in the paper)
    norm_first: bool = False  # pre-norm (LayerNorm before each sub-layer) instead of the paper's post-norm
    tie_output: bool = True  # decoder input embedding shares weights with the output projection
    tie_source: bool = False  # also share the encoder embedding (needs vocab.joint: true)
    max_len: int = 512  # longest sequence the positional encoding table covers

    def __post_init__(self) -> None:
        require(self.n_layers >= 1, "n_layers", "must be >= 1")
        require(self.d_model % self.n_heads == 0, "n_heads", f"must divide d_model ({self.d_model})")
        require(0.0 <= self.dropout < 1.0 and 0.0 <= self.attn_dropout < 1.0, "dropout", "must be in [0, 1)")
        require(not self.tie_source or self.tie_output, "tie_source", "needs tie_output: true as well")
