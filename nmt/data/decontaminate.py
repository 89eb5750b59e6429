"""Decontamination: keep every dev and test sentence out of training.

The dev and test sources of a mix are indexed first, per language; then each training pair is
looked up, both sides, and dropped (or, with `remove: false`, counted to fail the stage) when a
side matches a dev/test sentence of its language:

- **exactly**, after `normalize` (Unicode NFKC, case folded, punctuation and symbols removed,
  whitespace collapsed): an 8-byte BLAKE2b digest per indexed sentence;
- **nearly**: the Jaccard similarity of the two sentences' sets of character `shingle`-grams
  (of the normalized text), estimated by MinHash with `permutations` hash functions, is at least
  `near_threshold`. Candidates come from locality-sensitive hashing: the signature is cut into
  `bands` bands, and two sentences are compared only when one band is equal (the chance to be
  compared, by similarity: docs/data.md), so the cost is one signature
  and a few dictionary look-ups per training side, never all pairs against all. Sentences shorter
  than `near_min_chars` (normalized) are matched exactly only: two short sentences that differ
  by a word ("Tom is here." / "Tom is there.") are different sentences, not a leak.

The index holds, per dev/test sentence, its digest, its signature (8 bytes per permutation) and
one bucket entry per band: bounded by the size of the dev and test sets, not of the training data.
Which dev/test set a match hit is recorded, so the report counts the overlap per test set.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from nmt.config.mix import DecontaminateConfig
from nmt.data.chunks import digest64

_DROP = re.compile(r"[\W_]+", re.UNICODE)  # punctuation, symbols and whitespace runs
_SHIFT = np.uint64(32)


def normalize(text: str) -> str:
    """NFKC, case folded, every run of non-word characters one space, stripped."""
    return _DROP.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def digest(text: str) -> int:
    """8-byte BLAKE2b digest of a normalized sentence, as an int."""
    return digest64(text)


class MinHasher:
    """MinHash signatures of character n-gram sets. Each n-gram is hashed to 64 bits (BLAKE2b), and
    permutation i maps it by multiply-shift, h_i(x) = ((a_i * x + b_i) mod 2^64) >> 32 with a_i odd
    (Dietzfelbinger et al. 1997: the high bits of the product are the well-mixed ones)."""

    def __init__(self, permutations: int, shingle: int, seed: int = 38) -> None:
        rng = np.random.default_rng(seed)
        self.a = rng.integers(0, 1 << 63, size=permutations, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        self.b = rng.integers(0, 1 << 63, size=permutations, dtype=np.uint64)
        self.shingle = shingle

    def shingles(self, text: str) -> np.ndarray:
        n = self.shingle
        grams = {text[i:i + n] for i in range(max(1, len(text) - n + 1))}
        return np.fromiter((digest64(g) for g in grams), dtype=np.uint64, count=len(grams))

    def signature(self, text: str) -> np.ndarray:
        x = self.shingles(text)  # (S,) 64-bit n-gram hashes
        with np.errstate(over="ignore"):  # the products wrap mod 2^64 on purpose
            return ((np.outer(x, self.a) + self.b) >> _SHIFT).min(axis=0)  # (permutations,)


@dataclass
class Hit:
    """A training side that matched: how, and which dev/test set it matched."""

    kind: str  # "exact" | "near"
    target: str  # the dev/test set's name


@dataclass
class ContaminationIndex:
    """The dev and test sentences of one language, for exact and near look-ups."""

    cfg: DecontaminateConfig
    exact: dict[int, str] = field(default_factory=dict)  # digest -> first set that has it
    signatures: list[np.ndarray] = field(default_factory=list)
    owners: list[str] = field(default_factory=list)  # set name of each signature
    buckets: dict[tuple[int, bytes], list[int]] = field(default_factory=dict)  # (band, band bytes) -> signature ids

    def __post_init__(self) -> None:
        self.hasher = MinHasher(self.cfg.permutations, self.cfg.shingle)
        self.rows = self.cfg.permutations // self.cfg.bands

    def _bands(self, sig: np.ndarray) -> Iterable[tuple[int, bytes]]:
        for band in range(self.cfg.bands):
            yield band, sig[band * self.rows:(band + 1) * self.rows].tobytes()

    def add(self, sentences: Iterable[str], owner: str) -> None:
        """Index the sentences of the dev/test set `owner`."""
        for text in sentences:
            norm = normalize(text)
            if not norm:
                continue
            self.exact.setdefault(digest(norm), owner)
            if len(norm) >= self.cfg.near_min_chars:
                sig = self.hasher.signature(norm)
                for key in self._bands(sig):
                    self.buckets.setdefault(key, []).append(len(self.signatures))
                self.signatures.append(sig)
                self.owners.append(owner)

    def find(self, text: str) -> Hit | None:
        """The dev/test sentence `text` duplicates, if any."""
        norm = normalize(text)
        if not norm:
            return None
        owner = self.exact.get(digest(norm))
        if owner is not None:
            return Hit("exact", owner)
        if len(norm) < self.cfg.near_min_chars or not self.signatures:
            return None
        sig = self.hasher.signature(norm)
        seen: set[int] = set()
        for key in self._bands(sig):
            for idx in self.buckets.get(key, ()):
                if idx in seen:
                    continue
                seen.add(idx)
                if float(np.mean(self.signatures[idx] == sig)) >= self.cfg.near_threshold:
                    return Hit("near", self.owners[idx])
        return None


@dataclass
class Decontaminator:
    """One index per language; counts the training pairs it finds, per kind and per dev/test set."""

    cfg: DecontaminateConfig
    langs: tuple[str, str]
    counts: Counter = field(default_factory=Counter)  # (kind, set) -> training pairs
    listed: list[str] = field(default_factory=list)  # sets reported even without a match (the blind files)

    def __post_init__(self) -> None:
        self.index = {lang: ContaminationIndex(self.cfg) for lang in self.langs}

    def add_side(self, lang: str, sentences: list[str], owner: str) -> None:
        """Index one side only, in `lang` (a blind set: sources without references); `owner` is
        reported in `per_set` even when no training pair matches it."""
        self.index[lang].add(sentences, owner)
        if owner not in self.listed:
            self.listed.append(owner)

    def add(self, side_a: list[str], side_b: list[str], owner: str) -> None:
        """Index a dev/test set's pairs (both sides, each in its language)."""
        for lang, side in zip(self.langs, (side_a, side_b)):
            self.index[lang].add(side, owner)

    def check(self, side_a: list[str], side_b: list[str], skip: np.ndarray) -> np.ndarray:
        """Mask of the training pairs (not already `skip`ped) that a dev/test sentence is in; counted."""
        hits = np.zeros(len(side_a), dtype=bool)
        index_a, index_b = (self.index[lang] for lang in self.langs)
        for i, (a, b) in enumerate(zip(side_a, side_b)):
            if skip[i]:
                continue
            hit = index_a.find(a) or index_b.find(b)
            if hit is not None:
                hits[i] = True
                self.counts[(hit.kind, hit.target)] += 1
        return hits

    def per_set(self) -> dict[str, dict[str, int]]:
        """{dev/test set: {"exact": n, "near": n}} of the training pairs dropped for it."""
        out: dict[str, dict[str, int]] = {}
        for (kind, target), n in sorted(self.counts.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            out.setdefault(target, {"exact": 0, "near": 0})[kind] = n
        if self.listed:
            out = {t: out.get(t, {"exact": 0, "near": 0}) for t in sorted({*out, *self.listed})}
        return out
