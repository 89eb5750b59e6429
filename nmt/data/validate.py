"""Stage 2, validate: the gate on raw data, and the cleaned corpus it lets through.

For every split the two language files must be valid UTF-8 with equal line counts
(corpus-level: a mismatch fails the stage, naming both files and counts). Each pair is
then measured (words per side, length ratio, duplicates) and a Great Expectations suite
checks the distribution. Row-level problems (an empty side, too many words, an extreme
length ratio) are dropped from the splits in `validate.filter_splits` (train by default;
test sets stay intact) and counted in the report; corpus-level problems (too few pairs,
too many duplicates, too many filtered rows) fail the gate and nothing is written.

The stage streams, in time linear and memory flat in the corpus size. A split's two
files are read side by side in chunks of `CHUNK_LINES` lines (`nmt.data.shards.read_shards`,
plain or gzip); each chunk pair is measured, filtered and appended to the output in a staged
directory, which replaces `--out` only once the whole gate has passed. What needs a whole split
stays exact:

- line counts, row-problem counts and shares are summed over chunks; a bad line's error names
  its absolute line number;
- the pair count is a GX expectation on per-chunk aggregates (one row per chunk, summed);
- duplicates are counted from a 16-byte BLAKE2b digest of every pair, kept in one buffer and
  sorted once at the end: 16 bytes of memory per pair (16 MB per million pairs, twice that while
  sorting), the only memory that grows with the corpus; two distinct pairs collide with
  probability below pairs^2 / 2^129.

The distribution expectations (words per sentence, length ratio, with their `mostly`) run on a
uniform reservoir sample of `SAMPLE_ROWS` rows per split (algorithm R, fixed seed), which is
every row, in order, of a split no larger than that. The report's `stats[split]["expectations_on"]`
says what each check ran on.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nmt import ranking
from nmt.command import arg, stage_main
from nmt.config.data import DataConfig, ValidateConfig
from nmt.data.chunks import CHUNK_LINES, Digests, Reservoir, Skips, Unreadable, side_by_side
from nmt.data.cleaning import row_rules, rules_for_pair
from nmt.data.formats import MALFORMED, source_chunks
from nmt.errors import ConfigError, DataError
from nmt.files.atomic import atomic_open, staged_dir
from nmt.files.lines import split_file
from nmt.gates.gate import Gate
from nmt.text.languages import unknown_to_spacy

log = logging.getLogger(__name__)

REPORT_NAME = "raw"
SAMPLE_ROWS = 10_000  # rows per split the distribution expectations see (all rows of a smaller split)
SAMPLE_SEED = 29  # the reservoir's seed: the same corpus gives the same sample and report
DIGEST_BYTES = 16  # per pair, for the exact duplicate count


@dataclass(frozen=True)
class ValidateParams:
    """The params.yaml sections the validate stage reads (only these: nmt.config.loader.load_sections)."""

    data: DataConfig  # the corpus: splits, files, direction
    validate: ValidateConfig  # the raw-data gate


@dataclass(frozen=True)
class ValidatePaths:
    raw: Path = arg("downloaded corpus directory (data/raw)")
    out: Path = arg("output directory for the cleaned splits (data/validated)")
    reports: Path = arg("directory for gate reports (reports/validation)")


def pair_frame(lines: dict[str, list[str]]):
    """A DataFrame with one row per sentence pair and the measures the gate checks."""
    import pandas as pd

    (a, sa), (b, sb) = lines.items()
    df = pd.DataFrame({a: sa, b: sb}, dtype=object)  # object even when empty, for .str
    for lang in (a, b):
        df[f"{lang}_words"] = df[lang].str.split().str.len()  # type: ignore[misc]  # pandas-stubs: .str of lists
    wa, wb = df[f"{a}_words"] + 1, df[f"{b}_words"] + 1
    df["length_ratio"] = wa.where(wa > wb, wb) / wb.where(wa > wb, wa)
    df["pair"] = df[a] + "\t" + df[b]
    return df


def row_problems(df, langs: tuple[str, str], cfg: ValidateConfig):
    """Boolean Series per problem: True where a row has that problem."""
    return row_rules({lang: df[f"{lang}_words"] for lang in langs}, cfg.max_words, cfg.max_length_ratio)


@dataclass
class SplitTally:
    """One split's measures, folded chunk by chunk."""

    langs: tuple[str, str]
    problems: dict[str, int]  # problem -> rows with it
    rows_with_problems: int = 0
    chunks: list[dict[str, int]] = field(default_factory=list)  # per-chunk aggregates: first_line, pairs
    digests: Digests = field(default_factory=lambda: Digests(DIGEST_BYTES))  # of every pair: the duplicates
    sample: Reservoir = field(default_factory=lambda: Reservoir(SAMPLE_ROWS, SAMPLE_SEED))

    def add(self, df, problems: dict[str, Any]) -> Any:
        """Fold one chunk's `pair_frame` and `row_problems`; return its rows-with-problems mask."""
        bad = df.index != df.index  # all False
        for name, mask in problems.items():
            self.problems[name] += int(mask.sum())
            bad = bad | mask.to_numpy()
        self.rows_with_problems += int(bad.sum())
        self.chunks.append({"first_line": self.digests.count + 1, "pairs": len(df)})
        self.digests.add(df["pair"])
        a, b = self.langs
        self.sample.extend([df[f"{a}_words"].tolist(), df[f"{b}_words"].tolist(), df["length_ratio"].tolist()])
        return bad

    def sample_frame(self):
        import pandas as pd

        (a, b), (wa, wb, ratio) = self.langs, self.sample.columns(3)
        return pd.DataFrame({f"{a}_words": pd.Series(wa, dtype="int64"), f"{b}_words": pd.Series(wb, dtype="int64"),
                             "length_ratio": pd.Series(ratio, dtype="float64")})

    def chunk_frame(self):
        import pandas as pd

        return pd.DataFrame(self.chunks or [{"first_line": 1, "pairs": 0}], columns=["first_line", "pairs"],
                            dtype="int64")

    def expectations_on(self) -> dict[str, str]:
        n, size = self.sample.seen, self.sample.size
        sample = (f"all {n} rows, in order (a reservoir of up to {size} rows holds the whole split)" if n <= size
                  else f"reservoir sample of {size} of {n} rows (algorithm R, seed {SAMPLE_SEED})")
        return {"pairs": f"per-chunk aggregates: {len(self.chunks)} chunk(s) of up to {CHUNK_LINES} lines, "
                         "pair counts summed (exact)",
                "words per sentence, length ratio": sample,
                "duplicate_pairs, unique pairs": f"exact: a {DIGEST_BYTES}-byte BLAKE2b digest of every pair, "
                                                 "sorted once at the end"}


