"""Batching on the lengths arrays: the same batches as the list-based batching it replaced, for
every seed, epoch and budget, through the max_len filter too; `PairArrays` views, slices and collate."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from nmt.text.vocab import BOS_ID, EOS_ID
from nmt.train.batching import collate, length_batches, lengths, make_batches, padding_waste
from nmt.train.pairs import PairArrays


def reference_make_batches(pairs, max_tokens: int, seed: int, epoch: int) -> list[list[int]]:
    """nmt.train.batching.make_batches as it was before the binarized set (the 41.44 BLEU model's batches),
    verbatim: the oracle the array version must reproduce exactly."""
    rng = random.Random(f"{seed}/{epoch}")
    noise = [rng.random() for _ in pairs]
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][0]), len(pairs[i][1]), noise[i]))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        size = max(len(pairs[i][0]), len(pairs[i][1]))
        if current and max(longest, size) * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, size)
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def reference_padding_waste(pairs, batches) -> float:
    real = padded = 0
    for idx in batches:
        src, tgt = [len(pairs[i][0]) for i in idx], [len(pairs[i][1]) for i in idx]
        real += sum(src) + sum(tgt)
        padded += len(idx) * (max(src) + max(tgt))
    return 1.0 - real / max(padded, 1)


def random_pairs(n: int, seed: int, longest: int = 40) -> list[tuple[list[int], list[int]]]:
    """Pairs with many equal lengths (ties broken by the noise) and a few long ones (for max_len)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s, t = rng.randint(1, longest), rng.randint(1, longest)
        out.append(([rng.randint(4, 60) for _ in range(s)] + [EOS_ID],
                    [BOS_ID] + [rng.randint(4, 60) for _ in range(t)] + [EOS_ID]))
    return out


@pytest.mark.parametrize("seed", [0, 1, 1234])
@pytest.mark.parametrize("max_tokens", [1, 50, 256, 4096])
def test_batches_are_those_of_the_list_based_batching(seed: int, max_tokens: int) -> None:
    data = random_pairs(700, seed)
    arrays = PairArrays.from_lists(data)
    for epoch in (0, 1, 7):
        expected = reference_make_batches(data, max_tokens, seed, epoch)
        assert make_batches(data, max_tokens, seed, epoch) == expected
        assert make_batches(arrays, max_tokens, seed, epoch) == expected
        assert [b.tolist() for b in length_batches(arrays.src_lens, arrays.tgt_lens, max_tokens, seed, epoch)] \
            == expected
        assert padding_waste(arrays, expected) == reference_padding_waste(data, expected)


@pytest.mark.parametrize("max_len", [5, 20, 41, None])
def test_the_max_len_view_batches_the_pairs_the_filtered_list_did(max_len: int | None) -> None:
    """Before: the pairs over max_len were dropped from the list and batches indexed the filtered list.
    Now: a view keeps the indices of the pairs within max_len; its batches index the view, and index i of
    the view is pair i of the filtered list, so the batches hold the same pairs in the same order."""
    data = random_pairs(500, seed=3)
    filtered = [p for p in data if max_len is None or (len(p[0]) <= max_len and len(p[1]) <= max_len)]
    view = PairArrays.from_lists(data).within(max_len)
    assert len(view) == len(filtered) and view.to_lists() == filtered
    for seed, epoch in ((1, 0), (1, 1), (9, 4)):
        expected = reference_make_batches(filtered, 256, seed, epoch)
        assert make_batches(view, 256, seed, epoch) == expected
        for idx in expected[:5]:
            a, b = collate(view, idx), collate(filtered, idx)
            assert torch.equal(a.src, b.src) and torch.equal(a.tgt_in, b.tgt_in) and torch.equal(a.tgt_out, b.tgt_out)
            assert (a.real_tokens, a.padded_tokens) == (b.real_tokens, b.padded_tokens)


def test_no_pairs_no_batches() -> None:
    empty = PairArrays.from_lists([])
    assert make_batches(empty, 100, 1, 0) == reference_make_batches([], 100, 1, 0) == []
    assert padding_waste(empty, []) == reference_padding_waste([], [])


def test_views_slices_and_iteration() -> None:
    data = random_pairs(30, seed=5)
    arrays = PairArrays.from_lists(data)
    assert len(arrays) == 30 and [(s.tolist(), t.tolist()) for s, t in arrays] == data
    assert arrays[-1][0].tolist() == data[-1][0]
    assert arrays[3:9].to_lists() == data[3:9] and arrays[:4][1:].to_lists() == data[1:4]
    picked = arrays.select(np.array([7, 2, 2]))
    assert picked.to_lists() == [data[7], data[2], data[2]]
    assert picked[1:].to_lists() == [data[2], data[2]]  # a view of a view maps through both
    src, tgt = lengths(data)
    assert src.tolist() == arrays.src_lens.tolist() == [len(s) for s, _ in data]
    assert tgt.tolist() == arrays.tgt_lens.tolist()
    with pytest.raises(IndexError):
        arrays[30]
