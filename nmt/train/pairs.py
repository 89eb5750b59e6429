"""Id pairs as arrays: what training batches and collates, memory-mapped from the binarize stage.

`PairArrays` holds a split's pairs as each side's ids back to back with offsets
(`nmt.data.indexed`): memory-mapped from data/bin (`open_split`, the train stage's path) or
built in memory from lists (`from_lists`). Its lengths are numpy arrays computed from the
offsets and pair i's ids are numpy slices, so batching sorts and cuts on the lengths and
`collate` copies only a batch's ids: beyond the pages the OS maps in, a run holds the lengths,
never the corpus as Python lists. A view (`within(max_len)`, `select`, a slice) keeps the
indices of the pairs it holds, so a batch's indices refer to the view's pairs in order, as they
referred to the max_len-filtered list of pairs before, and rebuilt batches resume exactly.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np

from nmt.data.indexed import FORMAT_VERSION, MANIFEST, open_indexed
from nmt.errors import DataError
from nmt.files.lines import split_file
from nmt.text.vocabularies import Vocabularies

Pair = tuple[list[int], list[int]]


class PairArrays:
    """The (source ids, target ids) pairs of a split, or a view of some of them (`keep`)."""

    def __init__(self, src: np.ndarray, src_offsets: np.ndarray, tgt: np.ndarray, tgt_offsets: np.ndarray,
                 keep: np.ndarray | None = None, lengths: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        if len(src_offsets) != len(tgt_offsets):
            raise DataError(f"the two sides hold {len(src_offsets) - 1} and {len(tgt_offsets) - 1} sequences; "
                            "re-run the binarize stage")
        self._src, self._src_offsets, self._tgt, self._tgt_offsets = src, src_offsets, tgt, tgt_offsets
        self._all_lengths = lengths or (np.diff(src_offsets), np.diff(tgt_offsets))  # of every pair, not only kept
        self._keep = keep  # indices of the pairs this view holds, in order (None: all of them)
        src_lens, tgt_lens = self._all_lengths
        self.src_lens: np.ndarray = src_lens if keep is None else src_lens[keep]  # ids per source, int64
        self.tgt_lens: np.ndarray = tgt_lens if keep is None else tgt_lens[keep]

    @classmethod
    def from_lists(cls, pairs: Sequence[Pair]) -> PairArrays:
        """The same pairs held in memory (tests, benches, small corpora)."""
        sides = []
        for side in (0, 1):
            lengths = np.fromiter((len(p[side]) for p in pairs), dtype=np.int64, count=len(pairs))
            ids = np.fromiter(itertools.chain.from_iterable(p[side] for p in pairs), dtype=np.int64,
                              count=int(lengths.sum()))
            sides += [ids, np.concatenate([[0], np.cumsum(lengths)])]
        return cls(sides[0], sides[1], sides[2], sides[3])

    def __len__(self) -> int:
        return len(self.src_lens)

    @property
    def mapped(self) -> bool:
        """True when the ids are memory-mapped files (data/bin), not arrays in memory."""
        return isinstance(self._src, np.memmap) or isinstance(self._tgt, np.memmap)

    @overload
    def __getitem__(self, i: int) -> tuple[np.ndarray, np.ndarray]: ...
    @overload
    def __getitem__(self, i: slice) -> PairArrays: ...
    def __getitem__(self, i: int | slice) -> tuple[np.ndarray, np.ndarray] | PairArrays:
        """Pair i's (source ids, target ids) as views of the arrays; a slice: a view of those pairs."""
        if isinstance(i, slice):
            return self.select(np.arange(len(self))[i])
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"pair {i} of {n}")
        j = int(i % n if self._keep is None else self._keep[i])
        return (self._src[self._src_offsets[j]:self._src_offsets[j + 1]],
                self._tgt[self._tgt_offsets[j]:self._tgt_offsets[j + 1]])

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for i in range(len(self)):
            yield self[i]

    def select(self, indices: np.ndarray) -> PairArrays:
        """A view of the pairs at `indices` (of this view), in that order."""
        indices = np.asarray(indices, dtype=np.int64)
        keep = indices if self._keep is None else self._keep[indices]
        return PairArrays(self._src, self._src_offsets, self._tgt, self._tgt_offsets, keep, self._all_lengths)

    def within(self, max_len: int | None) -> PairArrays:
        """The pairs with at most `max_len` ids on each side, in order (`numericalise`'s filter)."""
        if max_len is None:
            return self
        return self.select(np.flatnonzero((self.src_lens <= max_len) & (self.tgt_lens <= max_len)))

    def to_lists(self) -> list[Pair]:
        """The pairs as lists of ints (tests; small splits only)."""
        return [(s.tolist(), t.tolist()) for s, t in self]