def _expectations(split: str, langs: tuple[str, str], cfg: ValidateConfig) -> tuple[list, list]:
    """(expectations on the per-chunk aggregates, expectations on the sample)."""
    import great_expectations as gx

    mostly = 1.0 - cfg.max_filtered_rate
    min_rows = cfg.min_train_pairs if split == "train" else cfg.min_pairs
    chunks = [("pairs", gx.expectations.ExpectColumnSumToBeBetween(column="pairs", min_value=min_rows))]
    sample = []
    for lang in langs:
        sample.append((f"{lang} words per sentence", gx.expectations.ExpectColumnValuesToBeBetween(
            column=f"{lang}_words", min_value=1, max_value=cfg.max_words, mostly=mostly)))
    sample.append(("length ratio", gx.expectations.ExpectColumnValuesToBeBetween(
        column="length_ratio", min_value=1.0, max_value=cfg.max_length_ratio, mostly=mostly)))
    return chunks, sample


def _scan(chunks: Iterable[tuple[list[str], list[str]]], tally: SplitTally, cfg: ValidateConfig, filtering: bool,
          out: dict[str, Any]) -> dict[str, int]:
    """Read, measure, filter and write a split chunk by chunk; its line count per language.
    Rows are folded only while the chunks are aligned (a misaligned split fails anyway)."""
    (la, lb) = tally.langs
    counts, aligned = dict.fromkeys(tally.langs, 0), True
    for ca, cb in chunks:
        counts[la] += len(ca)
        counts[lb] += len(cb)
        aligned = aligned and len(ca) == len(cb)
        if not aligned:
            continue  # only counted from here
        df = pair_frame({la: ca, lb: cb})
        bad = tally.add(df, row_problems(df, tally.langs, cfg))
        keep = ~bad if filtering and bad.any() else None
        for lang, lines in ((la, ca), (lb, cb)):
            rows = lines if keep is None else [s for s, k in zip(lines, keep) if k]
            out[lang].write("".join(f"{s}\n" for s in rows))
    return counts


