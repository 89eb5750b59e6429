"""Numericalisation and token-budget batching (Vaswani et al. 2017, 5.1: "each training
batch contained a set of sentence pairs containing approximately 25000 source tokens and
25000 target tokens").

A split is a set of (source ids, target ids) pairs with source = symbols + </s> and target =
<s> + symbols + </s> (`Vocabularies.source_ids` / `target_ids`): memory-mapped from the
binarize stage's data/bin (`nmt.train.pairs`, the train stage's path), or numericalised from
the token files (`load_pairs`: no data/bin given, and BPE-dropout (Provilkov et al. 2020), which
segments the training pairs afresh every epoch and so needs the tokens: the small-corpus path).
Each epoch the pairs are sorted by length with ties broken at random, cut into batches whose
padded size (rows x longest side) stays within the token budget, and the batches are shuffled,
all on the lengths arrays (`length_batches`). Everything random comes from
`random.Random(seed, epoch)`, so an epoch's batches can be rebuilt exactly on resume, and
ranks of a distributed run agree on them without communicating.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeVar

import numpy as np
import torch
from torch import Tensor

from nmt.config.train import TrainConfig
from nmt.files.lines import split_file
from nmt.text.tokenizer import SUFFIX, read_tokenized
from nmt.text.vocab import PAD_ID
from nmt.text.vocabularies import Vocabularies, pad_batch
from nmt.train.pairs import Pair, PairArrays, Pairs, open_split

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


class TrainingData(NamedTuple):
    """The pairs a run trains and validates on."""

    train: Pairs  # training ids (deterministic segmentation, at most train.max_len per side)
    val: Pairs  # validation ids
    tokens: list[TokenPair]  # training tokens, segmented afresh each epoch under BPE-dropout ([] without)


def load_training_data(cfg: TrainConfig, vocabs: Vocabularies, tokens_dir: Path,
                       bin_dir: Path | None) -> TrainingData:
    """Train and val pairs memory-mapped from `bin_dir` (data/bin), the max_len filter applied on the
    lengths; without one, numericalised from `tokens_dir` (the same ids, held as lists). The
    training tokens are read only for BPE-dropout."""
    train: Pairs
    val: Pairs
    if bin_dir is not None:
        train, val = open_split(bin_dir, "train", vocabs).within(cfg.max_len), open_split(bin_dir, "val", vocabs)
    else:
        train, val = load_pairs(tokens_dir, "train", vocabs, cfg.max_len), load_pairs(tokens_dir, "val", vocabs)
    tokens = load_token_pairs(tokens_dir, "train", vocabs) if cfg.bpe_dropout > 0 else []
    return TrainingData(train, val, tokens)


def lengths(pairs: Pairs) -> tuple[np.ndarray, np.ndarray]:
    """(source lengths, target lengths) as int64 arrays: a `PairArrays`' own, or counted from lists."""
    if isinstance(pairs, PairArrays):
        return pairs.src_lens, pairs.tgt_lens
    src, tgt = (np.fromiter((len(p[side]) for p in pairs), dtype=np.int64, count=len(pairs)) for side in (0, 1))
    return src, tgt


def length_batches(src_lens: np.ndarray, tgt_lens: np.ndarray, max_tokens: int, seed: int,
                   epoch: int) -> list[np.ndarray]:
    """Index arrays of length-bucketed batches within `max_tokens` padded tokens per side: the pairs
    sorted by (source length, target length, noise), one `random()` per pair in order as noise, cut
    greedily where the next pair would overflow the budget, and the batches shuffled by the same rng."""
    n = len(src_lens)
    if n == 0:
        return []
    rng = random.Random(f"{seed}/{epoch}")
    noise = np.fromiter((rng.random() for _ in range(n)), dtype=np.float64, count=n)
    order = np.lexsort((noise, tgt_lens, src_lens))  # stable: full ties keep index order, as sorted() does
    cuts, rows, longest = [], 0, 0
    for pos, size in enumerate(np.maximum(src_lens, tgt_lens)[order].tolist()):
        if rows and max(longest, size) * (rows + 1) > max_tokens:
            cuts.append(pos)
            rows, longest = 0, 0
        rows += 1
        longest = max(longest, size)
    batches = np.split(order, cuts)
    rng.shuffle(batches)
    return batches


def make_batches(pairs: Pairs, max_tokens: int, seed: int, epoch: int) -> list[list[int]]:
    """Index lists of length-bucketed batches within `max_tokens` padded tokens per side (`length_batches`)."""
    return [b.tolist() for b in length_batches(*lengths(pairs), max_tokens, seed, epoch)]


def padding_waste(pairs: Pairs, batches: Sequence[Sequence[int] | np.ndarray]) -> float:
    """Share of source + target positions in `batches` that are padding."""
    if not batches:
        return 1.0  # as 1 - 0 / max(0, 1) always was
    src_lens, tgt_lens = lengths(pairs)
    rows = np.array([len(b) for b in batches], dtype=np.int64)
    flat = np.concatenate([np.asarray(b, dtype=np.int64) for b in batches])
    starts = np.concatenate([[0], np.cumsum(rows)[:-1]])
    src, tgt = src_lens[flat], tgt_lens[flat]
    padded = int((rows * (np.maximum.reduceat(src, starts) + np.maximum.reduceat(tgt, starts))).sum())
    return 1.0 - int(src.sum() + tgt.sum()) / max(padded, 1)


B = TypeVar("B")  # a batch: a list or an array of indices


def shard(batches: list[B], rank: int, world: int) -> list[B]:
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
        """On `device`; to a GPU from pinned memory without blocking the host."""
        pin = device.type == "cuda"
        src, tgt_in, tgt_out = ((t.pin_memory() if pin else t).to(device, non_blocking=True)
                                for t in (self.src, self.tgt_in, self.tgt_out))
        return Batch(src, tgt_in, tgt_out, self.real_tokens, self.padded_tokens)

    @property
    def n_tgt_tokens(self) -> int:
        return int((self.tgt_out != PAD_ID).sum())


def collate(pairs: Pairs, indices: Sequence[int] | np.ndarray, multiple: int = 1) -> Batch:
    """The pairs at `indices` as a padded batch (the only ids of the split copied out of it); the
    source length and the decoder's length padded up to a multiple of `multiple` (train.pad_multiple)."""
    rows = [pairs[i] for i in indices]
    src = torch.from_numpy(pad_batch([s for s, _ in rows], _round_up(max(len(s) for s, _ in rows), multiple)))
    tgt = torch.from_numpy(pad_batch([t for _, t in rows], _round_up(max(len(t) for _, t in rows) - 1, multiple) + 1))
    real = sum(len(s) + len(t) for s, t in rows)
    return Batch(src, tgt[:, :-1], tgt[:, 1:], real, src.numel() + tgt.numel())


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple
