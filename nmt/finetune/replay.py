"""Replay (Chu et al. 2017, "mixed fine-tuning"): each epoch of a fine-tune trains on the new corpus
plus a fresh sample of the parent's own training pairs, `replay` of the epoch's pairs, against
forgetting what the parent could do.

The sample is drawn from (seed, epoch) alone, so an interrupted run rebuilds the epoch it was in
exactly. The epoch's pairs are held in memory (the new corpus is small; the parent's stays mapped
and only the sampled pairs are copied).
"""

from __future__ import annotations

import itertools

import numpy as np

from nmt.train.pairs import PairArrays


def replay_count(new: int, share: float) -> int:
    """Parent pairs to add to `new` pairs so that they are `share` of the whole: new * share / (1 - share)."""
    return 0 if share <= 0 else round(new * share / (1.0 - share))


def epoch_mix(new: PairArrays, parent: PairArrays | None, share: float, seed: int, epoch: int) -> PairArrays:
    """The new pairs, then `replay_count` pairs of `parent` sampled without replacement (all of them if
    it holds fewer) for `epoch`: one array of pairs, the new ones first, in their order."""
    want = replay_count(len(new), share) if parent is not None else 0
    if want == 0:
        return new
    assert parent is not None
    rng = np.random.default_rng([seed, epoch, 0x5EED])
    picked = np.sort(rng.choice(len(parent), size=min(want, len(parent)), replace=False))
    return concat([new, parent.select(picked)])


def concat(parts: list[PairArrays]) -> PairArrays:
    """The pairs of `parts`, one after another, as one in-memory `PairArrays`."""
    sides = []
    for side in (0, 1):
        rows = [p[i][side] for p in parts for i in range(len(p))]
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        ids = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=int(lengths.sum()))
        sides += [ids, np.concatenate([[0], np.cumsum(lengths)])]
    return PairArrays(sides[0], sides[1], sides[2], sides[3])
