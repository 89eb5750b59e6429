"""Byte-pair-encoding subwords (Sennrich et al. 2016) learned on top of spaCy tokens.

A token is split into characters, every character but the first marked as a continuation
with the prefix "##" ("läuft" -> l ##ä ##u ##f ##t); merges join the most frequent
adjacent pair, over and over. Learning is deterministic (ties go to the alphabetically
first pair) and incremental (only words that contain the merged pair are touched), so
Multi30k's 8k merges take seconds. `merge_pieces()` reverses the split: a piece starting
with "##" continues the previous token. (A literal token that itself starts with "##"
would be glued to its neighbour on the way back; such tokens do not occur in captions.)
"""

from __future__ import annotations

import heapq
import random
from collections import Counter, defaultdict
from collections.abc import Container, Iterable
from pathlib import Path

from nmt.errors import DataError
from nmt.files.lines import read_lines
from nmt.text.vocab import HashedText

CONT = "##"  # continuation prefix of every piece that does not start a token
HEADER = "#bpe-merges v1"
# Word types whose segmentation `BPE` remembers (about 150 bytes each: ~30 MB). Past it the cache
# starts over: a real corpus's frequent words come back at once, and memory stays flat however many
# word types the corpus has (made-up names, numbers, typos grow them without end).
CACHE_TYPES = 200_000
Pair = tuple[str, str]


def split_chars(token: str) -> tuple[str, ...]:
    return (token[0],) + tuple(CONT + c for c in token[1:]) if token else ()


def join_pair(a: str, b: str) -> str:
    return a + b[len(CONT):]


def learn_merges(word_counts: Counter[str], num_merges: int, min_freq: int = 2) -> list[Pair]:
    """The first `num_merges` merges (fewer if no pair is seen `min_freq` times)."""
    words = [list(split_chars(w)) for w in word_counts]
    freqs = list(word_counts.values())
    pair_counts: Counter[Pair] = Counter()
    where: dict[Pair, set[int]] = defaultdict(set)
    for i, syms in enumerate(words):
        for pair in zip(syms, syms[1:]):
            pair_counts[pair] += freqs[i]
            where[pair].add(i)
    heap = [(-n, pair) for pair, n in pair_counts.items()]
    heapq.heapify(heap)
    merges: list[Pair] = []
    while len(merges) < num_merges and heap:
        neg, pair = heapq.heappop(heap)
        if pair_counts.get(pair, 0) != -neg:
            continue  # stale heap entry
        if -neg < min_freq:
            break
        merges.append(pair)
        merged = join_pair(*pair)
        touched: set[Pair] = set()
        for i in list(where[pair]):
            syms, f = words[i], freqs[i]
            for p in zip(syms, syms[1:]):
                pair_counts[p] -= f
                touched.add(p)
            words[i] = syms = _apply(syms, pair, merged)
            for p in zip(syms, syms[1:]):
                pair_counts[p] += f
                where[p].add(i)
                touched.add(p)
        del pair_counts[pair], where[pair]
        for p in touched - {pair}:
            if pair_counts[p] > 0:
                heapq.heappush(heap, (-pair_counts[p], p))
    return merges


def _apply(syms: list[str], pair: Pair, merged: str) -> list[str]:
    out, i = [], 0
    while i < len(syms):
        if i + 1 < len(syms) and syms[i] == pair[0] and syms[i + 1] == pair[1]:
            out.append(merged)
            i += 2
        else:
            out.append(syms[i])
            i += 1
    return out


class BPE(HashedText):
    """Applies learned merges to tokens, lowest-ranked pair first (as learned)."""

    def __init__(self, merges: list[Pair], cache_types: int = CACHE_TYPES) -> None:
        self.merges = list(merges)
        self.cache_types = cache_types  # the bound of `_cache`
        self.ranks = {pair: r for r, pair in enumerate(self.merges)}
        self.parts = {join_pair(*pair): pair for pair in reversed(self.merges)}  # first merge making a piece wins
        self._cache: dict[str, tuple[str, ...]] = {}
        self._pieces: dict[str, str] = {}  # one str object per distinct piece the cache's tuples hold

    def segment_token(self, token: str) -> tuple[str, ...]:
        if token in self._cache:
            return self._cache[token]
        syms = list(split_chars(token))
        while len(syms) > 1:
            pair = min(zip(syms, syms[1:]), key=lambda p: self.ranks.get(p, len(self.ranks)))
            if pair not in self.ranks:
                break
            syms = _apply(syms, pair, join_pair(*pair))
        if len(self._cache) >= self.cache_types:
            self._cache.clear()
            self._pieces.clear()
        pieces = self._pieces  # a cached segmentation shares its pieces with the others': a third less memory
        self._cache[token] = result = tuple([pieces.setdefault(sym, sym) for sym in syms])
        return result

    def sample_token(self, token: str, dropout: float, rng: random.Random) -> tuple[str, ...]:
        """BPE-dropout (Provilkov et al. 2020, 3): as `segment_token`, but at every merge step
        each applicable merge is skipped with probability `dropout`; the step merges the
        best-ranked merge that survived, and segmentation ends when none did."""
        syms = list(split_chars(token))
        ranks = self.ranks
        while len(syms) > 1:
            best, best_rank = None, len(ranks)
            for pair in zip(syms, syms[1:]):
                r = ranks.get(pair)
                if r is not None and r < best_rank and rng.random() >= dropout:
                    best, best_rank = pair, r
            if best is None:
                break
            syms = _apply(syms, best, join_pair(*best))
        return tuple(syms)

    def segment(self, tokens: Iterable[str], known: Container[str] | None = None,
                dropout: float = 0.0, rng: random.Random | None = None) -> list[str]:
        """Pieces of `tokens`; with `known` (one side's vocabulary), a piece outside it is
        split back into the pieces it was merged from, down to characters if need be
        (joint merges, separate vocabularies: a merge seen only in the other language).
        With `dropout` > 0 and an `rng`, each token is segmented by `sample_token`."""
        if dropout > 0.0 and rng is not None:
            pieces = [piece for tok in tokens for piece in self.sample_token(tok, dropout, rng)]
        else:
            pieces = [piece for tok in tokens for piece in self.segment_token(tok)]
        return pieces if known is None else [q for p in pieces for q in self._within(p, known)]

    def _within(self, piece: str, known: Container[str]) -> list[str]:
        if piece in known or piece not in self.parts:
            return [piece]
        a, b = self.parts[piece]
        return self._within(a, known) + self._within(b, known)

    def text(self) -> str:
        return HEADER + "\n" + "".join(f"{a} {b}\n" for a, b in self.merges)

    @classmethod
    def load(cls, path: Path) -> BPE:
        lines = read_lines(path)
        if not lines or lines[0] != HEADER:
            raise DataError(f"{path}:1: not a BPE merges file (expected header {HEADER!r}); re-run the vocab stage")
        merges = []
        for lineno, line in enumerate(lines[1:], start=2):
            parts = line.split(" ")
            if len(parts) != 2:
                raise DataError(f"{path}:{lineno}: expected two symbols separated by one space")
            merges.append((parts[0], parts[1]))
        return cls(merges)


def merge_pieces(pieces: Iterable[str]) -> list[str]:
    """Join subword pieces back into tokens."""
    tokens: list[str] = []
    for piece in pieces:
        if piece.startswith(CONT) and tokens:
            tokens[-1] += piece[len(CONT):]
        else:
            tokens.append(piece)
    return tokens
