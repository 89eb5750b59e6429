"""Tiny synthetic corpora, params files and data configs for tests."""

from __future__ import annotations

import gzip
import hashlib
import random
from pathlib import Path

import yaml

from nmt.config.data import DataConfig
from nmt.config.loader import from_dict

ROOT = Path(__file__).resolve().parents[2]


def repo_params() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text())


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_corpus(directory: Path, splits: dict[str, tuple[list[str], list[str]]], langs=("de", "en"),
                 gz: bool = True) -> dict:
    """Write a parallel corpus as (optionally gzipped) files; return its `corpora` entry."""
    directory.mkdir(parents=True, exist_ok=True)
    files, split_map = [], {}
    for split, sides in splits.items():
        split_map[split] = {}
        for lang, lines in zip(langs, sides):
            name = f"{split}.{lang}" + (".gz" if gz else "")
            raw = "".join(line + "\n" for line in lines).encode("utf-8")
            data = gzip.compress(raw, mtime=0) if gz else raw
            (directory / name).write_bytes(data)
            files.append({"name": name, "url": (directory / name).as_uri(), "sha256": sha256(data)})
            split_map[split][lang] = name
    return {"languages": list(langs), "files": files, "splits": split_map}


def synthetic_pairs(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """n distinct, aligned sentence pairs over a small vocabulary (deterministic)."""
    rng = random.Random(seed)
    de_words = ["Ein", "Mann", "Hund", "läuft", "über", "die", "Straße", "eine", "Frau", "spielt", "Ball", "im", "Park"]
    en_words = ["A", "man", "dog", "runs", "across", "the", "street", "a", "woman", "plays", "ball", "in", "park"]
    de, en = [], []
    for i in range(n):
        idx = [rng.randrange(len(de_words)) for _ in range(rng.randint(3, 9))]
        de.append(" ".join(de_words[j] for j in idx) + f" {i} .")
        en.append(" ".join(en_words[j] for j in idx) + f" {i}.")
    return de, en


def make_params(tmp_path: Path, corpus: dict, **sections: dict) -> Path:
    """params.yaml in tmp_path: the repository's params with `corpus` as the active corpus."""
    params = repo_params()
    params["data"]["corpora"] = {"tiny": corpus}
    params["data"]["corpus"] = "tiny"
    params["validate"].update(min_pairs=10, min_train_pairs=100)
    params["vocab"].update(min_size=10)
    for name, values in sections.items():
        params[name].update(values)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    return path


def data_config(corpus: dict, **overrides) -> DataConfig:
    raw = {"corpus": "tiny", "direction": "de-en", "corpora": {"tiny": corpus}, "retries": 2,
           "backoff_s": 0.0, "timeout_s": 5.0}
    raw.update(overrides)
    return from_dict(DataConfig, raw, key="data")


def multi30k_validated(mirror: Path, folder: Path, langs=("de", "en")) -> dict:
    """Multi30k's val (1,014 lines) and test_2016_flickr (1,000) written into `folder` as the train
    and val splits of a validated corpus (real sentences, quick to tokenize); its corpus entry."""
    folder.mkdir(parents=True, exist_ok=True)
    splits = {"train": "val", "val": "test_2016_flickr"}
    for split, name in splits.items():
        for lang in langs:
            (folder / f"{split}.{lang}").write_bytes(gzip.decompress((mirror / f"{name}.{lang}.gz").read_bytes()))
    files = [{"name": f"{n}.{lang}.gz", "url": "file:///unused", "sha256": "0" * 64}
             for n in splits.values() for lang in langs]
    return {"languages": list(langs), "files": files,
            "splits": {split: {lang: f"{n}.{lang}.gz" for lang in langs} for split, n in splits.items()}}
