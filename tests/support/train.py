"""Helpers for training tests: tiny tokenized corpora and configs written to a directory."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from nmt.config.data import DataConfig, VocabConfig
from nmt.config.loader import from_dict
from nmt.config.model import ModelConfig
from nmt.config.train import TrainConfig
from nmt.data.binarize import binarize_stage
from nmt.data.vocab import build_vocabularies, save_vocabularies
from nmt.text.tokenizer import SUFFIX, format_line

TINY_MODEL = ModelConfig(n_layers=2, d_model=32, n_heads=4, d_ff=64, dropout=0.1, max_len=64)
TINY_TRAIN = TrainConfig(max_tokens=256, epochs=3, warmup=10, log_every=1, val_bleu_sentences=8, keep_last=3,
                         average_last=2, patience=10, max_val_loss=50.0, num_threads=1)


def write_split(tokens_dir: Path, split: str, src: list[list[str]], tgt: list[list[str]], langs=("de", "en")) -> None:
    for lang, sents in zip(langs, (src, tgt)):
        text = "".join(format_line(s, "1" * (len(s) - 1) + "0") + "\n" for s in sents)
        (tokens_dir / f"{split}.{lang}{SUFFIX}").write_text(text)


def copy_corpus(root: Path, n_train: int, n_val: int, symbols: int = 10, length: int | tuple[int, int] = 10,
                seed: int = 0, reverse: bool = False,
                vocab: VocabConfig = VocabConfig(min_freq=1, joint=True)) -> tuple[Path, Path]:
    """The copy task of The Annotated Transformer as files: target = source (or reversed); `length`
    tokens a sentence, or (shortest, longest) for lengths drawn at random."""
    rng = random.Random(seed)
    tokens_dir, vocab_dir = root / "tokens", root / "vocab"
    tokens_dir.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("val", n_val)):
        sizes = [length if isinstance(length, int) else rng.randint(*length) for _ in range(n)]
        src = [[f"s{rng.randrange(symbols)}" for _ in range(size)] for size in sizes]
        tgt = [list(reversed(s)) if reverse else list(s) for s in src]
        write_split(tokens_dir, split, src, tgt)
    data = from_dict(DataConfig, {"corpus": "c", "direction": "de-en", "corpora": {"c": {
        "languages": ["de", "en"], "files": [{"name": "x", "url": "file:///x", "sha256": "0" * 64}],
        "splits": {"train": {"de": "x", "en": "x"}, "val": {"de": "x", "en": "x"}}}}}, key="data")
    save_vocabularies(build_vocabularies(data, vocab, tokens_dir), vocab_dir)
    return tokens_dir, vocab_dir


def tiny_train(**overrides) -> TrainConfig:
    """TINY_TRAIN with `overrides`; without BLEU (`val_bleu_sentences=0`) and no metric given,
    early stopping watches val_loss (val_bleu would be a ConfigError)."""
    if overrides.get("val_bleu_sentences") == 0:
        overrides.setdefault("early_stop_metric", "val_loss")
    return replace(TINY_TRAIN, **overrides)


def binarized(tokens_dir: Path, vocab_dir: Path, out: Path | None = None) -> Path:
    """The binarize stage's output (data/bin) for a tiny corpus: `out`, by default beside `tokens_dir`."""
    out = out or tokens_dir.parent / "bin"
    binarize_stage(tokens_dir, vocab_dir, out, out.parent / f"{out.name}-reports")
    return out
