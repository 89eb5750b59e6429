"""The validate stage for a corpus mix (`data.mixes`): read every source as published, clean and
decontaminate the training sources, and write the mix's splits.

Three passes, each streaming its sources chunk by chunk (memory: a chunk, the dev/test index,
and 8 bytes per distinct training pair for the duplicate look-up):

1. **test** sources, each written as its own split with every line (a test set is never
   filtered), and indexed for decontamination;
2. **dev**: the dev sources, then the `dev_share` of each train source (chosen by the pair's
   digest, among its pairs that pass the rules), written to `val` and indexed;
3. **train**: each train source's pairs go through the row checks of `validate` (empty side, too
   many words, length ratio), the cleaning rules (`nmt.data.cleaning`), the duplicate look-up and
   the decontamination look-up, in that order; a pair is counted under the first it fails. The kept
   pairs are written `weight` times (the fraction by the pair's digest) to `train`.

Every source is read leniently: a malformed line (not UTF-8, too few TSV columns) is skipped and
counted like a rule's drop, with its line number (`nmt.data.formats`). The report has, per source,
the pairs in, dropped per rule, moved to val, out and written, and the first lines skipped of each
kind; per dev/test set and blind file (`nmt.data.blind`), the training pairs dropped for overlapping
it (exact and near). The gate fails a source whose rules (malformed lines included) drop more than
its `max_filtered_rate` (a dev or test source: whose malformed lines exceed it), or that repeats more
than its `max_duplicate_rate`, a split with too few pairs, and, with `decontaminate.remove: false`,
any overlap; each failure names the params key of its threshold. A training source whose pairs are
mostly not in the mix's languages (`clean.langid`) fails with a check that says so, and says when
its two sides look swapped.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import IO

import numpy as np

from nmt.config.data import DataConfig, ValidateConfig
from nmt.config.mix import MixSource
from nmt.data.blind import index_blind
from nmt.data.chunks import CHUNK_LINES, Skips
from nmt.data.cleaning import REPEATED, Cleaner, Mask, pair_digests, row_rules
from nmt.data.decontaminate import Decontaminator
from nmt.data.formats import MALFORMED, source_chunks
from nmt.errors import DataError
from nmt.files.atomic import atomic_open
from nmt.files.lines import split_file
from nmt.gates.gate import Gate

log = logging.getLogger(__name__)

OVERLAP = "in a dev or test set"  # decontamination's count
WRONG_LANGUAGE = "wrong language"  # the langid rule's count (nmt.data.cleaning)
LANGUAGE_SAMPLE = 200  # pairs of a source read again to say which way its languages are wrong


def _uniform(d: np.ndarray, high: bool) -> np.ndarray:
    """A draw in [0, 1) from a pair's digest: its low 32 bits pick the dev share, its high ones the
    fraction of a weight, so both are fixed by the pair's text, not by its position."""
    bits = (d >> np.uint64(32)) if high else (d & np.uint64(0xFFFFFFFF))
    return bits.astype(np.float64) / 2.0**32


def row_checks(a: list[str], b: list[str], langs: tuple[str, str], cfg: ValidateConfig, counts: Counter) -> Mask:
    """validate's row-level rules (`row_rules`: empty side, over max_words, length ratio), a row counted
    under the first it fails, by the validate report's labels."""
    words = {lang: np.fromiter((len(s.split()) for s in side), dtype=np.int64, count=len(side))
             for lang, side in zip(langs, (a, b))}
    dropped = np.zeros(len(a), dtype=bool)
    for name, bad in row_rules(words, cfg.max_words, cfg.max_length_ratio).items():
        new = bad & ~dropped
        counts[name] += int(new.sum())
        dropped |= new
    return dropped


