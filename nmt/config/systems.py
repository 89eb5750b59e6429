"""Typed configuration of a split read from machine-translation systems' outputs.

A shared task's release has, for one set of source lines, a file per system with its translation
of every line (and, for some lines, human references). Two split formats read them
(`nmt.data.systems`), declared in a corpus's `splits` like the other formats:

    wmt23-de-en: {format: systems, de: generaltest2023.de-en.src.de,
                  en: [generaltest2023.de-en.hyp.AIRC.en, ...], reference: generaltest2023.de-en.ref.refA.en,
                  select: consensus, top_k: 1, max_per_template: 1, split_sentences: true}
    wmt23-de-en-ref: {format: references, de: generaltest2023.de-en.src.de, en: [generaltest2023.de-en.ref.refA.en]}

The language with one file is the source side, the language with a list the target side: a pair
is always (source line, one target line), written in the mix's language order, so the same pairs
are distillation for source->target and back-translation-style pairs for target->source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nmt.config.loader import require

SYSTEM_FORMATS = ("systems", "references")
SELECT = ("all", "consensus", "top_k")  # how targets are chosen per line (nmt.data.consensus)
SEGMENTS = ("all", "suite", "general")  # which lines: every one, those without a reference, those with one
NO_REFERENCE = "NO TRANSLATION AVAILABLE"  # what WMT23's reference files hold for the test-suite lines
_OPTIONS = {"reference": str, "no_reference": str, "select": str, "top_k": int, "segments": str,
            "max_per_template": int, "split_sentences": bool, "max_words_whole": int}


@dataclass(frozen=True)
class SystemsSource:
    """One split of system outputs (`format: systems`) or of human references (`format: references`)."""

    format: str  # systems: a pair per chosen system output | references: a pair per human reference
    source_lang: str  # the language of the source file
    target_lang: str  # the language of the target files
    source: str  # the source file: one segment per line
    targets: tuple[str, ...]  # systems: the system-output files | references: the reference files; line-aligned
    reference: str | None = None  # systems: a reference file that tells test-suite lines from general-test ones
    no_reference: str = NO_REFERENCE  # a reference line reading this: the line has none (a test-suite line)
    select: str = "all"  # all: every output | consensus: the output closest to the others (chrF) | top_k
    top_k: int = 1  # select top_k: the k outputs closest to the others
    segments: str = "all"  # all | suite: lines without a reference | general: lines with one (needs `reference`)
    max_per_template: int = 0  # keep at most this many lines per source template (0: all; nmt.data.systems)
    split_sentences: bool = True  # a multi-sentence segment becomes one pair per sentence where both sides agree
    max_words_whole: int = 0  # a segment kept whole with a side over this many words is left out (0: kept; dev)

    def __post_init__(self) -> None:
        require(self.format in SYSTEM_FORMATS, "format", f"{self.format!r} is not one of {', '.join(SYSTEM_FORMATS)}")
        require(len(self.targets) >= 1, self.target_lang, "needs at least one file")
        require(len(set(self.targets)) == len(self.targets), self.target_lang, "a file is listed twice")
        require(self.select in SELECT, "select", f"{self.select!r} is not one of {', '.join(SELECT)}")
        require(self.segments in SEGMENTS, "segments", f"{self.segments!r} is not one of {', '.join(SEGMENTS)}")
        require(self.top_k >= 1, "top_k", "must be >= 1")
        require(self.select != "top_k" or self.top_k < len(self.targets), "top_k",
                f"must be less than the {len(self.targets)} outputs (select: all keeps every one)")
        require(self.max_per_template >= 0, "max_per_template", "must be >= 0 (0: no thinning)")
        require(self.max_words_whole >= 0, "max_words_whole", "must be >= 0 (0: whole segments kept at any length)")
        require(self.segments == "all" or self.reference is not None or self.format == "references", "segments",
                f"segments: {self.segments} needs `reference` (the file that says which lines have one)")
        if self.format == "references":
            require(self.reference is None and self.select == "all", "format",
                    "format references reads the reference files themselves: no `reference`, select: all")

    @property
    def names(self) -> list[str]:
        """Every file the split reads."""
        return [self.source, *self.targets, *([self.reference] if self.reference else [])]


def systems_source(fmt: str, entry: Mapping[str, Any], languages: tuple[str, str], key: str) -> SystemsSource:
    """The typed form of a `format: systems` / `format: references` split entry (`entry` without its
    `format`), checked; errors name `key` (`splits.<split>`)."""
    langs = {k: v for k, v in entry.items() if k in languages}
    unknown = sorted(set(entry) - set(langs) - set(_OPTIONS) - {"file"})
    require(not unknown, key, f"unknown keys {unknown}: expected the languages {list(languages)} and "
                              f"{', '.join(_OPTIONS)}")
    require("file" not in entry, f"{key}.file", f"format {fmt} names its files per language, not 'file'")
    sources = [lang for lang in languages if isinstance(langs.get(lang), str)]
    targets = [lang for lang in languages if isinstance(langs.get(lang), (list, tuple))]
    require(len(sources) == 1 and len(targets) == 1, key,
            f"format {fmt} needs one language with one file (the source) and the other with a list of files "
            f"(the {'system outputs' if fmt == 'systems' else 'references'}), e.g. de: src.de, en: [a.en, b.en]")
    files = langs[targets[0]]
    require(all(isinstance(f, str) for f in files), f"{key}.{targets[0]}", "file names must be strings")
    options = {}
    for name, kind in _OPTIONS.items():
        if name in entry:
            value = entry[name]
            require(isinstance(value, kind) and (kind is bool or not isinstance(value, bool)), f"{key}.{name}",
                    f"expected {kind.__name__}, got {value!r}")
            options[name] = value
    return SystemsSource(fmt, sources[0], targets[0], langs[sources[0]], tuple(files), **options)
