"""Numericalisation and token-budget batching (Vaswani et al. 2017, 5.1: "each training
batch contained a set of sentence pairs containing approximately 25000 source tokens and
25000 target tokens").

A split becomes a list of (source ids, target ids) with source = symbols + </s> and
target = <s> + symbols + </s> (`Vocabularies.source_ids` / `target_ids`); with BPE-dropout
(Provilkov et al. 2020) the training pairs are segmented afresh every epoch. Each epoch the pairs are sorted by length with ties broken
at random, cut into batches whose padded size (rows x longest side) stays within the
token budget, and the batches are shuffled. Everything random comes from
`random.Random(seed, epoch)`, so an epoch's batches can be rebuilt exactly on resume, and
ranks of a distributed run agree on them without communicating.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from nmt.files.lines import split_file
from nmt.text.tokenizer import SUFFIX, read_tokenized
from nmt.text.vocab import PAD_ID
from nmt.text.vocabularies import Vocabularies, pad_batch

Pair = tuple[list[int], list[int]]
TokenPair = tuple[list[str], list[str]]


def load_token_pairs(tokens_dir: Path, split: str, vocabs: Vocabularies) -> list[TokenPair]:
    """(source tokens, target tokens) of one split, as the tokenize stage wrote them."""
    src = read_tokenized(split_file(tokens_dir, split, vocabs.src_lang, SUFFIX))
    tgt = read_tokenized(split_file(tokens_dir, split, vocabs.tgt_lang, SUFFIX))
    return [(s, t) for (s, _), (t, _) in zip(src, tgt)]


def numericalise(token_pairs: list[TokenPair], vocabs: Vocabularies, max_len: int | None = None,
                 bpe_dropout: float = 0.0, rng: random.Random | None = None) -> list[Pair]:
    """Id pairs; pairs longer than `max_len` ids on a side are dropped. With `bpe_dropout` > 0
    and an `rng`, every token is segmented by BPE-dropout (a different sample per call)."""
    pairs = [(vocabs.source_ids(s, bpe_dropout, rng), vocabs.target_ids(t, bpe_dropout, rng)) for s, t in token_pairs]
    if max_len is not None:
        pairs = [p for p in pairs if len(p[0]) <= max_len and len(p[1]) <= max_len]
    return pairs


def load_pairs(tokens_dir: Path, split: str, vocabs: Vocabularies, max_len: int | None = None) -> list[Pair]:
    """Numericalised pairs of one split (deterministic segmentation); pairs longer than
    `max_len` ids on a side are dropped."""
    return numericalise(load_token_pairs(tokens_dir, split, vocabs), vocabs, max_len)


def epoch_pairs(token_pairs: list[TokenPair], vocabs: Vocabularies, max_len: int, bpe_dropout: float,
                seed: int, epoch: int) -> list[Pair]:
    """The training pairs of one epoch under BPE-dropout: a fresh segmentation drawn from
    `random.Random(seed, epoch)`, so a resumed epoch sees the same one."""
    return numericalise(token_pairs, vocabs, max_len, bpe_dropout, random.Random(f"{seed}/bpe/{epoch}"))


def make_batches(pairs: list[Pair], max_tokens: int, seed: int, epoch: int) -> list[list[int]]:
    """Index lists of length-bucketed batches within `max_tokens` padded tokens per side."""
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


def padding_waste(pairs: list[Pair], batches: list[list[int]]) -> float:
    """Share of source + target positions in `batches` that are padding."""
    real = padded = 0
    for idx in batches:
        src, tgt = [len(pairs[i][0]) for i in idx], [len(pairs[i][1]) for i in idx]
        real += sum(src) + sum(tgt)
        padded += len(idx) * (max(src) + max(tgt))
    return 1.0 - real / max(padded, 1)


def shard(batches: list[list[int]], rank: int, world: int) -> list[list[int]]:
    """This rank's batches; every rank gets the same number (the remainder is dropped)."""
    usable = len(batches) - len(batches) % world
    return batches[rank:usable:world]


@dataclass
class Batch:
    src: Tensor  # (B, S) source ids, <pad>-padded
    tgt_in: Tensor  # (B, T) decoder input: <s> y1 .. yn
    tgt_out: Tensor  # (B, T) labels: y1 .. yn </s>
    real_tokens: int  # non-pad source + target tokens
    padded_tokens: int  # all source + target positions

    def to(self, device: torch.device) -> Batch:
        return Batch(self.src.to(device, non_blocking=True), self.tgt_in.to(device, non_blocking=True),
                     self.tgt_out.to(device, non_blocking=True), self.real_tokens, self.padded_tokens)

    @property
    def n_tgt_tokens(self) -> int:
        return int((self.tgt_out != PAD_ID).sum())


def collate(pairs: list[Pair], indices: list[int]) -> Batch:
    src = torch.from_numpy(pad_batch([pairs[i][0] for i in indices]))
    tgt = torch.from_numpy(pad_batch([pairs[i][1] for i in indices]))
    real = sum(len(pairs[i][0]) + len(pairs[i][1]) for i in indices)
    return Batch(src, tgt[:, :-1], tgt[:, 1:], real, src.numel() + tgt.numel())
