"""Stage 3, tokenize: spaCy rule-based tokenization of every split, streamed in shards over all cores, cached per shard.

Output per split and language is `split.lang.tsv` in the format of `nmt.text.tokenizer`.

Each file is read in shards of `nmt.data.shards.SHARD_LINES` lines; the shards are tokenized in
a pool of `--workers` processes (default: every core this process may use), at most a few per
worker in flight, and written in order as they come back, so memory stays flat however large
the corpus and the output is byte-identical whatever the worker count.

Tokenizing is cached by content, per shard: the key hashes the shard's bytes, the tokenizer
settings, the spaCy version and the format version, so a re-run after a change that does not
touch tokenization (filters, vocab, model) is a copy, going back to earlier parameters is
served from the cache, a corpus grown by appended lines re-tokenizes only the shards that
changed, and a stale entry can never match. Entries are verified by their own SHA-256 before use.

The gate's corpus-level checks (rows equal input rows; tokens per sentence between 1, or 0
outside train, and `tokenize.max_tokens`) are exact, folded from per-shard counts; its Great
Expectations suites run on a frame of per-shard aggregates (rows, min and max tokens per shard).
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from nmt.command import arg, stage_main
from nmt.config.data import DataConfig, TokenizeConfig
from nmt.data import shards
from nmt.data.shards import ShardJob, read_shards, resolve_workers
from nmt.data.tokencache import FORMAT_VERSION, ShardResult, TokenCache, key_settings, ordered_results, shard_key
from nmt.files.atomic import staged_dir
from nmt.files.lines import read_bytes, split_file
from nmt.gates.gate import Gate
from nmt.text.tokenizer import SUFFIX

__all__ = ["FORMAT_VERSION", "TokenCache", "cache_key", "tokenize_corpus"]

log = logging.getLogger(__name__)

REPORT_NAME = "tokens"
GX_FRAME = ("per-shard aggregates: one row per shard (first_line, input_rows, rows, min_tokens, max_tokens), "
            "one suite per file; the rows and tokens-per-sentence checks are exact over every sentence, "
            "folded from per-shard counts")


@dataclass(frozen=True)
class TokenizeParams:
    """The params.yaml sections the tokenize stage reads (only these: nmt.config.loader.load_sections)."""

    data: DataConfig  # the corpus: splits, languages
    tokenize: TokenizeConfig  # spaCy tokenization


@dataclass(frozen=True)
class TokenizePaths:
    inp: Path = arg("cleaned corpus directory (data/validated)", flag="--in")
    out: Path = arg("output directory for the .tsv token files (data/tokens)")
    reports: Path = arg("directory for gate reports (reports/validation)")
    cache_dir: Path = arg("content-addressed tokenization cache", default=Path(".cache/tokenize"))
    no_cache: bool = arg("neither read nor write the cache", default=False)
    # the shared parser types every valued option as a Path: `resolve_workers` reads it as a number
    workers: int = arg("processes tokenizing shards; 0: every core this process may use", default=0)


def cache_key(input_path: Path, lang: str, cfg: TokenizeConfig) -> str:
    """Cache key of a file's whole content as one shard: the key of its only shard when it has at most
    `SHARD_LINES` lines (reads the whole file: for tests and tools, not the stage)."""
    return shard_key(read_bytes(input_path), lang, key_settings(cfg.lowercase))


@dataclass(frozen=True)
class _File:
    """A marker in the stream of shard jobs: a file starts (end=False) or has had all its shards."""

    name: str  # split.lang
    end: bool


@dataclass
class _Tally:
    """One file's counts, folded shard by shard."""

    input_rows: int = 0
    histogram: Counter[int] = field(default_factory=Counter)  # tokens per sentence -> sentences
    shards: list[dict[str, int]] = field(default_factory=list)  # the per-shard aggregates
    hits: int = 0
    corrupt: list[str] = field(default_factory=list)  # damaged cache entries ignored and rebuilt, by path

    def add(self, job: ShardJob, result: ShardResult) -> None:
        rows = sum(result.histogram.values())
        self.input_rows += job.rows
        self.histogram.update(result.histogram)
        self.hits += result.hit
        self.corrupt += [result.corrupt] if result.corrupt else []
        self.shards.append({"first_line": job.first_line, "input_rows": job.rows, "rows": rows,
                            "min_tokens": min(result.histogram, default=0),
                            "max_tokens": max(result.histogram, default=0)})


def _stream(data: DataConfig, in_dir: Path, shard_lines: int) -> Iterator[ShardJob | _File]:
    for split in data.splits:
        for lang in data.languages:
            name = f"{split}.{lang}"
            yield _File(name, end=False)
            yield from read_shards(split_file(in_dir, split, lang), lang, shard_lines)
            yield _File(name, end=True)


