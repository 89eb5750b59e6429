"""Attention heatmaps for the report: what each head of each layer attends to.

For one sentence, the model is run teacher-forced on its own translation with attention
capture switched on (`Transformer.capture_attention`), which gives, per layer, the weights
of encoder self-attention, decoder (masked) self-attention and encoder-decoder attention
(Vaswani et al. 2017, section 3.2.3). One PNG per (kind, layer), the heads in a grid,
tokens on the axes, as in pytorch-original-transformer's visualisations.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path

import torch

from nmt.model.transformer import Transformer
from nmt.text.vocab import BOS_ID, EOS_ID, Vocabulary

log = logging.getLogger(__name__)

KINDS: dict[str, str] = {
    "encoder": "encoder self-attention",
    "decoder_self": "decoder self-attention (masked)",
    "cross": "encoder-decoder attention",
}


@dataclass(frozen=True)
class AttentionMaps:
    """Weights of one sentence: kind -> one (h, Tq, Tk) array per layer, with axis labels."""

    weights: dict[str, list]  # numpy arrays (h, Tq, Tk)
    src_labels: list[str]  # source symbols + </s>
    out_labels: list[str]  # output symbols + </s> (the tokens each decoder row predicts)
    in_labels: list[str]  # <s> + output symbols (the decoder's inputs, keys of its self-attention)

    def axes(self, kind: str) -> tuple[list[str], list[str]]:
        """(query labels, key labels) of one kind."""
        if kind == "encoder":
            return self.src_labels, self.src_labels
        if kind == "decoder_self":
            return self.out_labels, self.in_labels
        return self.out_labels, self.src_labels


@torch.no_grad()
def capture(model: Transformer, src_ids: list[int], out_ids: list[int], src_vocab: Vocabulary,
            tgt_vocab: Vocabulary) -> AttentionMaps:
    """Attention weights when the model reads `src_ids` (with </s>) and predicts `out_ids`."""
    model.eval()
    device = next(model.parameters()).device
    src = torch.tensor([src_ids], device=device)
    tgt_in = torch.tensor([[BOS_ID, *out_ids]], device=device)
    with model.capture_attention() as weights:
        model(src, tgt_in)
    arrays = {kind: [w[0].float().cpu().numpy() for w in weights[kind]] for kind in KINDS}
    words = tgt_vocab.decode(out_ids)
    return AttentionMaps(arrays, src_vocab.decode([i for i in src_ids if i != EOS_ID]) + ["</s>"],
                         words + ["</s>"], ["<s>"] + words)


def plot_layer(maps: AttentionMaps, kind: str, layer: int, path: Path) -> None:
    """One PNG: every head of one layer of one attention kind, tokens on the axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    heads = maps.weights[kind][layer]  # (h, Tq, Tk)
    rows_labels, cols_labels = maps.axes(kind)
    h = heads.shape[0]
    ncols = min(h, 4)
    nrows = math.ceil(h / ncols)
    cell_w = 0.9 + 0.22 * len(cols_labels)
    cell_h = 0.9 + 0.22 * len(rows_labels)
    fig, axs = plt.subplots(nrows, ncols, figsize=(cell_w * ncols, cell_h * nrows + 0.6), squeeze=False)
    for i, ax in enumerate(axs.flat):
        if i >= h:
            ax.axis("off")
            continue
        ax.imshow(heads[i], cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_title(f"head {i + 1}", fontsize=8)
        ax.set_xticks(range(len(cols_labels)), cols_labels, rotation=90, fontsize=6)
        ax.set_yticks(range(len(rows_labels)), rows_labels, fontsize=6)
    fig.suptitle(f"{KINDS[kind]}, layer {layer + 1}", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def plot_all(maps: AttentionMaps, out_dir: Path) -> dict[str, list[str]]:
    """Every kind and layer into `out_dir`; returns kind -> PNG file names, layer order."""
    files: dict[str, list[str]] = {}
    for kind in KINDS:
        files[kind] = []
        for layer in range(len(maps.weights[kind])):
            name = f"{kind}-layer{layer + 1}.png"
            plot_layer(maps, kind, layer, out_dir / name)
            files[kind].append(name)
    return files
