"""Greedy and beam search, written once for every backend (numpy, torch-free).

Vaswani et al. 2017, section 6.1: beam search with beam size 4 and length penalty alpha;
the output may be `max_extra` symbols longer than the source (paper: input length + 50),
capped by the model's positions. Beam search ranks finished hypotheses by
log-probability / lp(Y) with the GNMT length penalty lp(Y) = ((5 + |Y|) / 6) ** alpha
(`nmt.decode.hypotheses`). The defaults of `beam_search` are the paper's (beam 4, alpha 0.6);
text is translated with the tuned `nmt.config.evaluate.Decoding()`, which the training code
(that imports this module) does not read.

A `Backend` runs the model: the torch model (`nmt.decode.backend.TorchBackend`) or the
exported ONNX graphs (`nmt.runtime.session.OnnxModel`). It encodes a batch once, then each
`step` feeds the newest token of every row and returns the 2K best next tokens per row
(K: rows per sentence, 1 for greedy), after continuing each row from the earlier row that
`rows` names. Sentences that are done leave the batch (`keep`), so they stop costing
compute. Everything the search decides is here, so both backends decide it the same way.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from nmt.decode.hypotheses import Finished, Hypothesis
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID

Array = np.ndarray


class Backend(Protocol):
    max_len: int  # positions the model covers

    def encode(self, src: Array) -> None:
        """Encode a (B, S) int64 source batch (right-padded with <pad>); the batch's sentences are live."""

    def step(self, tokens: Array, rows: Array) -> tuple[Array, Array]:
        """tokens (b, K) int64: newest token per row of the b live sentences; rows (b, K) int64: the
        earlier row (sentence-major index into the previous step's rows) each row continues.
        Returns float32 log-probs and int64 ids of the 2K best next tokens per row, (b, K, 2K), best first."""

    def keep(self, sentences: Array) -> None:
        """Only the live sentences at these indices (in order) go on; called before the next step."""


def _limits(backend: Backend, src: Array, max_extra: int) -> Array:
    return np.minimum((src != PAD_ID).sum(axis=1) + max_extra, backend.max_len - 1)  # (B,)


def _best(x: Array, k: int) -> tuple[Array, Array]:
    """Values and positions of the k largest entries per row, best first; ties: lower position first."""
    order = np.argsort(-x, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(x, order, axis=1), order


def greedy(backend: Backend, src: Array, max_extra: int = 50) -> list[list[int]]:
    """Greedy decoding of a (B, S) int64 source batch -> B id lists (no <s> / </s>)."""
    return [hyp.ids for hyp in greedy_scored(backend, src, max_extra)]


def greedy_scored(backend: Backend, src: Array, max_extra: int = 50) -> list[Hypothesis]:
    """Greedy decoding of a (B, S) int64 source batch -> B hypotheses with their log-probabilities."""
    B = src.shape[0]
    limit = _limits(backend, src, max_extra)
    backend.encode(src)
    alive = np.arange(B)  # original sentence of each live row
    tokens, rows = np.full((B, 1), BOS_ID, dtype=np.int64), np.arange(B, dtype=np.int64)[:, None]
    out: list[list[int]] = [[] for _ in range(B)]
    logprob, steps = np.zeros(B, dtype=np.float64), np.zeros(B, dtype=np.int64)
    for t in range(int(limit.max())):
        logp, ids = backend.step(tokens, rows)
        nxt = ids[:, 0, 0]  # (b,)
        logprob[alive] += logp[:, 0, 0]
        steps[alive] += 1
        for sent, tok in zip(alive.tolist(), nxt.tolist()):
            if tok != EOS_ID:
                out[sent].append(tok)
        go_on = np.flatnonzero((nxt != EOS_ID) & (t + 1 < limit[alive]))
        if len(go_on) == 0:
            break
        if len(go_on) < len(alive):
            backend.keep(go_on)
        alive, tokens, rows = alive[go_on], nxt[go_on, None], go_on[:, None]
    return [Hypothesis(ids, float(lp), int(n)) for ids, lp, n in zip(out, logprob, steps)]


def beam_search(backend: Backend, src: Array, beam_size: int = 4, alpha: float = 0.6,
                max_extra: int = 50) -> list[list[int]]:
    """Beam search of a (B, S) int64 source batch -> the best id list per sentence."""
    return _beam(backend, src, beam_size, alpha, max_extra).best()


def beam_search_n(backend: Backend, src: Array, n: int, beam_size: int = 4, alpha: float = 0.6,
                  max_extra: int = 50) -> list[list[Hypothesis]]:
    """Beam search of a (B, S) int64 source batch -> up to `n` (<= beam_size) hypotheses per
    sentence, best first: the n-best list of the same search (its first is `beam_search`'s), each
    with the model's log-probability of it."""
    if not 1 <= n <= beam_size:
        raise ValueError(f"n-best of {n} from a beam of {beam_size}: expected 1 <= n <= beam size")
    return _beam(backend, src, beam_size, alpha, max_extra).nbest(n)


def _beam(backend: Backend, src: Array, beam_size: int, alpha: float, max_extra: int) -> Finished:
    B, K = src.shape[0], beam_size
    limit = _limits(backend, src, max_extra)
    backend.encode(src)
    alive = np.arange(B)  # live sentences
    tokens = np.full((B, K), BOS_ID, dtype=np.int64)
    rows = np.arange(B * K, dtype=np.int64).reshape(B, K)  # sentence-major, K beams each
    prefix = np.zeros((B, K, 0), dtype=np.int64)  # each beam's tokens so far
    scores = np.full((B, K), -np.inf, dtype=np.float32)
    scores[:, 0] = 0.0  # all beams start as the same empty hypothesis: keep one
    finished = Finished(B, K, alpha)
    for t in range(int(limit.max())):
        n = len(alive)
        logp, ids = backend.step(tokens, rows)  # (n, K, 2K)
        cand = (scores[:, :, None] + logp).reshape(n, K * 2 * K)
        top_scores, pos = _best(cand, 2 * K)  # the sentence's 2K best: at most K of them end in </s>
        beams, toks = pos // (2 * K), np.take_along_axis(ids.reshape(n, K * 2 * K), pos, axis=1)
        at_limit = (t + 1 >= limit[alive]).tolist()
        is_eos = toks == EOS_ID
        finished.add_ended(t, alive.tolist(), top_scores, beams, is_eos, prefix)
        cont_scores, order = _best(np.where(is_eos, np.float32(-np.inf), top_scores), K)  # best continuations
        cont_beams, cont_toks = np.take_along_axis(beams, order, 1), np.take_along_axis(toks, order, 1)
        done = finished.close(t, alive.tolist(), at_limit, cont_scores, cont_beams, cont_toks, prefix)
        go_on = np.flatnonzero(~np.array(done))
        if len(go_on) == 0:
            break
        if len(go_on) < n:
            backend.keep(go_on)
        beams_kept = cont_beams[go_on]  # (n', K) beam each continuation extends
        rows = go_on[:, None] * K + beams_kept
        prefix = np.concatenate([np.take_along_axis(prefix[go_on], beams_kept[:, :, None], axis=1),
                                 cont_toks[go_on, :, None]], axis=2)
        alive, scores, tokens = alive[go_on], cont_scores[go_on], cont_toks[go_on].astype(np.int64)
    return finished