def _gate_file(gate: Gate, name: str, tally: _Tally, cfg: TokenizeConfig) -> None:
    import great_expectations as gx
    import pandas as pd

    hist, lo, hi = tally.histogram, 1 if name.startswith("train.") else 0, cfg.max_tokens
    rows = sum(hist.values())
    gate.stats[name] = {"sentences": rows, "tokens": sum(n * c for n, c in hist.items()),
                        "min_tokens": min(hist, default=0), "max_tokens": max(hist, default=0),
                        "shards": len(tally.shards), "cache_hits": tally.hits}
    # exact over every sentence; train must not contain empty sentences (validate drops them), test sets keep theirs
    gate.check(f"{name}: rows equal input rows", rows == tally.input_rows, f"{tally.input_rows} rows (the input's)",
               str(rows))
    outside = {n: c for n, c in sorted(hist.items()) if not lo <= n <= hi}
    n_out = sum(outside.values())
    observed = (f"{n_out} of {rows} rows outside ({100 * n_out / rows:.3g}%), e.g. "
                + ", ".join(str(n) for n in list(outside)[:5])) if outside else \
        f"{rows} rows, {min(hist, default=0)} to {max(hist, default=0)} tokens"
    gate.check(f"{name}: tokens per sentence", not outside,
               f"every sentence: min_value={lo} <= tokens <= max_value={hi} (exact, folded over shards)", observed)
    frame = pd.DataFrame(tally.shards, columns=["first_line", "input_rows", "rows", "min_tokens", "max_tokens"],
                         dtype="int64")
    gate.expect(f"{name}.shards", frame, [
        ("rows per shard equal input rows", gx.expectations.ExpectColumnPairValuesToBeEqual(
            column_A="rows", column_B="input_rows")),
        ("min tokens per shard", gx.expectations.ExpectColumnValuesToBeBetween(
            column="min_tokens", min_value=lo, max_value=hi)),
        ("max tokens per shard", gx.expectations.ExpectColumnValuesToBeBetween(
            column="max_tokens", min_value=lo, max_value=hi)),
    ])


def tokenize_corpus(data: DataConfig, cfg: TokenizeConfig, in_dir: Path, out_dir: Path,
                    report_dir: Path, cache_dir: Path | None, workers: object = 1) -> Gate:
    """Tokenize every split and language of the validated corpus into `out_dir`, gated, in `workers`
    processes (1: in this process; 0: every available core). The outputs are written shard by shard
    into a staged directory that replaces `out_dir` only after the gate passed."""
    gate, shard_lines, workers = Gate(REPORT_NAME), shards.SHARD_LINES, resolve_workers(workers)
    with staged_dir(out_dir) as tmp:
        stream = _stream(data, in_dir, shard_lines)
        with closing(ordered_results(stream, key_settings(cfg.lowercase), cache_dir, workers)) as results:
            tallies = _write(results, tmp, gate, cfg)  # closed on any error, so the pool stops
        hits, n_shards = sum(t.hits for t in tallies), sum(len(t.shards) for t in tallies)
        corrupt = [path for t in tallies for path in t.corrupt]  # found in pool processes too, whose log goes nowhere
        if corrupt:
            log.warning("%d damaged token cache entr%s ignored and rebuilt (a disk or copy fault?): %s", len(corrupt),
                        "y" if len(corrupt) == 1 else "ies", ", ".join(corrupt[:5]))
        gate.stats["cache"] = {"hits": hits, "misses": n_shards - hits, "dir": str(cache_dir),
                               "corrupt_rebuilt": corrupt}
        gate.stats["shards"] = {"lines_per_shard": shard_lines, "count": n_shards, "cache": "per shard",
                                "great_expectations_on": GX_FRAME}
        log.info("tokenized %d files in %d shards of up to %d lines (%d from cache) with %d worker(s)",
                 len(tallies), n_shards, shard_lines, hits, workers)
        gate.finish(report_dir)
    return gate


def _write(results: Iterator[tuple[ShardJob | _File, ShardResult | None]], out_dir: Path, gate: Gate,
           cfg: TokenizeConfig) -> list[_Tally]:
    """Append each shard's tokens to its file in `out_dir` as results come; gate each file once it is complete."""
    tallies: list[_Tally] = []
    out = None
    with tqdm(desc="tokenize", unit="sent", disable=None, leave=False) as bar:
        try:
            for item, result in results:
                if isinstance(item, _File) and not item.end:
                    tallies.append(_Tally())
                    out = open(out_dir / f"{item.name}{SUFFIX}", "wb")
                    bar.set_postfix_str(item.name)
                elif isinstance(item, _File):
                    assert out is not None
                    out.close()
                    _gate_file(gate, item.name, tallies[-1], cfg)
                else:
                    assert out is not None and result is not None
                    out.write(result.data)
                    tallies[-1].add(item, result)
                    bar.update(item.rows)
        finally:
            if out is not None:
                out.close()
    return tallies


def run(params: TokenizeParams, paths: TokenizePaths) -> Gate:
    cache = None if paths.no_cache else paths.cache_dir
    return tokenize_corpus(params.data, params.tokenize, paths.inp, paths.out, paths.reports, cache, paths.workers)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("tokenize", __doc__.split("\n\n")[0], TokenizePaths, TokenizeParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
