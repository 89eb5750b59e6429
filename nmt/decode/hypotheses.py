"""The finished hypotheses of a beam search batch, for torch and numpy alike (torch-free).

Beam search (Vaswani et al. 2017, 6.1) ranks finished hypotheses by log-probability / lp(Y)
with the GNMT length penalty lp(Y) = ((5 + |Y|) / 6) ** alpha. `Finished` keeps them per
sentence: candidates that end in </s> among a row's K best, and, when a sentence reaches
its length limit, its live hypotheses as they stand. A sentence is done once it holds K.
The arrays it reads (scores, beam and token ids, prefixes) may be torch tensors or numpy
arrays: it only indexes them, so the one search (`nmt.decode.search`) keeps these rules exactly
whichever backend (torch or ONNX Runtime) it drives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from nmt import ranking

Rows = Any  # a (n, K...) torch tensor or numpy array, indexed [i, k]


class Hypothesis(NamedTuple):
    """One output of a search and the model's own log-probability of it."""

    ids: list[int]  # output ids (no <s> / </s>)
    logprob: float  # sum of the tokens' log-probabilities, </s> included when the hypothesis ended in one
    steps: int  # tokens that sum covers: len(ids) + 1 when it ended in </s>, len(ids) when cut at the limit

    @property
    def confidence(self) -> float:
        """exp(logprob / steps): the geometric mean of the probabilities the model gave the tokens it
        chose, 0-1 (NaN when the search kept no scores)."""
        return math.exp(self.logprob / self.steps) if self.steps else math.nan


def length_penalty(length: int, alpha: float) -> float:
    """GNMT: ((5 + |Y|) / 6) ** alpha."""
    return ((5.0 + length) / 6.0) ** alpha


class Finished:
    """Finished (score, ids) per sentence of a batch of `batch` sentences with `beam_size` beams."""

    def __init__(self, batch: int, beam_size: int, alpha: float) -> None:
        self.k, self.alpha = beam_size, alpha
        self.hyps: list[list[tuple[float, Hypothesis]]] = [[] for _ in range(batch)]  # (ranking score, hypothesis)

    def add_ended(self, step: int, alive: Sequence[int], scores: Rows, beams: Rows, is_eos: Rows, prefix: Rows) -> None:
        """Candidates ending in </s> at `step`, counted only among each row's K best.

        `scores`, `beams`, `is_eos`: (n, 2K) best candidates of the live sentences `alive`;
        `prefix`: (n, K, step) their beams' tokens so far."""
        penalty = length_penalty(step + 1, self.alpha)
        for i, sent in enumerate(alive):
            for rank in range(self.k):
                if is_eos[i, rank]:
                    logprob = float(scores[i, rank])
                    self.hyps[sent].append((logprob / penalty, Hypothesis(prefix[i, beams[i, rank]].tolist(), logprob,
                                                                          step + 1)))

    def close(self, step: int, alive: Sequence[int], at_limit: Sequence[bool], scores: Rows, beams: Rows,
              tokens: Rows, prefix: Rows) -> list[bool]:
        """Sentences out of length keep their live hypotheses (the (n, K) continuations);
        return, per live sentence, whether it is done."""
        penalty = length_penalty(step + 1, self.alpha)
        done = []
        for i, sent in enumerate(alive):
            if at_limit[i]:
                for k in range(self.k):
                    if scores[i, k] > -math.inf:
                        ids = prefix[i, beams[i, k]].tolist() + [int(tokens[i, k])]
                        logprob = float(scores[i, k])
                        self.hyps[sent].append((logprob / penalty, Hypothesis(ids, logprob, step + 1)))
            done.append(bool(at_limit[i]) or len(self.hyps[sent]) >= self.k)
        return done

    def best(self) -> list[list[int]]:
        """The highest-scoring hypothesis of each sentence ([] if none finished)."""
        return [ranking.best(h, lambda x: x[0])[1].ids if h else [] for h in self.hyps]  # a tie: finished first

    def nbest(self, n: int) -> list[list[Hypothesis]]:
        """Up to `n` hypotheses of each sentence, best first (equal scores: the one finished
        first, as `best` picks it), duplicates left out: the n-best list, with their log-probabilities."""
        out = []
        for h in self.hyps:
            ranked: list[Hypothesis] = []
            for _, hyp in ranking.ranked(h, lambda x: x[0]):
                if len(ranked) == n:
                    break
                if all(hyp.ids != r.ids for r in ranked):
                    ranked.append(hyp)
            out.append(ranked)
        return out

    def ranked(self, n: int) -> list[list[list[int]]]:
        """`nbest`'s id lists."""
        return [[hyp.ids for hyp in hyps] for hyps in self.nbest(n)]