Pairs = Sequence[Pair] | PairArrays  # what batching and collate take: lists of pairs, or their arrays


def bin_direction(bin_dir: Path | None) -> str | None:
    """The direction data/bin was binarized for ("src-tgt"), from its manifest: the train stage turns
    the vocabularies toward it; None without a bin folder or a readable manifest (read_manifest says
    what is wrong when the pairs are opened)."""
    if bin_dir is None:
        return None
    try:
        manifest = json.loads((Path(bin_dir) / MANIFEST).read_text(encoding="utf-8"))
        return f"{manifest['src_lang']}-{manifest['tgt_lang']}"
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_manifest(bin_dir: Path, vocabs: Vocabularies) -> dict:
    """data/bin/manifest.json, checked: this format, and made with the vocabularies of `vocabs`."""
    path = Path(bin_dir) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        fmt, hashes, langs = manifest["format"], manifest["vocab"], (manifest["src_lang"], manifest["tgt_lang"])
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read ({exc}); run the binarize stage (`dvc repro binarize`)") from None
    except (KeyError, TypeError) as exc:
        raise DataError(f"{path}: malformed ({type(exc).__name__}: {exc}); re-run the binarize stage") from None
    if fmt != FORMAT_VERSION:
        raise DataError(f"{path}: format {fmt}, this code reads format {FORMAT_VERSION}; re-run the binarize stage")
    if langs != (vocabs.src_lang, vocabs.tgt_lang):
        raise DataError(f"{path}: binarized for {'-'.join(langs)}, but the vocabularies given are "
                        f"{vocabs.src_lang}-{vocabs.tgt_lang}; binarize {bin_dir} again for that direction "
                        "(the binarize stage's --direction), or pass the vocabularies it was made with")
    differ = [name for name, sha in vocabs.hashes.items() if not isinstance(hashes, dict) or hashes.get(name) != sha]
    if differ:
        raise DataError(f"{path}: the ids were made with other vocabularies than the ones given ({', '.join(differ)} "
                        f"SHA-256 differ); binarize {bin_dir} again with those (the binarize stage's --vocab), or "
                        "pass the vocabularies it was made with")
    return manifest


def open_split(bin_dir: Path, split: str, vocabs: Vocabularies) -> PairArrays:
    """The pairs of `split` from data/bin, memory-mapped; `DataError` when data/bin is missing, damaged,
    or was made with other vocabularies than `vocabs`."""
    manifest = read_manifest(bin_dir, vocabs)
    path = Path(bin_dir) / MANIFEST
    try:
        count, dtype = int(manifest["splits"][split]["pairs"]), np.dtype(manifest["dtype"]).newbyteorder("<")
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path}: no pair count or dtype for split {split!r} ({type(exc).__name__}: {exc}); "
                        "re-run the binarize stage") from None
    src = open_indexed(split_file(bin_dir, split, vocabs.src_lang), dtype, count)
    tgt = open_indexed(split_file(bin_dir, split, vocabs.tgt_lang), dtype, count)
    return PairArrays(*src, *tgt)
