"""Token-budget batches: budget kept, every pair once, reproducible, shuffled per epoch."""

from __future__ import annotations

import random

import pytest

from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID
from nmt.train.batching import collate, make_batches, shard


def pairs(n: int = 500, seed: int = 0):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s, t = rng.randint(1, 30), rng.randint(1, 30)
        out.append(([rng.randint(4, 50) for _ in range(s)] + [EOS_ID],
                    [BOS_ID] + [rng.randint(4, 50) for _ in range(t)] + [EOS_ID]))
    return out


def test_budget_and_coverage() -> None:
    data = pairs()
    batches = make_batches(data, max_tokens=200, seed=1, epoch=0)
    assert sorted(i for b in batches for i in b) == list(range(len(data)))
    for b in batches:
        longest = max(max(len(data[i][0]), len(data[i][1])) for i in b)
        assert longest * len(b) <= 200 or len(b) == 1


def test_reproducible_per_seed_and_epoch() -> None:
    data = pairs()
    assert make_batches(data, 200, seed=1, epoch=3) == make_batches(data, 200, seed=1, epoch=3)
    assert make_batches(data, 200, seed=1, epoch=3) != make_batches(data, 200, seed=1, epoch=4)
    assert make_batches(data, 200, seed=1, epoch=3) != make_batches(data, 200, seed=2, epoch=3)


def test_length_bucketing_keeps_padding_low() -> None:
    data = pairs(2000)
    batches = [collate(data, b) for b in make_batches(data, 600, seed=0, epoch=0)]
    waste = 1 - sum(b.real_tokens for b in batches) / sum(b.padded_tokens for b in batches)
    shuffled = list(range(len(data)))
    random.Random(0).shuffle(shuffled)
    naive = [collate(data, shuffled[i:i + 20]) for i in range(0, len(data), 20)]
    naive_waste = 1 - sum(b.real_tokens for b in naive) / sum(b.padded_tokens for b in naive)
    assert waste < naive_waste / 2


def test_collate_shifts_target() -> None:
    data = [([7, 8, EOS_ID], [BOS_ID, 9, EOS_ID]), ([7, EOS_ID], [BOS_ID, 9, 10, 11, EOS_ID])]
    b = collate(data, [0, 1])
    assert b.src.tolist() == [[7, 8, EOS_ID], [7, EOS_ID, PAD_ID]]
    assert b.tgt_in.tolist() == [[BOS_ID, 9, EOS_ID, PAD_ID], [BOS_ID, 9, 10, 11]]
    assert b.tgt_out.tolist() == [[9, EOS_ID, PAD_ID, PAD_ID], [9, 10, 11, EOS_ID]]
    assert b.n_tgt_tokens == 6


@pytest.mark.parametrize("world", [1, 2, 3, 4])
def test_shards_are_disjoint_equal_sized_and_cover_the_epoch(world: int) -> None:
    """Every rank gets as many batches, no batch twice, and together all of them but the
    remainder of len(batches) / world (here 73 batches: 1 or 0 dropped)."""
    batches = make_batches(pairs(), 200, seed=0, epoch=0)
    shards = [shard(batches, rank, world) for rank in range(world)]
    usable = len(batches) - len(batches) % world
    assert all(len(s) == usable // world for s in shards)
    taken = [tuple(b) for s in shards for b in s]
    assert len(set(taken)) == len(taken) == usable  # disjoint
    assert set(taken) <= {tuple(b) for b in batches}  # so they cover all but the remainder


def test_padding_waste_counts_pad_positions() -> None:
    from nmt.train.batching import padding_waste

    data = [([1, 2, 3], [4, 5]), ([1], [4, 5, 6, 7])]
    # padded: 2 rows x (3 + 4) = 14 positions, real: 3 + 2 + 1 + 4 = 10
    assert padding_waste(data, [[0, 1]]) == pytest.approx(1 - 10 / 14)
    assert padding_waste(data, [[0], [1]]) == 0.0
