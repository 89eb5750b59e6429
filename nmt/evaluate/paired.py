"""Paired comparison of two systems' translations of one test set: corpus sacreBLEU and chrF of
both, a paired bootstrap p-value, and a percentile interval of the difference.

- Paired bootstrap resampling (Koehn 2004, "Statistical Significance Tests for Machine
  Translation Evaluation", EMNLP): draw `resamples` test sets of the same size with replacement,
  the SAME sentence indices for both systems, and score both on each. The p-value is two-sided
  for "the challenger differs from the champion": twice the smaller share of resamples on either
  side of zero, with the +1 correction that keeps a finite resampling from claiming p = 0,
  capped at 1: p = min(1, 2 (min(#{d <= 0}, #{d >= 0}) + 1) / (n + 1)). Koehn's one-sided rule
  ("better in 95% of the resamples") is one tail of it. Identical systems get p = 1.
- The 95% interval of the difference (challenger - champion) is the percentile interval
  (Efron and Tibshirani 1993, ch. 13) of the same resampled differences; p < 0.05 roughly when
  the interval excludes 0.
- Holm's step-down correction of several sets' p-values (Holm 1979, "A Simple Sequentially
  Rejective Multiple Test Procedure", Scandinavian Journal of Statistics 6(2): 65-70): `holm`.

Fast: sacreBLEU's per-sentence sufficient statistics are extracted once per system (BLEU: lengths
and n-gram match/total counts; chrF: character and word n-gram counts); a resample is a vector of
how often each sentence was drawn, so all resamples' corpus statistics are one matrix product
(counts x statistics, exact in float64 for integer counts below 2**53), and sacreBLEU's own
`_compute_score_from_stats` turns each row into a score. No string is re-scored per resample.
The resampled indices are the ones sacreBLEU's `paired-bs` draws for the same seed
(`numpy.random.default_rng(seed).choice(n, (resamples, n))`), drawn in chunks to bound memory.

Why not `sacrebleu.significance.PairedTest`: it takes its seed only from the SACREBLEU_SEED
environment variable, does not expose its resamples (the interval must come from the same ones),
gathers a resamples x sentences x statistics array (about 1.6 GB for chrF on 17,000 lines), and its
p-value counts strict exceedances of the centred |difference|, so identical systems get the
smallest p it can give, 1 / (n + 1).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

DEFAULT_RESAMPLES = 1000  # as sacreBLEU's paired-bs and Koehn 2004
DEFAULT_SEED = 12345  # sacreBLEU's default SACREBLEU_SEED
CHUNK = 100  # resamples drawn at once: CHUNK x sentences counts in memory


@dataclass(frozen=True)
class Comparison:
    """One metric on one test set, champion against challenger."""

    metric: str  # "sacrebleu" or "chrf": the key the evaluate metrics files use
    champion: float  # the champion's corpus score on the whole set, 0-100
    challenger: float  # the challenger's corpus score on the whole set, 0-100
    difference: float  # challenger - champion on the whole set: the point estimate
    low: float  # 2.5th percentile of the resampled differences (95% percentile interval)
    high: float  # 97.5th percentile of the resampled differences
    p_value: float  # two-sided paired bootstrap p-value for "the two systems differ" (Koehn 2004)
    signature: str  # sacreBLEU's signature of the metric, with the resamples (bs) and the seed


@dataclass(frozen=True)
class PairedResult:
    """sacreBLEU and chrF of one test set, both systems, on the same resamples."""

    sentences: int  # lines of the test set
    resamples: int  # bootstrap resamples drawn
    seed: int  # seed of numpy's default_rng that drew the resampled indices
    bleu: Comparison  # sacreBLEU (13a tokenizer, exp smoothing: scoring.py's settings)
    chrf: Comparison  # chrF (sacreBLEU's defaults: character 6-grams, beta 2)


def sentence_statistics(metric: Any, hypotheses: Sequence[str]) -> np.ndarray:
    """sacreBLEU's per-sentence sufficient statistics of `hypotheses` against the references the
    metric was built with (`BLEU(references=...)`): one int64 row per sentence."""
    return np.asarray(metric._extract_corpus_statistics(list(hypotheses), None), dtype=np.int64)


def resampled_sums(stats: Sequence[np.ndarray], resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                   chunk: int = CHUNK) -> list[np.ndarray]:
    """Corpus statistics of every bootstrap resample, for each array of `stats` (all with one row
    per sentence, the same sentences): a (resamples x columns) float64 array each, holding the
    integer sums. All arrays share the same resamples: the pairing of Koehn 2004."""
    sentences = {len(s) for s in stats}
    if len(sentences) != 1 or 0 in sentences:
        raise ValueError(f"statistics of {sorted(sentences)} sentences: need one non-zero count")
    if resamples < 1 or chunk < 1:
        raise ValueError(f"resamples {resamples} and chunk {chunk} must be at least 1")
    n = sentences.pop()
    widths = [s.shape[1] for s in stats]
    stacked = np.hstack(stats).astype(np.float64)
    rng = np.random.default_rng(seed)
    out = np.empty((resamples, stacked.shape[1]), dtype=np.float64)
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        idx = rng.choice(n, size=(rows, n), replace=True)  # sacreBLEU's draw, continued chunk by chunk
        flat = (idx + np.arange(rows)[:, None] * n).ravel()
        counts = np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)
        out[start:start + rows] = counts @ stacked
    return np.split(out, np.cumsum(widths)[:-1], axis=1)


def scores_from_sums(metric: Any, sums: np.ndarray) -> np.ndarray:
    """The metric's corpus score (0-100) of each row of summed statistics, by sacreBLEU itself."""
    return np.array([metric._compute_score_from_stats(row).score for row in sums], dtype=np.float64)


