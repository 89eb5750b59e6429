"""Stage 3, tokenize: spaCy rule-based tokenization with a content-addressed cache.

`spacy.blank(lang)` gives the same rule-based tokenizer as the `*_core_*_sm` models with
nothing to download. Output per split and language is `split.lang.tsv`, one sentence per
line: the tokens joined by single spaces, a TAB, then one flag per token ("1" when spaCy
saw whitespace after the token, "0" when not), so `detokenize()` restores the text.

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
from collections.abc import Callable, Iterable
from importlib.metadata import version
from pathlib import Path

from tqdm import tqdm

from nmt.atomic import atomic_open, staged_dir
from nmt.config import DataConfig, TokenizeConfig
from nmt.corpus import read_bytes, read_lines, split_file, split_lines
from nmt.errors import DataError
from nmt.gates import Gate

log = logging.getLogger(__name__)

FORMAT_VERSION = 1  # bump when the output format or normalisation changes
SUFFIX = ".tsv"
REPORT_NAME = "tokens"

Tokenized = tuple[list[str], str]  # (tokens, trailing-whitespace flags "1"/"0" per token)


def normalize(text: str) -> str:
    """Collapse every run of whitespace (tabs, NBSP, ...) to one space; strip the ends."""
    return " ".join(text.split())


def make_tokenizer(lang: str, lowercase: bool) -> Callable[[Iterable[str]], Iterable[Tokenized]]:
    """A function from raw sentences to (tokens, flags), using spacy.blank(lang)."""
    import spacy

    tokenizer = spacy.blank(lang).tokenizer

    def tokenize(texts: Iterable[str]) -> Iterable[Tokenized]:
        for doc in tokenizer.pipe((normalize(t) for t in texts), batch_size=1000):
            tokens = [t.lower_ if lowercase else t.text for t in doc]
            yield tokens, "".join("1" if t.whitespace_ else "0" for t in doc)

    return tokenize


def detokenize(tokens: list[str], flags: str) -> str:
    """Inverse of tokenization: tokens joined with the whitespace spaCy recorded."""
    return "".join(tok + (" " if f == "1" else "") for tok, f in zip(tokens, flags)).rstrip()


def format_line(tokens: list[str], flags: str) -> str:
    return " ".join(tokens) + "\t" + flags


def read_tokenized(path: Path) -> list[Tokenized]:
    """Read a `.tsv` tokens file back into (tokens, flags) pairs."""
    out = []
    for lineno, line in enumerate(read_lines(path), start=1):
        text, sep, flags = line.partition("\t")
        tokens = text.split(" ") if text else []
        if not sep or len(flags) != len(tokens) or "" in tokens or flags.strip("01"):
            raise DataError(f"{path}:{lineno}: malformed tokens line (expected tokens, TAB, one flag per token); "
                            "delete data/tokens and re-run the tokenize stage")
        out.append((tokens, flags))
    return out


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

