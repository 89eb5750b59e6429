"""Greedy and beam search in numpy over the exported graphs (no torch).

The same algorithms as `nmt.decode.search`, step for step, so that ONNX Runtime and torch give
identical outputs: the encoder runs once per batch, each step feeds only the newest token
and the self-attention cache, rows that are done leave the batch, the output may be
`max_extra` symbols longer than the source (capped by the model's positions), and beam
search ranks finished hypotheses by log-probability / ((5 + |Y|) / 6) ** alpha.

`Graphs` is anything with `encode(src) -> (cross_k, cross_v)` and
`step(tokens, src_mask, self_k, self_v, cross_k, cross_v) -> (logits, self_k, self_v)`,
e.g. `nmt.runtime.session.OnnxModel`. The finished-hypothesis rules are shared with torch
(`nmt.decode.hypotheses`).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from nmt.decode.hypotheses import Finished
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID

Array = np.ndarray


class Graphs(Protocol):
    max_len: int  # positions the model covers

    def encode(self, src: Array) -> tuple[Array, Array]: ...

    def step(self, tokens: Array, src_mask: Array, self_k: Array, self_v: Array, cross_k: Array,
             cross_v: Array) -> tuple[Array, Array, Array]: ...


class _Stepper:
    """Next-token logits for the rows still decoding; mirrors `nmt.decode.search._Stepper`."""

    def __init__(self, graphs: Graphs, src: Array, rows: Array) -> None:
        self.graphs = graphs
        cross_k, cross_v = graphs.encode(src)
        self.mask = (src != PAD_ID)[rows]
        self.cross_k, self.cross_v = cross_k.take(rows, axis=1), cross_v.take(rows, axis=1)
        L, n, H, _, dh = self.cross_k.shape
        self.self_k = self.self_v = np.zeros((L, n, H, 0, dh), dtype=self.cross_k.dtype)
        self.prefix = np.full((len(rows), 1), BOS_ID, dtype=np.int64)

    def logits(self) -> Array:
        logits, self.self_k, self.self_v = self.graphs.step(
            np.ascontiguousarray(self.prefix[:, -1:]), self.mask, self.self_k, self.self_v, self.cross_k, self.cross_v)
        return logits

    def advance(self, index: Array | None, tokens: Array, sources_kept: bool = False) -> None:
        """Keep rows `index` (None: all) and append one token per kept row."""
        if index is None:
            self.prefix = np.concatenate([self.prefix, tokens[:, None]], axis=1)
            return
        self.prefix = np.concatenate([self.prefix[index], tokens[:, None]], axis=1)
        self.self_k, self.self_v = self.self_k.take(index, axis=1), self.self_v.take(index, axis=1)
        if not sources_kept:
            self.mask = self.mask[index]
            self.cross_k, self.cross_v = self.cross_k.take(index, axis=1), self.cross_v.take(index, axis=1)


def _limits(graphs: Graphs, src: Array, max_extra: int) -> Array:
    return np.minimum((src != PAD_ID).sum(axis=1) + max_extra, graphs.max_len - 1)


def greedy(graphs: Graphs, src: Array, max_extra: int = 50) -> list[list[int]]:
    """Greedy decoding of a (B, S) int64 source batch -> B id lists (no <s> / </s>)."""
    B = src.shape[0]
    limit = _limits(graphs, src, max_extra)
    alive = np.arange(B)
    step = _Stepper(graphs, src, alive)
    out: list[list[int]] = [[] for _ in range(B)]
    for t in range(int(limit.max())):
        nxt = step.logits().argmax(axis=-1).astype(np.int64)
        for row, tok in zip(alive.tolist(), nxt.tolist()):
            if tok != EOS_ID:
                out[row].append(tok)
        keep = (nxt != EOS_ID) & (t + 1 < limit[alive])
        if not keep.any():
            break
        if keep.all():
            step.advance(None, nxt)
            continue
        idx = np.flatnonzero(keep)
        alive = alive[idx]
        step.advance(idx, nxt[idx])
    return out


def log_softmax(x: Array) -> Array:
    x = x.astype(np.float32, copy=False)
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _topk(x: Array, k: int) -> tuple[Array, Array]:
    """Values and indices of the k largest entries per row, largest first."""
    idx = np.argpartition(-x, k - 1, axis=1)[:, :k] if k < x.shape[1] else np.tile(np.arange(x.shape[1]), (len(x), 1))
    vals = np.take_along_axis(x, idx, axis=1)
    order = np.argsort(-vals, axis=1, kind="stable")
    return np.take_along_axis(vals, order, axis=1), np.take_along_axis(idx, order, axis=1)


def beam_search(graphs: Graphs, src: Array, beam_size: int = 4, alpha: float = 0.6,
                max_extra: int = 50) -> list[list[int]]:
    """Beam search of a (B, S) int64 source batch -> the best id list per sentence."""
    B, K = src.shape[0], beam_size
    limit = _limits(graphs, src, max_extra)
    alive = np.arange(B)
    step = _Stepper(graphs, src, np.repeat(alive, K))  # rows: sentence-major, K beams each
    scores = np.full((B, K), -np.inf, dtype=np.float32)
    scores[:, 0] = 0.0  # all beams start as the same empty hypothesis: keep one
    finished = Finished(B, K, alpha)
    for t in range(int(limit.max())):
        n = len(alive)
        logp = log_softmax(step.logits())  # (n*K, V)
        V = logp.shape[-1]
        cand = (scores[:, :, None] + logp.reshape(n, K, V)).reshape(n, K * V)
        top_scores, top_ids = _topk(cand, 2 * K)  # at most K of them end in </s>
        beams, toks = top_ids // V, top_ids % V
        hyps = step.prefix[:, 1:].reshape(n, K, -1)
        at_limit = (t + 1 >= limit[alive]).tolist()
        is_eos = toks == EOS_ID
        finished.add_ended(t, alive.tolist(), top_scores, beams, is_eos, hyps)
        cont = np.where(is_eos, np.float32(-np.inf), top_scores)
        cont_scores, order = _topk(cont, K)  # best continuations
        cont_beams, cont_toks = np.take_along_axis(beams, order, 1), np.take_along_axis(toks, order, 1)
        done = finished.close(t, alive.tolist(), at_limit, cont_scores, cont_beams, cont_toks, hyps)
        keep = np.flatnonzero(~np.array(done))
        if len(keep) == 0:
            break
        rows = (keep[:, None] * K + cont_beams[keep]).reshape(-1)
        step.advance(rows, cont_toks[keep].reshape(-1).astype(np.int64), sources_kept=len(keep) == n)
        alive, scores = alive[keep], cont_scores[keep]
    return finished.best()