def two_sided_p(differences: np.ndarray) -> float:
    """Two-sided paired bootstrap p-value of resampled differences: twice the smaller tail
    (ties at zero count in both), +1 corrected, capped at 1 (Koehn 2004's test, both directions)."""
    n = len(differences)
    if n == 0:
        raise ValueError("no resampled differences")
    tail = min(int(np.sum(differences <= 0)), int(np.sum(differences >= 0)))
    return min(1.0, 2.0 * (tail + 1) / (n + 1))


def percentile_interval(differences: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile bootstrap interval (Efron and Tibshirani 1993): the (1-level)/2 and
    (1+level)/2 quantiles of the resampled differences (numpy's linear interpolation)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level {level} must be between 0 and 1")
    low, high = np.percentile(differences, [50.0 * (1.0 - level), 50.0 * (1.0 + level)])
    return float(low), float(high)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979), in the input's order: sorted ascending,
    the i-th smallest (0-based) becomes max over j <= i of min(1, (m - j) p_(j)). A hypothesis is
    rejected at family-wise error rate alpha when its adjusted p-value is below alpha."""
    m = len(p_values)
    for p in p_values:
        if not 0.0 <= p <= 1.0:  # NaN included
            raise ValueError(f"p-value {p} is not in [0, 1]")
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def _signature(metric: Any, resamples: int, seed: int) -> str:
    signature = metric.get_signature()
    signature.update("bs", resamples)
    signature.update("seed", str(seed))
    return str(signature)


def _compare(name: str, metric: Any, champion: np.ndarray, challenger: np.ndarray, sums_champion: np.ndarray,
             sums_challenger: np.ndarray, resamples: int, seed: int) -> Comparison:
    full_champion = float(metric._compute_score_from_stats(champion.sum(axis=0)).score)
    full_challenger = float(metric._compute_score_from_stats(challenger.sum(axis=0)).score)
    differences = scores_from_sums(metric, sums_challenger) - scores_from_sums(metric, sums_champion)
    low, high = percentile_interval(differences)
    return Comparison(name, full_champion, full_challenger, full_challenger - full_champion, low, high,
                      two_sided_p(differences), _signature(metric, resamples, seed))


def paired_bootstrap(references: Sequence[str], champion: Sequence[str], challenger: Sequence[str],
                     resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> PairedResult:
    """Corpus sacreBLEU and chrF of both systems on one test set (detokenized, cased strings, one
    reference each) and, on the same `resamples` paired bootstrap resamples drawn with `seed`,
    each metric's two-sided p-value and 95% percentile interval of challenger - champion."""
    from sacrebleu.metrics import BLEU, CHRF

    if not (len(references) == len(champion) == len(challenger)):
        raise ValueError(f"{len(references)} references, {len(champion)} champion and {len(challenger)} "
                         "challenger hypotheses: must be equal")
    if not references:
        raise ValueError("an empty test set")
    refs = [list(references)]
    bleu, chrf = BLEU(references=refs), CHRF(references=refs)
    stats = [sentence_statistics(bleu, champion), sentence_statistics(bleu, challenger),
             sentence_statistics(chrf, champion), sentence_statistics(chrf, challenger)]
    sums = resampled_sums(stats, resamples, seed)
    result = PairedResult(
        len(references), resamples, seed,
        _compare("sacrebleu", bleu, stats[0], stats[1], sums[0], sums[1], resamples, seed),
        _compare("chrf", chrf, stats[2], stats[3], sums[2], sums[3], resamples, seed))
    log.debug("paired bootstrap on %d sentences: BLEU %+.2f [%.2f, %.2f] p %.4f", result.sentences,
              result.bleu.difference, result.bleu.low, result.bleu.high, result.bleu.p_value)
    return result
