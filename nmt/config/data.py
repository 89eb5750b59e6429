"""Typed configuration of the data stages: the `data`, `validate`, `tokenize` and `vocab`
sections of params.yaml. Each stage reads its own section (plus `data` for the corpus).

A corpus is described entirely here: its languages, the files to fetch (URL + SHA-256,
optionally an archive and the members to extract), and which file holds which split.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from nmt.config.loader import require

_LANG = re.compile(r"^[a-z]{2,3}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_URL_SCHEMES = ("http://", "https://", "file://")


@dataclass(frozen=True)
class RemoteFile:
    """One file to fetch. An archive (`members` non-empty) is extracted, then discarded."""

    name: str  # file name under data/raw/, also the name looked up in a mirror
    url: str  # official download URL (http(s):// or file://)
    sha256: str  # expected SHA-256 of the fetched bytes (lowercase hex)
    members: Mapping[str, str] = field(default_factory=dict)  # archives only: output name -> member path

    def __post_init__(self) -> None:
        require(bool(_FILE_NAME.match(self.name)), "name", f"{self.name!r} is not a plain file name")
        require(bool(_SHA256.match(self.sha256)), "sha256", "expected 64 lowercase hex digits")
        require(self.url.lower().startswith(_URL_SCHEMES), "url", f"{self.url!r} is not an http(s):// or file:// URL")
        for out in self.members:
            require(bool(_FILE_NAME.match(out)), f"members.{out}", "output name must be a plain file name")


@dataclass(frozen=True)
class CorpusConfig:
    """A parallel corpus: languages, files, and the file of each language in each split."""

    languages: tuple[str, str]  # the two languages, ISO 639 codes, e.g. [de, en]
    files: tuple[RemoteFile, ...]  # everything the download stage fetches
    splits: Mapping[str, Mapping[str, str]]  # split -> {language: file name}; needs 'train' and 'val'

    def __post_init__(self) -> None:
        for lang in self.languages:
            require(bool(_LANG.match(lang)), "languages", f"{lang!r} is not a language code like 'de'")
        require(self.languages[0] != self.languages[1], "languages", "the two languages must differ")
        for split in ("train", "val"):
            require(split in self.splits, "splits", f"missing split '{split}' (train and val are required)")
        produced = set(self.produced_files())
        for split, by_lang in self.splits.items():
            require(set(by_lang) == set(self.languages), f"splits.{split}",
                    f"needs exactly one file per language {list(self.languages)}, got {sorted(by_lang)}")
            for lang, name in by_lang.items():
                require(name in produced, f"splits.{split}.{lang}",
                        f"{name!r} is not produced by any entry of 'files' (known: {', '.join(sorted(produced))})")

    def produced_files(self) -> list[str]:
        """Names of the files the download stage leaves in data/raw/."""
        out: list[str] = []
        for f in self.files:
            out.extend(f.members) if f.members else out.append(f.name)
        return out

    @property
    def test_splits(self) -> list[str]:
        """Every split that is neither train nor val, in configuration order."""
        return [s for s in self.splits if s not in ("train", "val")]


@dataclass(frozen=True)
class DataConfig:
    """The `data` section: which corpus, which direction, where to fetch from."""

    corpus: str  # name of the entry of `corpora` to use
    direction: str  # "src-tgt", e.g. "de-en" (en->de: "en-de")
    corpora: Mapping[str, CorpusConfig]  # every corpus this project knows
    mirror: str | None = None  # directory or file:// URL holding the same file names; env NMT_DATA_MIRROR wins
    retries: int = 4  # extra attempts after a transient failure (connection reset, HTTP 5xx, timeout)
    backoff_s: float = 1.0  # wait before the first retry, doubled for each further retry
    timeout_s: float = 60.0  # socket timeout of one HTTP request

    def __post_init__(self) -> None:
        require(self.corpus in self.corpora, "corpus",
                f"{self.corpus!r} is not configured (configured: {', '.join(self.corpora) or 'none'}); "
                "add it under data.corpora or pick one of those")
        langs = self.direction.split("-")
        require(len(langs) == 2 and langs[0] != langs[1], "direction", f"expected 'src-tgt' like 'de-en', got {self.direction!r}")
        known = self.corpora[self.corpus].languages
        require(set(langs) == set(known), "direction",
                f"{self.direction!r} does not match corpus {self.corpus!r} languages {list(known)}")
        require(self.retries >= 0, "retries", "must be >= 0")
        require(self.backoff_s >= 0, "backoff_s", "must be >= 0")
        require(self.timeout_s > 0, "timeout_s", "must be > 0")

    @property
    def active(self) -> CorpusConfig:
        return self.corpora[self.corpus]

    @property
    def src_lang(self) -> str:
        return self.direction.split("-")[0]

    @property
    def tgt_lang(self) -> str:
        return self.direction.split("-")[1]


@dataclass(frozen=True)
class ValidateConfig:
    """The `validate` section: the gate on raw data. Row-level problems are filtered (in
    `filter_splits`) and counted; corpus-level problems fail the stage."""

    max_words: int = 100  # row-level: a side with more whitespace-separated words is filtered
    max_length_ratio: float = 3.0  # row-level: (longer+1)/(shorter+1) word-count ratio above this is filtered
    filter_splits: tuple[str, ...] = ("train",)  # splits whose bad rows are dropped (test sets stay intact)
    min_pairs: int = 1  # corpus-level: every split needs at least this many pairs (train: see min_train_pairs)
    min_train_pairs: int = 1000  # corpus-level: the train split needs at least this many pairs
    max_duplicate_rate: float = 0.05  # corpus-level: share of repeated (src, tgt) pairs allowed in train
    max_filtered_rate: float = 0.05  # corpus-level: share of rows a split may lose to row-level filters

    def __post_init__(self) -> None:
        require(self.max_words > 0, "max_words", "must be > 0")
        require(self.max_length_ratio >= 1.0, "max_length_ratio", "must be >= 1.0")
        require(self.min_pairs >= 1, "min_pairs", "must be >= 1")
        require(self.min_train_pairs >= 1, "min_train_pairs", "must be >= 1")
        for name in ("max_duplicate_rate", "max_filtered_rate"):
            require(0.0 <= getattr(self, name) <= 1.0, name, "must be between 0 and 1")


@dataclass(frozen=True)
class TokenizeConfig:
    """The `tokenize` section: spaCy rule-based tokenizers (spacy.blank(lang))."""

    lowercase: bool = False  # lowercase tokens after tokenization (the reference tutorials do)
    max_tokens: int = 128  # gate: a sentence with more tokens fails the gate (validate filters first)

    def __post_init__(self) -> None:
        require(self.max_tokens > 0, "max_tokens", "must be > 0")


@dataclass(frozen=True)
class VocabConfig:
    """The `vocab` section: word-level or joint-BPE vocabularies built from train only."""

    kind: Literal["word", "bpe"] = "word"  # word: spaCy tokens; bpe: joint BPE subwords of spaCy tokens
    joint: bool = False  # one shared vocabulary for both languages (enables 3-way weight tying)
    min_freq: int = 2  # a symbol seen fewer times in train becomes <unk> (word) / is not merged (bpe)
    max_size: int | None = None  # cap on symbols per vocabulary, excluding specials (null: no cap)
    bpe_merges: int = 8000  # bpe: number of merges learned jointly on both languages
    min_size: int = 10  # gate: each vocabulary needs at least this many symbols, specials included
    max_oov_rate: float = 0.05  # gate: share of <unk> symbols on the val split allowed

    def __post_init__(self) -> None:
        require(self.min_freq >= 1, "min_freq", "must be >= 1")
        require(self.max_size is None or self.max_size > 0, "max_size", "must be > 0 or null")
        require(self.bpe_merges >= 0, "bpe_merges", "must be >= 0")
        require(self.min_size >= 4, "min_size", "must be >= 4 (the four special symbols)")
        require(0.0 <= self.max_oov_rate <= 1.0, "max_oov_rate", "must be between 0 and 1")