def check_split(gate: Gate, data: DataConfig, cfg: ValidateConfig, raw_dir: Path, split: str, out_dir: Path) -> bool:
    """Gate one split, writing its filtered files into `out_dir` as it goes; False when it failed."""
    source = data.active.source(split)
    langs = data.languages
    (la, lb) = langs
    tally = SplitTally(langs, dict.fromkeys(row_problems(pair_frame({la: [], lb: []}), langs, cfg), 0))
    filtering = split in cfg.filter_splits
    skips = Skips()  # the other formats' malformed lines (TSV: too few columns, not UTF-8), skipped and counted
    if source.format == "lines":  # two files read side by side: a misalignment is counted, not raised
        files = {lang: raw_dir / source.files[lang] for lang in langs}
        chunks = side_by_side(files, CHUNK_LINES)
        observed = f"{files[la].name}: {{}} lines, {files[lb].name}: {{}} lines"
    else:  # the other formats' readers (nmt.data.formats) raise on a misalignment
        chunks = ((a, b) for _, a, b in source_chunks(source, raw_dir, langs, CHUNK_LINES, skips))
        observed = f"{', '.join(source.names)}: {{}} pairs"
    try:
        with ExitStack() as stack:
            out = {lang: stack.enter_context(atomic_open(split_file(out_dir, split, lang), "w")) for lang in langs}
            counts = _scan(chunks, tally, cfg, filtering, out)
    except Unreadable as exc:
        gate.check(f"{split}: {exc.path.name} readable", False, "an existing, valid UTF-8 file", str(exc.error))
        return False
    except DataError as exc:
        gate.check(f"{split}: {', '.join(source.names)} readable", False, f"a valid {source.format} file", str(exc))
        return False
    observed = observed.format(counts[la], counts[lb])
    if not gate.check(f"{split}: aligned", counts[la] == counts[lb], "equal line counts", observed):
        return False
    malformed = sum(v for k, v in skips.items() if k.startswith(MALFORMED))
    n, n_bad = tally.digests.count + malformed, tally.rows_with_problems + malformed
    on_chunks, on_sample = _expectations(split, langs, cfg)
    ok = gate.expect(split, tally.chunk_frame(), on_chunks)
    ok &= gate.expect(split, tally.sample_frame(), on_sample)
    duplicates = tally.digests.repeated()
    if split == "train":
        unique, least = (n - duplicates) / n if n else 0.0, 1.0 - cfg.max_duplicate_rate
        # the repeated share against the rate, as the mix's gate compares it (1 - rate is not exact in floats)
        ok &= gate.check(f"{split}: unique pairs", bool(n) and ranking.within(duplicates / n, cfg.max_duplicate_rate),
                         f"share of distinct pairs >= {least:g} (exact)", f"{unique:.4g}",
                         "validate.max_duplicate_rate")
    gate.stats[split] = {
        "pairs": n,
        "pairs_kept": n - (n_bad if filtering else malformed),
        "row_problems": tally.problems,
        "rows_with_problems": n_bad,
        "filtered": filtering,
        "duplicate_pairs": duplicates,
        "expectations_on": tally.expectations_on(),
        **({"skipped": dict(skips), "first_lines_skipped": skips.lines} if skips else {}),
    }
    rate = n_bad / max(n, 1)
    ok &= gate.check(f"{split}: rows with problems", rate <= cfg.max_filtered_rate,
                     f"share <= {cfg.max_filtered_rate:g}", f"{n_bad} of {n} ({rate:.3%})",
                     "validate.max_filtered_rate")
    if ok and n_bad:
        log.warning("%s: %d of %d pairs have row-level problems (%s)", split, n_bad, n,
                    "dropped" if filtering else "kept: not in validate.filter_splits")
    return ok


