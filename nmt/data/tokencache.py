"""The tokenize stage's shard worker and its content-addressed cache.

Each shard is one unit of caching: its key hashes the shard's raw bytes with the tokenizer
settings (language, lowercase, spaCy version, `FORMAT_VERSION`), so a corpus that grows by
appended lines re-tokenizes only its last shard and the new ones; the key does not depend on
where the shard starts. An entry is `<key>.tsv` beside `<key>.sha256`, both written atomically,
and verified before use: a damaged entry is ignored, re-tokenized, rewritten, and named in the
`ShardResult`, so the stage's report says so even when the shard ran in a pool process, whose
log goes nowhere.

`ShardWorker` turns a `ShardJob` (nmt.data.shards) into a `ShardResult`: the tokens file's bytes
for the shard, whether they came from the cache, and a histogram of tokens per sentence (the gate
folds histograms, so its corpus-level checks stay exact).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, TypeVar

from nmt.data.shards import ShardJob, decode_shard, ordered_map
from nmt.files.atomic import atomic_open
from nmt.text.tokenizer import SUFFIX, format_line, make_tokenizer

log = logging.getLogger(__name__)

FORMAT_VERSION = 2  # bump when the output format or normalisation changes (2: cache entries are shards)

T = TypeVar("T")


def key_settings(lowercase: bool) -> dict[str, Any]:
    """What every shard key hashes besides the shard's bytes and language: the tokenizer
    settings, the spaCy version and `FORMAT_VERSION`."""
    return {"lowercase": lowercase, "spacy": version("spacy"), "format": FORMAT_VERSION}


def shard_key(data: bytes, lang: str, settings: dict[str, Any]) -> str:
    """Content hash of everything that determines a shard's tokenized output."""
    spec = {"input_sha256": hashlib.sha256(data).hexdigest(), "lang": lang, **settings}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


class TokenCache:
    """A directory of `<key>.tsv` entries, each with a `<key>.sha256` integrity file."""

    def __init__(self, root: Path | str | None) -> None:
        self.root = Path(root) if root is not None else None

    def read(self, key: str) -> tuple[bytes | None, str]:
        """(the entry's bytes, "") if present and whole; (None, its path) if damaged; (None, "") if absent."""
        if self.root is None:
            return None, ""
        entry, check = self.root / f"{key}{SUFFIX}", self.root / f"{key}.sha256"
        try:
            data, expected = entry.read_bytes(), check.read_text().strip()
        except OSError:
            return None, ""
        if hashlib.sha256(data).hexdigest() != expected:
            log.warning("token cache entry %s is corrupt; ignoring it", entry)
            return None, str(entry)
        return data, ""

    def get(self, key: str) -> bytes | None:
        return self.read(key)[0]

    def put(self, key: str, data: bytes) -> None:
        if self.root is None:
            return
        with atomic_open(self.root / f"{key}{SUFFIX}", "wb") as fh:
            fh.write(data)
        with atomic_open(self.root / f"{key}.sha256", "w") as fh:
            fh.write(hashlib.sha256(data).hexdigest() + "\n")


@dataclass(frozen=True)
class ShardResult:
    data: bytes  # the shard's lines of the tokens file
    hit: bool  # served from the cache
    histogram: dict[int, int]  # tokens per sentence -> sentences
    corrupt: str = ""  # a damaged cache entry ignored (and rewritten) for this shard, by path; "" if none


def token_histogram(data: bytes) -> dict[int, int]:
    """Tokens per line of a tokens file's bytes, counted: {n_tokens: lines}."""
    counts: Counter[int] = Counter()
    lines = data.split(b"\n")
    for line in lines[:-1] if lines[-1] == b"" else lines:
        text = line.partition(b"\t")[0]
        counts[text.count(b" ") + 1 if text else 0] += 1
    return dict(counts)


class ShardWorker:
    """Tokenizes shards through the cache; one per process, spaCy tokenizers made on first use."""

    def __init__(self, settings: dict[str, Any], cache_root: Path | str | None) -> None:
        self.settings, self.cache = settings, TokenCache(cache_root)
        self.tokenizers: dict[str, Callable] = {}

    def __call__(self, job: ShardJob) -> ShardResult:
        key = shard_key(job.data, job.lang, self.settings)
        data, corrupt = self.cache.read(key)
        hit = data is not None
        if data is None:
            lines = decode_shard(job)
            if job.lang not in self.tokenizers:
                self.tokenizers[job.lang] = make_tokenizer(job.lang, self.settings["lowercase"])
            pairs = self.tokenizers[job.lang](lines)
            data = "".join(format_line(toks, flags) + "\n" for toks, flags in pairs).encode("utf-8")
            self.cache.put(key, data)
        return ShardResult(data, hit, token_histogram(data), corrupt)


def ordered_results(items: Iterable[T], settings: dict[str, Any], cache_root: Path | None,
                    workers: int) -> Generator[tuple[T, ShardResult | None], None, None]:
    """`ordered_map` with a `ShardWorker`: shards tokenized, markers passed through with None."""
    yield from ordered_map(items, ShardWorker, (settings, None if cache_root is None else str(cache_root)), workers)