@dataclasses.dataclass
class SourceTally:
    """What happened to one source's pairs."""

    source: MixSource
    pairs_in: int = 0
    dropped: Counter = dataclasses.field(default_factory=Counter)  # rule -> pairs (first rule failed)
    to_val: int = 0
    written: int = 0  # lines written to its split (weights included)
    read: Counter = dataclasses.field(default_factory=Counter)  # a systems reader's notes (nmt.data.systems)
    first_skipped: dict[str, list[int]] = dataclasses.field(default_factory=dict)  # kind -> first line numbers

    def stats(self) -> dict:
        s = self.source
        out = sum(self.dropped.values())
        return {"corpus": s.corpus, "split": s.split, "role": s.role, "weight": s.weight,
                "pairs_in": self.pairs_in, "dropped": dict(sorted(self.dropped.items())),
                "to_val": self.to_val, "pairs_out": self.pairs_in - out - self.to_val, "written": self.written,
                **({"read": dict(self.read)} if self.read else {}),
                **({"first_lines_skipped": self.first_skipped} if self.first_skipped else {})}

    @property
    def malformed(self) -> int:
        return sum(v for k, v in self.dropped.items() if k.startswith(MALFORMED))


class MixWriter:
    """Runs the three passes of a mix into a staged folder."""

    def __init__(self, data: DataConfig, cfg: ValidateConfig, raw_dir: Path, out_dir: Path, gate: Gate,
                 identify: Callable[[list[str], str], Mask] | None) -> None:
        assert data.mix is not None
        self.data, self.cfg, self.raw_dir, self.out_dir, self.gate = data, cfg, Path(raw_dir), out_dir, gate
        self.langs = data.mix.languages
        self.cleaner = Cleaner(cfg.clean, self.langs, identify)
        self.holdout_cleaner = Cleaner(dataclasses.replace(cfg.clean, dedupe=False), self.langs, identify)
        self.decon = Decontaminator(cfg.decontaminate, self.langs) if cfg.decontaminate.enabled else None
        self.tallies = {s.label: SourceTally(s) for s in data.mix.sources}

    def chunks(self, src: MixSource, count_skipped: bool = True) -> Iterator[tuple[list[str], list[str]]]:
        """The source's pairs, a chunk at a time. TMX units without both languages are counted in the
        source's tally (in and dropped) when `count_skipped`: once per source, not per pass."""
        corpus = self.data.corpora[src.corpus]
        skipped = Skips()
        notes = self.tallies[src.label].read if count_skipped else Counter()
        folder = self.data.raw_dir(self.raw_dir, src.corpus)
        for _, a, b in source_chunks(corpus.source(src.split), folder, self.langs, CHUNK_LINES, skipped, notes):
            yield a, b
        if count_skipped:
            tally = self.tallies[src.label]
            tally.dropped.update(skipped)
            tally.pairs_in += sum(skipped.values())
            tally.first_skipped.update(skipped.lines)

    def _open(self, stack: ExitStack, split: str) -> dict[str, IO]:
        return {lang: stack.enter_context(atomic_open(split_file(self.out_dir, split, lang), "w"))
                for lang in self.langs}

    @staticmethod
    def _write(out: dict[str, IO], langs: tuple[str, str], a: list[str], b: list[str]) -> None:
        out[langs[0]].write("".join(f"{s}\n" for s in a))
        out[langs[1]].write("".join(f"{s}\n" for s in b))

    def run(self) -> None:
        assert self.data.mix is not None
        sources = self.data.mix.sources
        if self.decon is not None and self.cfg.decontaminate.blind:  # source-only sets, indexed first
            self.gate.stats["blind"] = index_blind(self.decon, self.cfg.decontaminate.blind, self.langs)
        for src in (s for s in sources if s.role == "test"):
            with ExitStack() as stack:
                self._copy(src, self._open(stack, src.label))
        with ExitStack() as stack:
            val = self._open(stack, "val")
            for src in (s for s in sources if s.role == "dev"):
                self._copy(src, val)
            for src in (s for s in sources if s.role == "train" and s.dev_share > 0):
                self._holdout(src, val)
        with ExitStack() as stack:
            train = self._open(stack, "train")
            for src in (s for s in sources if s.role == "train"):
                self._train(src, train)
        self._report()

    def _copy(self, src: MixSource, out: dict[str, IO]) -> None:
        """A dev or test source, every pair as published; indexed for decontamination."""
        tally = self.tallies[src.label]
        for a, b in self.chunks(src):
            self._write(out, self.langs, a, b)
            tally.pairs_in += len(a)
            tally.written += len(a)
            if self.decon is not None:
                self.decon.add(a, b, src.label)

    def _holdout(self, src: MixSource, val: dict[str, IO]) -> None:
        """The clean pairs of a train source whose digest falls in its dev share, to val; the rules
        it fails are counted in the source's tally (the train pass skips these pairs)."""
        tally = self.tallies[src.label]
        for a, b in self.chunks(src, count_skipped=False):
            idx = np.flatnonzero(_uniform(pair_digests(a, b), high=False) < src.dev_share)
            sa, sb = [a[i] for i in idx], [b[i] for i in idx]
            rows = row_checks(sa, sb, self.langs, self.cfg, tally.dropped)
            dropped = self.holdout_cleaner.apply(sa, sb, rows, tally.dropped)
            if self.decon is not None:  # a test sentence must not reach val either (the test sets are indexed)
                hits = self.decon.check(sa, sb, dropped)
                tally.dropped[OVERLAP] += int(hits.sum())
                dropped |= hits
            keep = ~dropped
            ka, kb = [x for x, k in zip(sa, keep) if k], [y for y, k in zip(sb, keep) if k]
            self._write(val, self.langs, ka, kb)
            tally.to_val += len(ka)
            if self.decon is not None:
                self.decon.add(ka, kb, f"{src.label} (dev share)")

    def _train(self, src: MixSource, train: dict[str, IO]) -> None:
        """A train source through the rules, the duplicate and decontamination look-ups; the kept
        pairs written `weight` times. Pairs of its dev share were handled by `_holdout`."""
        tally = self.tallies[src.label]
        for a, b in self.chunks(src):
            tally.pairs_in += len(a)
            d = pair_digests(a, b)
            live = np.flatnonzero(_uniform(d, high=False) >= src.dev_share)
            a, b, d = [a[i] for i in live], [b[i] for i in live], d[live]
            dropped = self.cleaner.apply(a, b, row_checks(a, b, self.langs, self.cfg, tally.dropped), tally.dropped, d)
            if self.decon is not None:
                hits = self.decon.check(a, b, dropped)
                tally.dropped[OVERLAP] += int(hits.sum())
                dropped |= hits
            copies = np.where(dropped, 0, np.floor(src.weight) + (_uniform(d, high=True) < src.weight % 1))
            for n in range(1, int(copies.max(initial=0)) + 1):  # pair i is written copies[i] times
                idx = np.flatnonzero(copies >= n)
                self._write(train, self.langs, [a[i] for i in idx], [b[i] for i in idx])
                tally.written += len(idx)

    def _report(self) -> None:
        """Per-source stats and gates, the decontamination counts, the split sizes."""
        cfg, gate = self.cfg, self.gate
        gate.stats["sources"] = {label: t.stats() for label, t in self.tallies.items()}
        for i, (label, t) in enumerate(self.tallies.items()):
            src, n = t.source, max(t.pairs_in, 1)
            most_filtered, filtered_key = self._threshold(i, "max_filtered_rate")
            malformed = (f"; {t.malformed} malformed lines skipped, first: "
                         + "; ".join(f"{k.removeprefix(MALFORMED)} at {', '.join(map(str, lines))}"
                                     for k, lines in t.first_skipped.items() if k.startswith(MALFORMED))
                         if t.malformed else "")
            if t.malformed:
                log.warning("%s: %d malformed lines skipped%s", label, t.malformed, malformed.split("skipped", 1)[1])
            if src.role != "train":
                least = cfg.min_pairs
                gate.check(f"{label}: pairs", t.written >= least, f">= {least}", str(t.written), "validate.min_pairs")
                if t.malformed:
                    gate.check(f"{label}: malformed lines", t.malformed / n <= most_filtered,
                               f"share <= {most_filtered:g}", f"{t.malformed} of {t.pairs_in}{malformed}", filtered_key)
                continue
            rules = sum(v for k, v in t.dropped.items() if k not in (REPEATED, OVERLAP))
            gate.check(f"{label}: dropped by the rules", rules / n <= most_filtered, f"share <= {most_filtered:g}",
                       f"{rules} of {t.pairs_in} ({rules / n:.3%}){malformed}", filtered_key)
            if t.dropped.get(WRONG_LANGUAGE, 0) > n / 2:
                self._wrong_languages(src, t)
            dup = t.dropped.get(REPEATED, 0)
            most, key = self._threshold(i, "max_duplicate_rate")
            gate.check(f"{label}: repeated pairs", dup / n <= most, f"share <= {most:g}",
                       f"{dup} of {t.pairs_in} ({dup / n:.3%})", key)
        train = sum(t.written for t in self.tallies.values() if t.source.role == "train")
        gate.check("train: pairs", train >= cfg.min_train_pairs, f">= {cfg.min_train_pairs}", str(train),
                   "validate.min_train_pairs")
        val = sum(t.written if t.source.role == "dev" else t.to_val for t in self.tallies.values())
        gate.check("val: pairs", val >= cfg.min_pairs, f">= {cfg.min_pairs}", str(val), "validate.min_pairs")
        gate.stats["splits"] = {"train": train, "val": val, **{label: t.written for label, t in self.tallies.items()
                                                                if t.source.role == "test"}}
        if self.decon is not None:
            per_set = self.decon.per_set()
            gate.stats["decontamination"] = per_set
            overlap = sum(v for c in per_set.values() for v in c.values())
            if not cfg.decontaminate.remove:
                gate.check("train: no dev or test sentence", overlap == 0, "no overlap (decontaminate.remove is "
                           "false)", f"{overlap} training pairs overlap: {per_set}")


    def _threshold(self, i: int, name: str) -> tuple[float, str]:
        """The source's own `name` (max_filtered_rate, max_duplicate_rate) or validate's, with its params key."""
        assert self.data.mix is not None
        own = getattr(self.data.mix.sources[i], name)
        if own is None:
            return getattr(self.cfg, name), f"validate.{name}"
        return own, f"data.mixes.{self.data.corpus}.sources[{i}].{name}"

    def _wrong_languages(self, src: MixSource, t: SourceTally) -> None:
        """A training source mostly dropped by the language check: a failing check that says so, and
        whether its two sides look swapped (each side reads as the other language), on a sample."""
        (la, lb), identify = self.langs, self.cleaner.identify
        assert identify is not None  # the langid rule counted the drops
        a, b = next(iter(self.chunks(src, count_skipped=False)), ([], []))
        a, b = a[:LANGUAGE_SAMPLE], b[:LANGUAGE_SAMPLE]
        share = {(side, lang): float(identify(texts, lang).mean()) if texts else 0.0
                 for side, texts in ((la, a), (lb, b)) for lang in (la, lb)}  # share NOT in `lang`
        swapped = share[la, la] > 0.5 and share[lb, lb] > 0.5 and share[la, lb] < 0.5 and share[lb, la] < 0.5
        hint = (f"the two sides look swapped (the {la} side reads as {lb} and the {lb} side as {la}): swap the "
                f"languages' columns or files of {src.split}" if swapped else
                f"of its first {len(a)} pairs, {share[la, la]:.0%} of the {la} side are not {la} and "
                f"{share[lb, lb]:.0%} of the {lb} side are not {lb}: is the corpus in {la} and {lb}?")
        wrong = t.dropped[WRONG_LANGUAGE]
        log.warning("%s: %d of %d pairs are not in %s and %s; %s", src.label, wrong, t.pairs_in, la, lb, hint)
        self.gate.check(f"{src.label}: in {la} and {lb}", False, f"most pairs in {la} and {lb}",
                        f"{wrong} of {t.pairs_in} pairs failed the language check; {hint}",
                        f"data.corpora.{src.corpus}.splits.{src.split}")


def validate_mix(data: DataConfig, cfg: ValidateConfig, raw_dir: Path, out_dir: Path, gate: Gate,
                 identify: Callable[[list[str], str], Mask] | None) -> None:
    """Write the mix's splits into `out_dir` (a staged folder), recording the gate's checks."""
    try:
        MixWriter(data, cfg, raw_dir, out_dir, gate, identify).run()
    except DataError as exc:
        gate.check("sources readable", False, "every source file readable, as its format says", str(exc))
