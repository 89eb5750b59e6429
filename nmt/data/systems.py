"""Systems' translations as corpora of a mix: a source file and several target files of the same
lines. The split formats are configured by `nmt.config.systems`.

`format: systems` reads a source file, one file per system with its translation of every line and,
optionally, a human reference file that tells the general-test lines (with a reference) from the
test-suite lines (WMT23's reference files read `NO TRANSLATION AVAILABLE` there). Line by line:

1. **segments**: every line, only the test-suite lines, or only the general-test lines;
2. **thinning**: templated test-suite lines repeat with small changes. A line's template is its
   source after `nmt.data.decontaminate.normalize` (case folded, punctuation dropped, whitespace
   collapsed) with every run of digits read as `0`: "Room 12 is free." and "room 7 is free" share
   one. At most `max_per_template` lines of a template are kept, the first in file order (0: all);
3. **selection** (`nmt.data.consensus.choose`): every output, the consensus output (the highest
   mean chrF against the other outputs: a cheap MBR) or the `top_k` by that score;
4. **sentences** (`nmt.data.sentences.aligned_sentences`): each (source, output) pair becomes a pair per
   sentence where both sides split into the same number of sentences, else stays whole (left out where
   a side has over `max_words_whole` words: dev sets are copied as published, with no length rule).

`format: references` reads the source with the human references of the lines that have them
(a pair per reference file, the same sentence splitting): the general test as dev, or as training.

Pairs are yielded in the mix's language order, so the same files serve both directions: German
source -> system English is distillation for de->en and a back-translation-style pair (machine
source, human target) for en->de. The cleaning rules and decontamination of the validate stage
apply to these pairs as to any training source's (`nmt.data.mixing`). What the reader kept and
dropped is counted in `notes` (the validate report's `read` per source).
"""

from __future__ import annotations

import itertools
import logging
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from nmt.config.systems import SystemsSource
from nmt.data.chunks import Chunk, Pair, chunked
from nmt.data.consensus import choose
from nmt.data.decontaminate import normalize
from nmt.data.sentences import aligned_sentences
from nmt.errors import DataError
from nmt.files.lines import iter_lines

log = logging.getLogger(__name__)

_DIGITS = re.compile(r"\d+")
LINES = "lines"  # the notes' keys
SUITE = "test-suite lines (no reference)"
GENERAL = "general-test lines (with a reference)"
OTHER_SEGMENTS = "lines left out (not in `segments`, or no reference to read)"
THINNED = "lines thinned (template over max_per_template)"
OUTPUTS = "outputs chosen"
SPLIT = "segment pairs split into sentences"
WHOLE = "segment pairs kept whole (sentence counts differ)"
SENTENCE_PAIRS = "sentence pairs from split segments"
OUTPUTS_WHOLE = "segment pairs read whole (split_sentences: false)"
TOO_LONG = "segment pairs kept whole left out (a side over max_words_whole)"


def template(text: str) -> str:
    """A line's template: normalized (case folded, punctuation dropped) with digit runs as `0`."""
    return _DIGITS.sub("0", normalize(text))


def systems_chunks(spec: SystemsSource, folder: Path, langs: tuple[str, str], chunk_lines: int,
                   notes: Counter | None = None) -> Iterator[Chunk]:
    """The pairs of a `systems` or `references` split, `chunk_lines` at a time, in `langs` order;
    `Chunk`'s line numbers are the source file's."""
    if {spec.source_lang, spec.target_lang} != set(langs):
        raise DataError(f"{spec.source}: a {spec.source_lang}-{spec.target_lang} split in a {'-'.join(langs)} mix")
    pairs = _pairs(spec, Path(folder), Counter() if notes is None else notes)
    if langs[0] != spec.source_lang:
        pairs = ((n, tgt, src) for n, src, tgt in pairs)
    yield from chunked(pairs, chunk_lines)


def _aligned(paths: list[Path]) -> Iterator[tuple[int, list[str]]]:
    """Line N of every file, together; files of unequal length are a `DataError` naming both."""
    readers = [iter_lines(p) for p in paths]
    for number, lines in enumerate(itertools.zip_longest(*readers), start=1):
        if any(line is None for line in lines):
            short = next(p for p, line in zip(paths, lines) if line is None)
            longer = next(p for p, line in zip(paths, lines) if line is not None)
            raise DataError(f"{short} has {number - 1} lines but {longer} has more: a system's file must have "
                            "a line for every source line, in the same order; fix it or download it again")
        yield number, list(lines)


def _pairs(spec: SystemsSource, folder: Path, notes: Counter) -> Iterator[Pair]:
    paths = [folder / name for name in spec.names]
    n_targets = len(spec.targets)
    per_template: Counter = Counter()
    for number, lines in _aligned(paths):
        source, targets = lines[0], lines[1:1 + n_targets]
        notes[LINES] += 1
        if spec.format == "references":  # a line without a reference has nothing to read
            targets = [t for t in targets if t.strip() != spec.no_reference]
            has_reference: bool | None = bool(targets)
        else:  # None: no reference file to tell (segments: all)
            has_reference = lines[-1].strip() != spec.no_reference if spec.reference is not None else None
        if has_reference is not None:
            notes[GENERAL if has_reference else SUITE] += 1
        wanted = spec.segments == "all" or (spec.segments == "general") == has_reference
        if not wanted or not targets:
            notes[OTHER_SEGMENTS] += 1
            continue
        if spec.max_per_template:
            key = template(source)
            if per_template[key] >= spec.max_per_template:
                notes[THINNED] += 1
                continue
            per_template[key] += 1
        for i in choose(targets, spec.select, spec.top_k):
            notes[OUTPUTS] += 1
            pieces = aligned_sentences(source, targets[i], (spec.source_lang, spec.target_lang)) \
                if spec.split_sentences else None
            if pieces is None:
                if spec.max_words_whole and max(len(source.split()), len(targets[i].split())) > spec.max_words_whole:
                    notes[TOO_LONG] += 1
                    continue
                notes[WHOLE if spec.split_sentences else OUTPUTS_WHOLE] += 1
                pieces = [(source.strip(), targets[i].strip())]
            elif len(pieces) > 1:
                notes[SPLIT] += 1
                notes[SENTENCE_PAIRS] += len(pieces)
            for src, tgt in pieces:
                yield number, src, tgt
    log.info("%s: %s", spec.source, dict(notes))