def provenance(data: DataConfig) -> dict[str, Any]:
    """Per corpus read: its licence and the SHA-256 of every file fetched (the model card copies it);
    a mix's licence note too."""
    out: dict[str, Any] = {name: {"licence": data.corpora[name].licence,
                                  "files": {f.name: f.sha256 for f in data.corpora[name].files}}
                           for name in data.used_corpora()}
    if data.mix is not None and data.mix.licence_note:
        out["note"] = data.mix.licence_note
    return out


def validate_corpus(data: DataConfig, cfg: ValidateConfig, raw_dir: Path, out_dir: Path, report_dir: Path) -> Gate:
    """Run the raw-data gate on every split (of a corpus, or of a mix: `nmt.data.mixing`), writing the
    clean splits into a staged directory that replaces `out_dir` only if the gate passes (a failed
    gate leaves `out_dir` as it was)."""
    gate = Gate(REPORT_NAME)
    gate.stats["corpus"] = data.corpus
    gate.stats["provenance"] = provenance(data)
    if data.mix is None and (cfg.clean.any_rule or cfg.decontaminate.enabled):
        raise ConfigError(f"validate.clean and validate.decontaminate work on a mix of sources with roles; "
                          f"{data.corpus!r} is a single corpus: list it under data.mixes (docs/data.md) "
                          "or set them to {}")
    if missing := unknown_to_spacy(data.languages):
        key = f"data.{'mixes' if data.mix is not None else 'corpora'}.{data.corpus}.languages"
        raise ConfigError(f"{key}: spaCy has no tokenizer for {missing}: name languages by the ISO 639-1 codes "
                          "spaCy knows (https://spacy.io/usage/models#languages), e.g. fr, cs")
    clean, notes = rules_for_pair(cfg.clean, data.languages)
    if notes:  # what was left out and why, in the report's statistics and the log
        gate.stats["notes"] = notes
        for note in notes:
            log.warning("validate: %s", note)
    cfg = dataclasses.replace(cfg, clean=clean)
    with staged_dir(out_dir) as tmp:
        if data.mix is not None:
            from nmt.data.mixing import validate_mix

            identify = None
            if cfg.clean.langid:
                from nmt.text.langid import LanguageIdentifier

                ident = LanguageIdentifier.for_languages(data.languages)
                identify = lambda texts, lang: ident.mismatch(texts, lang, data.languages)  # noqa: E731
            validate_mix(data, cfg, Path(raw_dir), tmp, gate, identify)
        else:
            for split in data.active.splits:
                check_split(gate, data, cfg, Path(raw_dir), split, tmp)
        gate.finish(report_dir)  # raises GateError: the staged directory is discarded
    return gate


def run(params: ValidateParams, paths: ValidatePaths) -> Gate:
    return validate_corpus(params.data, params.validate, paths.raw, paths.out, paths.reports)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("validate", __doc__.split("\n\n")[0], ValidatePaths, ValidateParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
