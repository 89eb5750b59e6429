"""Vocabulary: symbols <-> ids, with the special tokens at fixed, checked ids.

    id 0 <pad>   padding (ignored by the loss)
    id 1 <unk>   any symbol not in the vocabulary
    id 2 <s>     beginning of sentence (decoder start)
    id 3 </s>    end of sentence

Saved as plain text, one symbol per line (line number - 1 = id), so it can be read with
any tool; its SHA-256 identifies it, and checkpoints record it.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from nmt.errors import DataError
from nmt.files.atomic import atomic_write_text
from nmt.files.lines import read_lines

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
SPECIALS = (PAD, UNK, BOS, EOS)
PAD_ID, UNK_ID, BOS_ID, EOS_ID = range(4)


class HashedText(ABC):
    """A small artifact saved as text and identified by the SHA-256 of that text."""

    @abstractmethod
    def text(self) -> str:
        """The exact file content."""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text().encode("utf-8")).hexdigest()

    def save(self, path: Path) -> None:
        atomic_write_text(path, self.text())


class Vocabulary(HashedText):
    """An ordered list of symbols whose first four are the specials, in that order."""

    def __init__(self, symbols: Sequence[str]) -> None:
        if tuple(symbols[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"the first symbols must be {SPECIALS}, got {tuple(symbols[:4])}")
        if len(set(symbols)) != len(symbols):
            dup = next(s for s, n in Counter(symbols).items() if n > 1)
            raise ValueError(f"symbol {dup!r} appears more than once")
        bad = next((s for s in symbols if not s or any(c.isspace() for c in s)), None)
        if bad is not None:
            raise ValueError(f"symbol {bad!r} is empty or contains whitespace")
        self.itos: list[str] = list(symbols)
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(self.itos)}

    @classmethod
    def from_counts(cls, counts: Counter[str], min_freq: int = 1, max_size: int | None = None,
                    reserved: Iterable[str] = ()) -> Vocabulary:
        """Most frequent symbols first (ties alphabetical, so builds are reproducible).

        `reserved` symbols (a subword alphabet) are kept whatever their count, within
        `max_size`: ranked among the others if seen often enough, else appended in order."""
        must = [s for s in dict.fromkeys(reserved) if s not in SPECIALS]
        ranked = sorted((s for s, n in counts.items() if n >= min_freq and s not in SPECIALS),
                        key=lambda s: (-counts[s], s))
        if not must:
            return cls(list(SPECIALS) + ranked[:max_size])
        must_set = set(must)
        room = None if max_size is None else max(max_size - len(must), 0)
        keep = must_set | set([s for s in ranked if s not in must_set][:room])
        kept = [s for s in ranked if s in keep]
        listed = set(kept)
        return cls(list(SPECIALS) + kept + [s for s in must if s not in listed])

    def __len__(self) -> int:
        return len(self.itos)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and self.itos == other.itos

    def encode(self, symbols: Iterable[str]) -> list[int]:
        return [self.stoi.get(s, UNK_ID) for s in symbols]

    def decode(self, ids: Iterable[int]) -> list[str]:
        return [self.itos[i] for i in ids]

    def text(self) -> str:
        return "".join(s + "\n" for s in self.itos)

    @classmethod
    def load(cls, path: Path, sha256: str | None = None) -> Vocabulary:
        """Load and check a saved vocabulary (and its hash, when one is given)."""
        try:
            vocab = cls(read_lines(path))
        except ValueError as exc:
            raise DataError(f"{path}: not a valid vocabulary: {exc}; re-run the vocab stage") from None
        if sha256 is not None and vocab.sha256 != sha256:
            raise DataError(f"{path}: SHA-256 {vocab.sha256[:12]}... differs from the recorded {sha256[:12]}...; "
                            "the vocabulary changed since the model was built")
        return vocab
