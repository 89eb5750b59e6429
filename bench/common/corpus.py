"""The synthetic corpus of bench/scale.py and bench/clean_scale.py: Multi30k's training split at a
factor of its size, every pair two Multi30k pairs joined (so sentences are WMT-length), 30% of them
starting with a made-up name from a pool that grows with the factor (so the vocabulary grows with
the corpus, as a real one does). Deterministic: the same factor gives the same bytes."""

from __future__ import annotations

import gzip
import random
import shutil
from pathlib import Path

NAMED_SHARE = 0.3  # pairs that start with a made-up name
NAMES_PER_FACTOR = 2000  # the name pool grows with the corpus
SYLLABLES = ("ka", "lo", "mir", "ten", "us", "vel", "dra", "ni", "bor", "est", "qui", "zan", "pe", "rho", "lin",
             "sa", "gur", "to", "wen", "fi")  # 2-5 syllables: over 3 million names, enough for any factor


def made_up_names(count: int, rng: random.Random) -> list[str]:
    """`count` distinct capitalised names of 2-5 syllables."""
    names: set[str] = set()
    if count > sum(len(SYLLABLES) ** k for k in range(2, 6)) // 2:
        raise SystemExit(f"{count} made-up names asked for: too many for the syllable table; add syllables")
    while len(names) < count:
        names.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 5))).capitalize())
    return sorted(names)


def make_corpus(mirror: Path, factor: int, raw: Path) -> int:
    """Write the synthetic `train.{de,en}.gz` (and Multi30k's val and test) into `raw`; the pair count."""
    de = gzip.decompress((mirror / "train.de.gz").read_bytes()).decode("utf-8").splitlines()
    en = gzip.decompress((mirror / "train.en.gz").read_bytes()).decode("utf-8").splitlines()
    rng = random.Random(factor)
    names = made_up_names(NAMES_PER_FACTOR * factor, rng)
    raw.mkdir(parents=True, exist_ok=True)
    pairs = 0
    with gzip.open(raw / "train.de.gz", "wt", encoding="utf-8", compresslevel=1) as out_de, \
            gzip.open(raw / "train.en.gz", "wt", encoding="utf-8", compresslevel=1) as out_en:
        for _ in range(factor):
            partner = list(range(len(de)))
            rng.shuffle(partner)
            for a, b in enumerate(partner):
                prefix = f"{rng.choice(names)} : " if rng.random() < NAMED_SHARE else ""
                out_de.write(f"{prefix}{de[a]} {de[b]}\n")
                out_en.write(f"{prefix}{en[a]} {en[b]}\n")
                pairs += 1
    for split in ("val", "test_2016_flickr"):
        for lang in ("de", "en"):
            shutil.copy(mirror / f"{split}.{lang}.gz", raw / f"{split}.{lang}.gz")
    return pairs
