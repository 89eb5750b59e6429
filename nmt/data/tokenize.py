"""Stage 3, tokenize: spaCy rule-based tokenization of every split, with a content-addressed cache.

Output per split and language is `split.lang.tsv` in the format of `nmt.text.tokenizer`.

Tokenizing is cached by content: the key hashes the input bytes, the tokenizer settings,
the spaCy version and this file's format version, so a re-run after a change that does not
touch tokenization (filters, vocab, model) is a copy, going back to earlier parameters is
served from the cache, and a stale entry can never match. Entries are verified by their
own SHA-256 before use.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from tqdm import tqdm

from nmt.command import arg, stage_main
from nmt.config.data import DataConfig, TokenizeConfig
from nmt.files.atomic import atomic_open, staged_dir
from nmt.files.lines import read_bytes, split_file, split_lines
from nmt.gates.gate import Gate
from nmt.text.tokenizer import SUFFIX, format_line, make_tokenizer

log = logging.getLogger(__name__)

FORMAT_VERSION = 1  # bump when the output format or normalisation changes
REPORT_NAME = "tokens"


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


def cache_key(input_path: Path, lang: str, cfg: TokenizeConfig) -> str:
    """Content hash of everything that determines the tokenized output."""
    return _key(read_bytes(input_path), lang, cfg)


def _key(data: bytes, lang: str, cfg: TokenizeConfig) -> str:
    spec = {"input_sha256": hashlib.sha256(data).hexdigest(), "lang": lang,
            "lowercase": cfg.lowercase, "spacy": version("spacy"), "format": FORMAT_VERSION}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


class TokenCache:
    """A directory of `<key>.tsv` entries, each with a `<key>.sha256` integrity file."""

    def __init__(self, root: Path | None) -> None:
        self.root = Path(root) if root is not None else None

    def get(self, key: str) -> bytes | None:
        if self.root is None:
            return None
        entry, check = self.root / f"{key}{SUFFIX}", self.root / f"{key}.sha256"
        try:
            data, expected = entry.read_bytes(), check.read_text().strip()
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != expected:
            log.warning("token cache entry %s is corrupt; ignoring it", entry)
            return None
        return data

    def put(self, key: str, data: bytes) -> None:
        if self.root is None:
            return
        with atomic_open(self.root / f"{key}{SUFFIX}", "wb") as fh:
            fh.write(data)
        with atomic_open(self.root / f"{key}.sha256", "w") as fh:
            fh.write(hashlib.sha256(data).hexdigest() + "\n")


def tokenize_file(input_path: Path, lang: str, cfg: TokenizeConfig, cache: TokenCache) -> tuple[bytes, bool, int]:
    """Tokenized content of one file as bytes, whether it came from the cache, and the
    number of input lines (the file is read once)."""
    raw = read_bytes(input_path)
    lines = split_lines(raw, input_path)
    key = _key(raw, lang, cfg)
    cached = cache.get(key)
    if cached is not None:
        return cached, True, len(lines)
    tokenize = make_tokenizer(lang, cfg.lowercase)
    pairs = tokenize(tqdm(lines, desc=f"tokenize {input_path.name}", unit="sent", disable=None, leave=False))
    data = "".join(format_line(toks, flags) + "\n" for toks, flags in pairs).encode("utf-8")
    cache.put(key, data)
    return data, False, len(lines)


def _gate_file(gate: Gate, name: str, n_in: int, data: bytes, cfg: TokenizeConfig) -> None:
    import great_expectations as gx
    import pandas as pd

    lengths = [line.partition("\t")[0].count(" ") + 1 if line.partition("\t")[0] else 0
               for line in data.decode("utf-8").splitlines()]
    gate.stats[name] = {"sentences": len(lengths), "tokens": sum(lengths), "max_tokens": max(lengths, default=0)}
    gate.expect(name, pd.DataFrame({"n_tokens": lengths}), [
        ("rows equal input rows", gx.expectations.ExpectTableRowCountToEqual(value=n_in)),
        # train must not contain empty sentences (validate drops them); test sets keep theirs
        ("tokens per sentence", gx.expectations.ExpectColumnValuesToBeBetween(
            column="n_tokens", min_value=1 if name.startswith("train.") else 0, max_value=cfg.max_tokens)),
    ])


def tokenize_corpus(data: DataConfig, cfg: TokenizeConfig, in_dir: Path, out_dir: Path,
                    report_dir: Path, cache_dir: Path | None) -> Gate:
    """Tokenize every split and language of the validated corpus into `out_dir`, gated."""
    gate, cache = Gate(REPORT_NAME), TokenCache(cache_dir)
    outputs: dict[str, bytes] = {}
    hits = 0
    for split in data.active.splits:
        for lang in data.active.languages:
            src = split_file(in_dir, split, lang)
            content, hit, n_lines = tokenize_file(src, lang, cfg, cache)
            hits += hit
            name = f"{split}.{lang}"
            _gate_file(gate, name, n_lines, content, cfg)
            outputs[name + SUFFIX] = content
    gate.stats["cache"] = {"hits": hits, "misses": len(outputs) - hits, "dir": str(cache_dir)}
    log.info("tokenized %d files (%d from cache)", len(outputs), hits)
    gate.finish(report_dir)
    with staged_dir(out_dir) as tmp:
        for name, content in outputs.items():
            (tmp / name).write_bytes(content)
    return gate


def run(params: TokenizeParams, paths: TokenizePaths) -> Gate:
    cache = None if paths.no_cache else paths.cache_dir
    return tokenize_corpus(params.data, params.tokenize, paths.inp, paths.out, paths.reports, cache)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("tokenize", __doc__.split("\n\n")[0], TokenizePaths, TokenizeParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
