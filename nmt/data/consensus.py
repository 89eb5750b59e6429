"""Choosing targets among several systems' translations of one line: a cheap MBR by chrF.

Minimum-Bayes-risk selection with the other outputs as pseudo-references: an output's consensus
score is its mean sentence chrF (sacreBLEU's defaults: character 6-grams, whitespace dropped,
beta 2, effective-order averaging) against each of the other outputs. The output most similar to
the others is the one the systems agree on; an output that wanders off (a hallucination, a
refusal, the wrong language, an untranslated copy) scores low against all of them.

chrF is computed here rather than by `sacrebleu.CHRF.sentence_score`, with the same figures
(tested): a line's outputs are counted once, in numpy, and every pair's matches at once, where 13
outputs would cost 156 calls that each re-count both texts in Python (minutes for the WMT23 files
instead of seconds).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from nmt import ranking

CHAR_ORDER = 6  # sacreBLEU's chrF defaults
BETA = 2.0
_MULT = np.uint64(0x9E3779B97F4A7C15)  # odd: n-grams of code points hashed to 64 bits, polynomially


def _ngram_hashes(text: str, order: int) -> list[np.ndarray]:
    """Per order 1..`order`, the 64-bit hashes of `text`'s character n-grams, whitespace removed
    (as sacreBLEU's chrF counts them). Distinct n-grams of one line collide with a chance of about
    one in 2^64 / (their number)^2: never, for lines of this size."""
    codes = np.frombuffer("".join(text.split()).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    out, h = [], codes
    with np.errstate(over="ignore"):  # the products wrap mod 2^64 on purpose
        for n in range(1, order + 1):
            if n > 1:
                h = h[:-1] * _MULT + codes[n - 1:]
            out.append(h)
    return out


def pairwise_chrf(texts: Sequence[str], order: int = CHAR_ORDER, beta: float = BETA) -> np.ndarray:
    """(m, m) sentence chrF of text i as the hypothesis against text j as the reference
    (= sacrebleu's `CHRF().sentence_score(texts[i], [texts[j]])`): the n-gram counts of all texts
    in one (text, n-gram) matrix, the matches of every pair and order at once (the clipped counts,
    min(c_i, c_j), are symmetric); precision and recall averaged over the orders both sides have,
    then F-beta."""
    m = len(texts)
    hashes = [h for text in texts for h in _ngram_hashes(text, order)]  # text-major, then order
    sizes = np.array([len(h) for h in hashes], dtype=np.int64)
    if sizes.sum() == 0:
        return np.zeros((m, m))
    key = np.concatenate(hashes)
    owner_of = np.repeat(np.repeat(np.arange(m), order), sizes)
    order_of = np.repeat(np.tile(np.arange(order), m), sizes)
    # one column per (order, n-gram): the order in the key's top bits would collide less, but a
    # 64-bit hash already makes a collision a one in 2^40 event for a line of 10^4 n-grams
    _, first, inverse = np.unique(key ^ (order_of.astype(np.uint64) * _MULT), return_index=True, return_inverse=True)
    width = len(first)
    counts = np.bincount(owner_of * width + inverse, minlength=m * width).reshape(m, width)
    onehot = np.zeros((width, order))
    onehot[np.arange(width), order_of[first]] = 1.0
    totals = counts @ onehot  # (m, order)
    matches = (np.minimum(counts[:, None, :], counts[None, :, :]).reshape(m * m, width) @ onehot).reshape(m, m, order)
    both = (totals[:, None, :] > 0) & (totals[None, :, :] > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(both, matches / totals[:, None, :], 0.0).sum(-1)
        rec = np.where(both, matches / totals[None, :, :], 0.0).sum(-1)
        effective = both.sum(-1)
        prec, rec = prec / effective, rec / effective
        factor = beta ** 2
        score = 100 * (1 + factor) * prec * rec / (factor * prec + rec)
    return np.where((effective > 0) & (prec + rec > 0), score, 0.0)


def chrf(hypothesis: str, reference: str) -> float:
    """Sentence chrF of `hypothesis` against one `reference` (= sacrebleu's CHRF().sentence_score)."""
    return float(pairwise_chrf([hypothesis, reference])[0, 1])


def consensus_scores(outputs: Sequence[str]) -> list[float]:
    """Each output's mean chrF (as the hypothesis) against every other output (0.0 for a single one).
    Each row is summed exactly (`math.fsum`), so identical outputs score exactly the same whatever
    their places (a plain sum adds the same numbers in another order and can differ in the last bit)."""
    if len(outputs) < 2:
        return [0.0] * len(outputs)
    scores = pairwise_chrf(outputs)
    np.fill_diagonal(scores, 0.0)
    return [math.fsum(row) / (len(outputs) - 1) for row in scores.tolist()]


def choose(outputs: Sequence[str], select: str, top_k: int = 1) -> list[int]:
    """The indices of the outputs kept for one line, in file order: every one (`all`), the one with
    the highest consensus score (`consensus`; the first on a tie: nmt/ranking.py), or the `top_k` highest (`top_k`).
    Identical outputs count as separate votes (several systems agreeing is the signal)."""
    if select == "all" or len(outputs) <= 1:
        return list(range(len(outputs)))
    k = 1 if select == "consensus" else top_k
    if select not in ("consensus", "top_k"):
        raise ValueError(f"unknown select {select!r}")
    scores = consensus_scores(outputs)
    best = ranking.ranked(range(len(outputs)), scores.__getitem__)[:k]
    return sorted(best)
