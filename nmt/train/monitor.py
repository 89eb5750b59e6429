"""What training watches: validation loss, greedy BLEU on a validation sample, curves.

The BLEU here is sacreBLEU with `tokenize="none"` on spaCy tokens of greedy output, a
cheap signal for early stopping; the evaluate stage reports the comparable numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast

import torch

from nmt.decode.backend import greedy
from nmt.files.atomic import atomic_open
from nmt.model.transformer import Transformer
from nmt.text.vocabularies import Vocabularies
from nmt.train.batching import Pairs, collate, make_batches
from nmt.train.loss import LabelSmoothingKL


@torch.no_grad()
def validation_loss(model: Transformer, pairs: Pairs, criterion: LabelSmoothingKL, max_tokens: int,
                    device: torch.device, autocast: bool) -> float:
    """Label-smoothed KL per target token over all of `pairs` (teacher forcing)."""
    model.eval()
    total, count = 0.0, 0
    for idx in make_batches(pairs, max_tokens, seed=0, epoch=0):
        b = collate(pairs, idx).to(device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
            logits = model(b.src, b.tgt_in)
        s, n = criterion(logits, b.tgt_out)
        total, count = total + float(s), count + int(n)
    return total / max(count, 1)


@torch.no_grad()
def greedy_bleu(model: Transformer, pairs: Pairs, vocabs: Vocabularies, device: torch.device,
                batch_size: int = 64) -> float:
    """sacreBLEU (tokenize=none) of greedy translations of `pairs` against their targets."""
    import sacrebleu

    model.eval()
    hyps, refs = [], []
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start:start + batch_size]
        b = collate(chunk, list(range(len(chunk))))
        for out, (_, tgt) in zip(greedy(model, b.src.to(device)), chunk):
            hyps.append(" ".join(vocabs.output_tokens(out)))
            refs.append(" ".join(vocabs.output_tokens(int(i) for i in cast(Sequence[int], tgt))))
    return sacrebleu.corpus_bleu(hyps, [refs], tokenize="none", force=True).score  # tokenized on purpose


def plot_curves(history: list[dict], path: Path) -> None:
    """PNG of training/validation loss, learning rate and validation BLEU (renders offline)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    steps = [h["step"] for h in history if "train_loss" in h]
    axes[0].plot(steps, [h["train_loss"] for h in history if "train_loss" in h], label="train")
    val = [h for h in history if "val_loss" in h]
    axes[0].plot([h["step"] for h in val], [h["val_loss"] for h in val], "o-", label="validation")
    axes[0].set(title="label-smoothed KL per token", xlabel="update")
    axes[0].legend()
    axes[1].plot(steps, [h["lr"] for h in history if "train_loss" in h])
    axes[1].set(title="learning rate (Noam)", xlabel="update")
    bleu = [h for h in history if "val_bleu" in h]
    axes[2].plot([h["step"] for h in bleu], [h["val_bleu"] for h in bleu], "o-")
    axes[2].set(title="validation BLEU (greedy, sacreBLEU tokenize=none)", xlabel="update")
    fig.tight_layout()
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=80)
    plt.close(fig)
