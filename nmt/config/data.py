"""Typed configuration of the data stages: the `data`, `validate`, `tokenize` and `vocab`
sections of params.yaml. Each stage reads its own section (plus `data` for the corpus).

A corpus is described entirely here: its languages, the files to fetch (URL + SHA-256,
optionally an archive and the members to extract), and which file holds which split, in the
form it is published in (`SplitSource`: two line-aligned files, Moses-escaped files, a TSV with
one column per language, or a TMX). A mix (`nmt.config.mix`) combines splits of several corpora.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from nmt.config.loader import InvalidValue, require
from nmt.config.mix import CleanConfig, DecontaminateConfig, MixConfig
from nmt.config.systems import SYSTEM_FORMATS, SystemsSource, systems_source

_LANG = re.compile(r"^[a-z]{2,3}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_URL_SCHEMES = ("http://", "https://", "file://")
FORMATS = ("lines", "moses", "tsv", "tmx", *SYSTEM_FORMATS)  # how a split's files are read (nmt.data.formats)
_SPLIT_KEYS = ("format", "file")  # the keys of a split entry that are not languages


@dataclass(frozen=True)
class SplitSource:
    """How one split of a corpus is read, as published (`CorpusConfig.source(split)`)."""

    format: str  # lines: one file per language | moses: the same, Moses-tokenized and XML-escaped | tsv | tmx
    files: Mapping[str, str]  # lines/moses: language -> file name; tsv/tmx: {"*": the one file}
    columns: Mapping[str, int]  # tsv: language -> 0-based column
    systems: SystemsSource | None = None  # systems/references: the source file, the target files, the options

    @property
    def names(self) -> list[str]:
        return self.systems.names if self.systems is not None else list(self.files.values())


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
    # split -> {language: file name} (two line-aligned files), optionally with `format: moses`; or
    # {format: tsv, file: NAME, <language>: column} or {format: tmx, file: NAME}. 'train' and 'val'
    # are required unless the corpus only feeds a mix (`requires_train: false`). Or system outputs:
    # {format: systems, <source language>: FILE, <target language>: [FILE, ...], ...} (nmt.config.systems).
    splits: Mapping[str, Mapping[str, str | int | bool | tuple[str, ...]]]
    licence: str = ""  # licence and attribution, copied into the model card
    requires_train: bool = True  # false: a corpus of test or dev sets only, used through a mix

    def __post_init__(self) -> None:
        for lang in self.languages:
            require(bool(_LANG.match(lang)), "languages", f"{lang!r} is not a language code like 'de'")
        require(self.languages[0] != self.languages[1], "languages", "the two languages must differ")
        for split in ("train", "val") if self.requires_train else ():
            require(split in self.splits, "splits", f"missing split '{split}' (train and val are required)")
        produced = set(self.produced_files())
        for split in self.splits:
            src = self.source(split)
            named = ([("*", n) for n in src.names] if src.systems is not None else list(src.files.items()))
            for key, name in named:
                require(name in produced, f"splits.{split}.{'file' if key == '*' else key}",
                        f"{name!r} is not produced by any entry of 'files' (known: {', '.join(sorted(produced))})")

    def source(self, split: str) -> SplitSource:
        """The typed form of `splits[split]`, checked (InvalidValue naming `splits.<split>`)."""
        entry, key = dict(self.splits[split]), f"splits.{split}"
        fmt = str(entry.pop("format", "lines"))
        require(fmt in FORMATS, f"{key}.format", f"{fmt!r} is not one of {', '.join(FORMATS)}")
        if fmt in SYSTEM_FORMATS:
            try:
                systems = systems_source(fmt, entry, self.languages, key)
            except InvalidValue as exc:
                raise InvalidValue(exc.key if exc.key.startswith(key) else f"{key}.{exc.key}", exc.message) from None
            return SplitSource(fmt, {}, {}, systems)
        langs = {k: v for k, v in entry.items() if k not in _SPLIT_KEYS}
        if fmt in ("lines", "moses"):
            require("file" not in entry, f"{key}.file", f"format {fmt} names one file per language, not 'file'")
            require(set(langs) == set(self.languages), key,
                    f"needs exactly one file per language {list(self.languages)}, got {sorted(langs)}")
            require(all(isinstance(v, str) for v in langs.values()), key, "file names must be strings")
            return SplitSource(fmt, {lang: str(langs[lang]) for lang in self.languages}, {})
        require(set(langs) <= set(self.languages), key, f"unknown keys {sorted(set(langs) - set(self.languages))}: "
                f"expected the languages {list(self.languages)}, 'format' and 'file'")
        require(isinstance(entry.get("file"), str), f"{key}.file", f"format {fmt} needs 'file: NAME'")
        if fmt == "tmx":
            require(not langs, key, "format tmx takes its languages from the file's xml:lang: name only 'file'")
            return SplitSource(fmt, {"*": str(entry["file"])}, {})
        require(set(langs) == set(self.languages) and all(type(v) is int and v >= 0 for v in langs.values()), key,
                f"format tsv needs the 0-based column of each language {list(self.languages)}, e.g. en: 0, de: 1")
        require(len(set(langs.values())) == 2, key, "the two languages need different columns")
        return SplitSource(fmt, {"*": str(entry["file"])}, {lang: cast(int, langs[lang]) for lang in self.languages})

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
    """The `data` section: which corpus (or mix of corpora), which direction, where to fetch from."""

    corpus: str  # name of the entry of `corpora` (or of `mixes`) to use
    direction: str  # "src-tgt", e.g. "de-en" (en->de: "en-de")
    corpora: Mapping[str, CorpusConfig]  # every corpus this project knows
    mixes: Mapping[str, MixConfig] = field(default_factory=dict)  # named mixes of those corpora' splits
    mirror: str | None = None  # directory or file:// URL holding the same file names; env NMT_DATA_MIRROR wins
    retries: int = 4  # extra attempts after a transient failure (connection reset, HTTP 5xx, timeout)
    backoff_s: float = 1.0  # wait before the first retry, doubled for each further retry
    timeout_s: float = 60.0  # socket timeout of one HTTP request

    def __post_init__(self) -> None:
        names = [*self.corpora, *self.mixes]
        require(self.corpus in names, "corpus",
                f"{self.corpus!r} is not configured (configured: {', '.join(names) or 'none'}); "
                "add it under data.corpora (or data.mixes) or pick one of those")
        for name, mix in self.mixes.items():
            require(name not in self.corpora, f"mixes.{name}", "a mix cannot have the name of a corpus")
            for i, src in enumerate(mix.sources):
                key = f"mixes.{name}.sources[{i}]"
                require(src.corpus in self.corpora, f"{key}.corpus",
                        f"{src.corpus!r} is not under data.corpora (configured: {', '.join(self.corpora)})")
                corpus = self.corpora[src.corpus]
                require(src.split in corpus.splits, f"{key}.split",
                        f"corpus {src.corpus!r} has no split {src.split!r} (it has: {', '.join(corpus.splits)})")
                require(set(corpus.languages) == set(mix.languages), f"{key}.corpus",
                        f"{src.corpus!r} is {list(corpus.languages)}, the mix is {list(mix.languages)}")
        langs = self.direction.split("-")
        require(len(langs) == 2 and langs[0] != langs[1], "direction",
                f"expected 'src-tgt' like 'de-en', got {self.direction!r}")
        known = self.languages
        require(set(langs) == set(known), "direction",
                f"{self.direction!r} does not match corpus {self.corpus!r} languages {list(known)}")
        require(self.retries >= 0, "retries", "must be >= 0")
        require(self.backoff_s >= 0, "backoff_s", "must be >= 0")
        require(self.timeout_s > 0, "timeout_s", "must be > 0")

    @property
    def mix(self) -> MixConfig | None:
        """The mix in use, or None when `corpus` names a single corpus."""
        return self.mixes.get(self.corpus)

    @property
    def active(self) -> CorpusConfig:
        """The single corpus in use (a mix has none: see `mix`)."""
        require(self.mix is None, "corpus", f"{self.corpus!r} is a mix, not a single corpus")
        return self.corpora[self.corpus]

    @property
    def languages(self) -> tuple[str, str]:
        return self.mix.languages if self.mix is not None else self.corpora[self.corpus].languages

    @property
    def splits(self) -> list[str]:
        """The splits the validate stage writes, in order: a corpus's own, or a mix's train, val and tests."""
        return self.mix.splits if self.mix is not None else list(self.corpora[self.corpus].splits)

    def used_corpora(self) -> list[str]:
        """The corpora the download stage fetches: the one in use, or every one the mix reads."""
        if self.mix is None:
            return [self.corpus]
        return list(dict.fromkeys(src.corpus for src in self.mix.sources))

    def raw_dir(self, root: Path, corpus: str) -> Path:
        """Where `corpus`'s files lie under the download stage's output `root`: the root itself for a
        single corpus (the layout data/raw always had), `root/<corpus>` in a mix."""
        return root if self.mix is None else root / corpus

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
    clean: CleanConfig = field(default_factory=CleanConfig)  # the cleaning rules on training sources (off: none)
    decontaminate: DecontaminateConfig = field(default_factory=DecontaminateConfig)  # dev/test kept out of train

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
    """The `vocab` section: word-level, joint-BPE or SentencePiece vocabularies built from train only."""

    # word: spaCy tokens; bpe: joint BPE subwords of spaCy tokens; sentencepiece / sentencepiece-bpe: a joint
    # SentencePiece model (unigram / BPE) of max_size pieces learned on the raw training text (nmt/text/spm.py)
    kind: Literal["word", "bpe", "sentencepiece", "sentencepiece-bpe"] = "word"
    joint: bool = False  # one shared vocabulary for both languages (enables 3-way weight tying)
    min_freq: int = 2  # a symbol seen fewer times in train becomes <unk> (word) / is not merged (bpe)
    max_size: int | None = None  # cap on symbols per vocabulary, excluding specials (null: no cap)
    bpe_merges: int = 8000  # bpe: number of merges learned jointly on both languages
    min_size: int = 10  # gate: each vocabulary needs at least this many symbols, specials included
    max_oov_rate: float = 0.05  # gate: share of <unk> symbols on the val split allowed

    def __post_init__(self) -> None:
        require(self.min_freq >= 1, "min_freq", "must be >= 1")
        require(self.max_size is None or self.max_size > 0, "max_size", "must be > 0 or null")
        if self.kind.startswith("sentencepiece"):
            require(self.max_size is not None, "max_size", "a SentencePiece vocabulary needs its size: the pieces "
                    "besides the four specials, e.g. 8000")
            require(self.joint, "joint", "a SentencePiece vocabulary is one model for both languages: set joint: true")
        require(self.bpe_merges >= 0, "bpe_merges", "must be >= 0")
        require(self.min_size >= 4, "min_size", "must be >= 4 (the four special symbols)")
        require(0.0 <= self.max_oov_rate <= 1.0, "max_oov_rate", "must be between 0 and 1")
