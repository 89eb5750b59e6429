"""Greedy and beam search with the key/value cache (Vaswani et al. 2017, section 6.1).

Encoder output and cross-attention keys/values are computed once per batch, and every
step feeds only the newest token. Sentences that are done leave the batch, so they stop
costing compute. Length limit: source length + `max_extra` (paper: input length + 50).
Beam search ranks finished hypotheses by log-probability / lp(Y) with the GNMT length
penalty lp(Y) = ((5 + |Y|) / 6) ** alpha (paper: beam 4, alpha 0.6).

`use_cache=False` recomputes the whole prefix at every step (the reference tutorials'
way); it exists to test and benchmark the cache.
"""

from __future__ import annotations

import torch
from torch import Tensor

from nmt.decode.hypotheses import Finished
from nmt.model.transformer import KVCache, Transformer, padding_mask
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID


class _Stepper:
    """Next-token logits for the rows still decoding, with or without the cache."""

    def __init__(self, model: Transformer, src: Tensor, rows: Tensor, use_cache: bool) -> None:
        self.model, self.use_cache = model, use_cache
        mask = padding_mask(src)
        memory = model.encode(src, mask)
        self.mask, self.memory = mask[rows], memory[rows]
        self.cache: KVCache | None = model.init_cache(self.memory) if use_cache else None
        self.prefix = torch.full((len(rows), 1), BOS_ID, dtype=torch.long, device=src.device)

    def logits(self) -> Tensor:
        """(n, V) logits for the position after the current prefix."""
        if self.cache is not None:
            logits, self.cache = self.model.decode_step(self.prefix[:, -1:], self.cache, self.mask)
            return logits
        last = torch.zeros(self.prefix.shape, dtype=torch.bool, device=self.prefix.device)
        last[:, -1] = True  # the output projection only where it is needed, as the tutorials do
        return self.model.decode(self.prefix, self.memory, self.mask, keep=last)

    def advance(self, index: Tensor | None, tokens: Tensor, sources_kept: bool = False) -> None:
        """Keep rows `index` (in that order; None: all) and append `tokens`, one per kept row.

        `sources_kept`: every row still reads the same source as before (beams reordered
        within their sentence), so the source side (mask, memory, cross keys/values) stays."""
        if index is None:
            self.prefix = torch.cat([self.prefix, tokens[:, None]], dim=1)
            return
        self.prefix = torch.cat([self.prefix[index], tokens[:, None]], dim=1)
        if not sources_kept:
            self.mask, self.memory = self.mask[index], self.memory[index]
        if self.cache is not None:
            c = self.cache
            if sources_kept:
                self.cache = KVCache(c.self_k.index_select(1, index), c.self_v.index_select(1, index), c.cross_k, c.cross_v)
            else:
                self.cache = c.select(index)


def _limits(model: Transformer, src: Tensor, max_extra: int) -> Tensor:
    return ((src != PAD_ID).sum(dim=1) + max_extra).clamp(max=model.cfg.max_len - 1)  # (B,)


@torch.no_grad()
def greedy(model: Transformer, src: Tensor, max_extra: int = 50, use_cache: bool = True) -> list[list[int]]:
    """Greedy decoding of a (B, S) source batch -> B id lists (no <s> / </s>)."""
    B = src.shape[0]
    limit = _limits(model, src, max_extra)
    alive = torch.arange(B, device=src.device)  # original row of each row still decoding
    step = _Stepper(model, src, alive, use_cache)
    out: list[list[int]] = [[] for _ in range(B)]
    for t in range(int(limit.max())):
        nxt = step.logits().argmax(dim=-1)  # (b,)
        for row, tok in zip(alive.tolist(), nxt.tolist()):
            if tok != EOS_ID:
                out[row].append(tok)
        keep = (nxt != EOS_ID) & (t + 1 < limit[alive])
        if not bool(keep.any()):
            break
        if bool(keep.all()):
            step.advance(None, nxt)
            continue
        idx = keep.nonzero().squeeze(1)
        alive = alive[idx]
        step.advance(idx, nxt[idx])
    return out


@torch.no_grad()
def beam_search(model: Transformer, src: Tensor, beam_size: int = 4, alpha: float = 0.6,
                max_extra: int = 50, use_cache: bool = True) -> list[list[int]]:
    """Beam search of a (B, S) source batch -> the best id list per sentence."""
    B, K = src.shape[0], beam_size
    limit = _limits(model, src, max_extra)
    alive = torch.arange(B, device=src.device)  # sentences still searching
    step = _Stepper(model, src, alive.repeat_interleave(K), use_cache)  # rows: sentence-major, K beams each
    scores = torch.full((B, K), float("-inf"), device=src.device)
    scores[:, 0] = 0.0  # all beams start as the same empty hypothesis: keep one
    finished = Finished(B, K, alpha)
    for t in range(int(limit.max())):
        n = len(alive)
        logp = torch.log_softmax(step.logits().float(), dim=-1)  # (n*K, V)
        V = logp.shape[-1]
        cand = (scores[:, :, None] + logp.view(n, K, V)).view(n, K * V)
        top_scores, top_ids = cand.topk(2 * K, dim=1)  # (n, 2K): at most K of them end in </s>
        beams, toks = top_ids // V, top_ids % V
        hyps = step.prefix[:, 1:].view(n, K, -1)  # (n, K, t) tokens so far
        at_limit = (t + 1 >= limit[alive]).tolist()
        is_eos = toks == EOS_ID
        finished.add_ended(t, alive.tolist(), top_scores, beams, is_eos, hyps)
        cont_scores = top_scores.masked_fill(is_eos, float("-inf"))
        cont_scores, order = cont_scores.topk(K, dim=1)  # (n, K) best continuations
        cont_beams, cont_toks = beams.gather(1, order), toks.gather(1, order)
        done = finished.close(t, alive.tolist(), at_limit, cont_scores, cont_beams, cont_toks, hyps)
        keep = (~torch.tensor(done, device=src.device)).nonzero().squeeze(1)
        if len(keep) == 0:
            break
        rows = (keep[:, None] * K + cont_beams[keep]).view(-1)  # (n'*K,) rows to continue from
        step.advance(rows, cont_toks[keep].view(-1), sources_kept=len(keep) == n)
        alive, scores = alive[keep], cont_scores[keep]
    return finished.best()
