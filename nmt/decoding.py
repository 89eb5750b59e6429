"""Decoding with the key/value cache: encoder output and cross-attention keys/values are
computed once per batch, and every step feeds only the newest token. Sentences that have
produced </s> (or reached their length limit) leave the batch, so they stop costing
compute. Length limit: source length + `max_extra` (paper section 6.1: input length + 50).
"""

from __future__ import annotations

import torch
from torch import Tensor

from nmt.model import Transformer, padding_mask
from nmt.vocab import BOS_ID, EOS_ID, PAD_ID


@torch.no_grad()
def greedy(model: Transformer, src: Tensor, max_extra: int = 50) -> list[list[int]]:
    """Greedy decoding of a (B, S) source batch -> B id lists (no <s> / </s>)."""
    src_mask = padding_mask(src)
    cache = model.init_cache(model.encode(src, src_mask))
    B = src.shape[0]
    limit = ((src != PAD_ID).sum(dim=1) + max_extra).clamp(max=model.cfg.max_len - 1)  # (B,)
    alive = torch.arange(B, device=src.device)  # original row of each row still decoding
    last = torch.full((B, 1), BOS_ID, dtype=torch.long, device=src.device)
    out: list[list[int]] = [[] for _ in range(B)]
    for t in range(int(limit.max())):
        logits, cache = model.decode_step(last, cache, src_mask)
        nxt = logits.argmax(dim=-1)  # (b,)
        for row, tok in zip(alive.tolist(), nxt.tolist()):
            if tok != EOS_ID:
                out[row].append(tok)
        keep = (nxt != EOS_ID) & (t + 1 < limit[alive])
        if not bool(keep.any()):
            break
        idx = keep.nonzero().squeeze(1)
        cache, src_mask, alive, last = cache.select(idx), src_mask[idx], alive[idx], nxt[idx, None]
    return out
