"""Stage 2, validate: the gate on raw data, and the cleaned corpus it lets through.

For every split the two language files must be valid UTF-8 with equal line counts
(corpus-level: a mismatch fails the stage, naming both files and counts). Each pair is
then measured (words per side, length ratio, duplicates) and a Great Expectations suite
checks the distribution. Row-level problems (an empty side, too many words, an extreme
length ratio) are dropped from the splits in `validate.filter_splits` (train by default;
test sets stay intact) and counted in the report; corpus-level problems (too few pairs,
too many duplicates, too many filtered rows) fail the gate and nothing is written.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nmt.command import arg, stage_main
from nmt.config.data import DataConfig, ValidateConfig
from nmt.errors import DataError
from nmt.files.atomic import staged_dir
from nmt.files.lines import read_lines, split_file, write_lines
from nmt.gates.gate import Gate

log = logging.getLogger(__name__)

REPORT_NAME = "raw"


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
        df[f"{lang}_words"] = df[lang].str.split().str.len()
    wa, wb = df[f"{a}_words"] + 1, df[f"{b}_words"] + 1
    df["length_ratio"] = wa.where(wa > wb, wb) / wb.where(wa > wb, wa)
    df["pair"] = df[a] + "\t" + df[b]
    return df


def row_problems(df, langs: tuple[str, str], cfg: ValidateConfig):
    """Boolean Series per problem: True where a row has that problem."""
    problems = {}
    for lang in langs:
        problems[f"empty {lang}"] = df[f"{lang}_words"] == 0
        problems[f"{lang} over {cfg.max_words} words"] = df[f"{lang}_words"] > cfg.max_words
    problems[f"length ratio over {cfg.max_length_ratio:g}"] = df["length_ratio"] > cfg.max_length_ratio
    return problems


def _expectations(split: str, langs: tuple[str, str], cfg: ValidateConfig) -> list:
    import great_expectations as gx

    mostly = 1.0 - cfg.max_filtered_rate
    min_rows = cfg.min_train_pairs if split == "train" else cfg.min_pairs
    exps = [("pairs", gx.expectations.ExpectTableRowCountToBeBetween(min_value=min_rows))]
    for lang in langs:
        exps.append((f"{lang} words per sentence", gx.expectations.ExpectColumnValuesToBeBetween(
            column=f"{lang}_words", min_value=1, max_value=cfg.max_words, mostly=mostly)))
    exps.append(("length ratio", gx.expectations.ExpectColumnValuesToBeBetween(
        column="length_ratio", min_value=1.0, max_value=cfg.max_length_ratio, mostly=mostly)))
    if split == "train":
        exps.append(("unique pairs", gx.expectations.ExpectColumnProportionOfUniqueValuesToBeBetween(
            column="pair", min_value=1.0 - cfg.max_duplicate_rate)))
    return exps


def check_split(gate: Gate, data: DataConfig, cfg: ValidateConfig, raw_dir: Path, split: str):
    """Gate one split; return its filtered {lang: lines}, or None when it failed corpus-level."""
    files = {lang: raw_dir / name for lang, name in data.active.splits[split].items()}
    lines: dict[str, list[str]] = {}
    for lang, path in files.items():
        try:
            lines[lang] = read_lines(path)
        except DataError as exc:
            gate.check(f"{split}: {path.name} readable", False, "an existing, valid UTF-8 file", str(exc))
            return None
    (la, pa), (lb, pb) = files.items()
    counts = f"{pa.name}: {len(lines[la])} lines, {pb.name}: {len(lines[lb])} lines"
    if not gate.check(f"{split}: aligned", len(lines[la]) == len(lines[lb]), "equal line counts", counts):
        return None
    langs = (la, lb)
    df = pair_frame(lines)
    ok = gate.expect(split, df, _expectations(split, langs, cfg))
    problems = row_problems(df, langs, cfg)
    bad = df.index != df.index  # all False
    for mask in problems.values():
        bad = bad | mask
    n_bad = int(bad.sum())
    filtering = split in cfg.filter_splits
    gate.stats[split] = {
        "pairs": len(df),
        "pairs_kept": len(df) - (n_bad if filtering else 0),
        "row_problems": {name: int(mask.sum()) for name, mask in problems.items()},
        "rows_with_problems": n_bad,
        "filtered": filtering,
        "duplicate_pairs": int(df["pair"].duplicated().sum()),
    }
    rate = n_bad / max(len(df), 1)
    ok &= gate.check(f"{split}: rows with problems", rate <= cfg.max_filtered_rate,
                     f"share <= {cfg.max_filtered_rate:g}", f"{n_bad} of {len(df)} ({rate:.3%})")
    if not ok:
        return None
    if n_bad:
        log.warning("%s: %d of %d pairs have row-level problems (%s)", split, n_bad, len(df),
                    "dropped" if filtering else "kept: not in validate.filter_splits")
    keep = df[~bad] if filtering else df
    return {lang: keep[lang].tolist() for lang in langs}


def validate_corpus(data: DataConfig, cfg: ValidateConfig, raw_dir: Path, out_dir: Path, report_dir: Path) -> Gate:
    """Run the raw-data gate on every split; on success replace `out_dir` with the clean splits."""
    gate = Gate(REPORT_NAME)
    gate.stats["corpus"] = data.corpus
    clean = {split: check_split(gate, data, cfg, Path(raw_dir), split) for split in data.active.splits}
    gate.finish(report_dir)  # raises GateError before anything is replaced
    with staged_dir(out_dir) as tmp:
        for split, by_lang in clean.items():
            for lang, lines in by_lang.items():
                write_lines(split_file(tmp, split, lang), lines)
    return gate


def run(params: ValidateParams, paths: ValidatePaths) -> Gate:
    return validate_corpus(params.data, params.validate, paths.raw, paths.out, paths.reports)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("validate", __doc__.split("\n\n")[0], ValidatePaths, ValidateParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
