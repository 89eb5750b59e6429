"""Typed configuration of a corpus mix and of the cleaning the validate stage applies to it.

A mix (`data.mixes.<name>`) lists splits of configured corpora with a role each: `train` sources
are cleaned, decontaminated and concatenated (each pair written `weight` times) into the `train`
split; `dev` sources are concatenated into `val`; each `test` source becomes a split of its own
that keeps every line. A train source may give a share of its pairs (`dev_share`, chosen by the
pair's digest) to `val`. Gate thresholds may be set per source, since a web corpus loses more
pairs than a curated one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from nmt.config.loader import require

_SPLIT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
ROLES = ("train", "dev", "test")


@dataclass(frozen=True)
class MixSource:
    """One split of one corpus in a mix."""

    corpus: str  # an entry of data.corpora
    split: str  # one of that corpus's splits
    role: Literal["train", "dev", "test"]  # train: cleaned into `train`; dev: into `val`; test: a split of its own
    name: str | None = None  # the source's name in reports (test: its split name); default: <corpus>.<split>
    weight: float = 1.0  # train: times each kept pair is written (a fraction by the pair's digest); 0 < weight
    dev_share: float = 0.0  # train: share of its clean pairs moved to `val` instead (by the pair's digest)
    max_filtered_rate: float | None = None  # this source's gate on the share dropped by cleaning (null: validate's)
    max_duplicate_rate: float | None = None  # this source's gate on repeated pairs (null: validate's)

    def __post_init__(self) -> None:
        require(self.weight > 0, "weight", "must be > 0 (leave a source out of the mix to drop it)")
        require(0.0 <= self.dev_share < 1.0, "dev_share", "must be in [0, 1)")
        require(self.role == "train" or (self.weight == 1.0 and self.dev_share == 0.0), "role",
                "weight and dev_share apply to train sources only")
        for key in ("max_filtered_rate", "max_duplicate_rate"):
            value = getattr(self, key)
            require(value is None or 0.0 <= value <= 1.0, key, "must be between 0 and 1, or null")
        if self.name is not None:
            require(bool(_SPLIT_NAME.match(self.name)) and self.name not in ("train", "val"), "name",
                    f"{self.name!r}: letters, digits, '_' and '-' only, and not 'train' or 'val'")

    @property
    def label(self) -> str:
        """The name reports use; a test source's split name."""
        if self.name is not None:
            return self.name
        return self.split if self.role == "test" else f"{self.corpus}.{self.split}"


@dataclass(frozen=True)
class MixConfig:
    """A named mix: its two languages and its sources."""

    languages: tuple[str, str]  # the two languages, as every source corpus has them
    sources: tuple[MixSource, ...]  # in order: train pairs are written in this order
    licence_note: str = ""  # what a model trained on the mix must say (attribution), for the card

    def __post_init__(self) -> None:
        roles = [s.role for s in self.sources]
        require("train" in roles, "sources", "needs at least one source with role: train")
        require("dev" in roles or any(s.dev_share > 0 for s in self.sources), "sources",
                "needs a source with role: dev (or a train source with dev_share) for the val split")
        labels = [s.label for s in self.sources]
        dupes = sorted({x for x in labels if labels.count(x) > 1})
        require(not dupes, "sources", f"two sources are named {dupes[0]!r}: give one a `name`" if dupes else "")

    @property
    def splits(self) -> list[str]:
        """The splits of the validated mix: train, val, then one per test source."""
        return ["train", "val", *(s.label for s in self.sources if s.role == "test")]


@dataclass(frozen=True)
class CleanConfig:
    """`validate.clean`: row rules on training sources (nmt.data.cleaning), each off by its default.
    A dropped pair is counted under the first rule it fails, per source."""

    langid: bool = False  # both sides identified as their language (nmt.data.langid)
    langid_min_chars: int = 0  # sides shorter than this are not language-identified (too little evidence)
    same: bool = False  # drop pairs whose sides are equal after normalization (copies)
    min_alpha: float = 0.0  # smallest share of letters among a side's non-space characters
    max_other_script: float = 1.0  # largest share of a side's letters outside the Latin script
    numbers: bool = False  # the digit sequences of both sides must be the same set
    urls: bool = False  # URLs and e-mail addresses must be the same on both sides
    dedupe: bool = False  # drop repeated pairs (pair-level: the first is kept); needs 8 bytes per pair
    min_lexical: float = 0.0  # smallest share of words with a dictionary translation on the other side (0: off)
    # min_lexical's dictionary, Ding format (Debian: apt-get install trans-de-en)
    lexicon: str = "/usr/share/trans/de-en"

    @property
    def any_rule(self) -> bool:
        """Whether any rule is switched on (the settings of a rule, such as `lexicon`, are not rules)."""
        return (self.langid or self.same or self.min_alpha > 0 or self.max_other_script < 1 or self.numbers
                or self.urls or self.dedupe or self.min_lexical > 0)

    def __post_init__(self) -> None:
        require(self.langid_min_chars >= 0, "langid_min_chars", "must be >= 0")
        for key in ("min_alpha", "max_other_script", "min_lexical"):
            require(0.0 <= getattr(self, key) <= 1.0, key, "must be between 0 and 1")


@dataclass(frozen=True)
class DecontaminateConfig:
    """`validate.decontaminate`: no dev or test sentence reaches training (nmt.data.decontaminate).
    A training pair is dropped when either side matches a dev/test sentence of its language
    exactly after normalization, or is a near duplicate of one. The files of the `blind` folders
    (sources without references: `de-en.1.de` is German) are indexed beside them (nmt.data.blind)."""

    enabled: bool = False  # check at all (a mix's dev and test sources are the index)
    remove: bool = True  # drop the overlapping pairs from training; false: fail the stage if any overlap
    near_threshold: float = 0.8  # estimated Jaccard similarity of character n-gram sets at or above this: near
    near_min_chars: int = 30  # normalized sentences shorter than this are matched exactly only
    shingle: int = 5  # characters per n-gram
    permutations: int = 64  # MinHash size; banded into `bands` LSH bands
    bands: int = 16
    blind: tuple[str, ...] = ()  # folders of source-only files (blind test sets) indexed too; suffix = language

    def __post_init__(self) -> None:
        require(0.0 < self.near_threshold <= 1.0, "near_threshold", "must be in (0, 1]")
        require(self.near_min_chars >= 1, "near_min_chars", "must be >= 1")
        require(self.shingle >= 1, "shingle", "must be >= 1")
        require(self.bands >= 1 and self.permutations % self.bands == 0, "bands",
                "must divide permutations")
