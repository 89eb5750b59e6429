"""Helpers for the ONNX tests: a small trained model file, data for the gate, and its export."""

from __future__ import annotations

import fcntl
import json
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path

from nmt.config.data import TokenizeConfig
from nmt.config.evaluate import Decoding
from nmt.config.export import ExportConfig
from nmt.config.model import ModelConfig
from nmt.export.stage import ExportPaths, export_stage
from nmt.train.stage import TrainPaths, train_stage
from support.train import binarized, copy_corpus, tiny_train

SMALL_MODEL = ModelConfig(n_layers=2, d_model=128, n_heads=4, d_ff=256, dropout=0.0, max_len=64)
SMALL_EXPORT = ExportConfig(parity_split="val", parity_sentences=12, logits_steps=4, batch_size=8, threads=1,
                            compare_split="test", compare_sentences=None, quantize=True, max_int8_bleu_drop=100.0)


def sentences(n: int, seed: int, lo: int = 2, hi: int = 12) -> list[str]:
    """Lines over the copy corpus's symbols s0..s9, of varied lengths."""
    rng = random.Random(seed)
    return [" ".join(f"s{rng.randrange(10)}" for _ in range(rng.randint(lo, hi))) for _ in range(n)]


def model_file(cache: Path) -> Path:
    """A model file written by the train stage: a partly learned copy task (outputs of
    varied lengths, so search has rows finishing at different steps), ~15 s of training; in
    fp32 on every host (precision auto would train in bf16 on CPUs with AVX512-BF16 or AMX only,
    another model there). What the tests assert of it holds for any such model; the tests whose
    property needs a model that has learned the task use tests/support/learned.py's.

    Kept in `cache` (`session_cache`), so the test modules, and xdist's workers, train it once."""
    path = cache / "model.pt"
    with locked(cache):
        if not path.is_file():
            tokens, vocab = copy_corpus(cache / "corpus", n_train=2000, n_val=50, seed=1)
            cfg = tiny_train(max_tokens=1200, epochs=8, warmup=100, lr_factor=0.5, val_bleu_sentences=0,
                             log_every=50, num_threads=1, average_last=1, keep_last=1,
                             precision="fp32")  # not bf16 on some hosts only
            bin_dir = binarized(tokens, vocab)
            train_stage(SMALL_MODEL, cfg, TokenizeConfig(),
                        TrainPaths(vocab, tokens, bin_dir, cache / "ckpt", path, cache / "reports", cache / "tr"))
    return path


def session_cache(tmp_path_factory, name: str) -> Path:
    """A folder for what a test session makes once: beside xdist's workers' base temp folders (one
    for all of them), else in the session's base temp folder."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name


@contextmanager
def locked(cache: Path) -> Iterator[None]:
    """One process at a time in `cache` (xdist's workers share it): the first makes what is
    missing, the others wait, then find it made."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


VALIDATED = (("val", 1, 16), ("test", 2, 12))  # split, seed, lines


def validated_lines(longest: int = 12) -> list[str]:
    """The lines of `validated_dir(root, longest)`'s splits, val then test."""
    return [line for _, seed, n in VALIDATED for line in sentences(n, seed, hi=longest)]


def validated_dir(root: Path, longest: int = 12) -> Path:
    """data/validated-like splits: val (parity) and test (text comparison, BLEU), lines of 2 to
    `longest` symbols; the copy task: each line is its own reference."""
    data = root / "validated"
    data.mkdir(parents=True, exist_ok=True)
    for split, seed, n in VALIDATED:
        lines = sentences(n, seed, hi=longest)
        for lang in ("de", "en"):
            (data / f"{split}.{lang}").write_text("".join(line + "\n" for line in lines))
    return data


DECODING = Decoding(beam_size=4, alpha=0.6)  # the copy model's 14-symbol vocabulary takes a beam of 7 at most
EVALUATION = {"test": {"sacrebleu": 12.5, "chrf": 30.0, "sacrebleu_signature": "nrefs:1|test",
                       "decoding": asdict(DECODING)}}


def metrics_file(root: Path, metrics: dict | None = None) -> Path:
    """reports/metrics.json as the evaluate stage writes it."""
    path = root / "metrics.json"
    path.write_text(json.dumps(metrics or EVALUATION))
    return path


# what the card copies from the validate stage's report (a mix's, with its counts)
CORPUS_STATS = {"corpus": "mix", "provenance": {"tiny": {"licence": "CC-BY 2.0", "files": {"a.tsv": "0" * 64}}},
                "sources": {"tiny.train": {"pairs_in": 10, "pairs_out": 8}},
                "decontamination": {"test": {"exact": 2, "near": 1}}, "splits": {"train": 8}}


def corpus_report(root: Path) -> Path:
    """A validate stage report (reports/validation/raw.json) under `root` with `CORPUS_STATS`."""
    path = root / "reports" / "validation" / "raw.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"stage": "raw", "success": True, "checks": [], "stats": CORPUS_STATS}))
    return path


def export(root: Path, model: Path, out: Path | None = None, metrics: dict | None = None, longest: int = 12,
           **overrides) -> Path:
    """Run the export stage into `out` (default root/onnx) on `validated_dir(root, longest)`; reports under root."""
    out = out or root / "onnx"
    export_stage(replace(SMALL_EXPORT, **overrides), DECODING,
                 ExportPaths(model, validated_dir(root, longest), metrics_file(root, metrics), out,
                             root / "reports" / "validation", root / "reports" / "export.json", corpus_report(root)))
    return out


def shared_package(cache: Path) -> Path:
    """The export (int8 graphs included) of `model_file(cache)`, made once; reports beside it."""
    model, out = model_file(cache), cache / "export" / "onnx"
    with locked(cache):
        if not (out / "model.json").is_file():
            export(cache / "export", model)
    return out


def ct2_folder(root: Path, model_path: Path, out: Path | None = None, longest: int = 12, **overrides) -> Path:
    """The ctranslate2 stage's model folder of `model_path` (beam 4, length penalty 1.0) in `root`,
    gated on `validated_dir(root, longest)`."""
    from nmt.export.ct2_stage import Ct2Paths, ct2_stage

    out = out or root / "ct2"
    ct2_stage(replace(SMALL_EXPORT, **overrides), Decoding(beam_size=4, alpha=1.0),
              Ct2Paths(model_path, validated_dir(root, longest), out, root / "reports", root / "ctranslate2.json"))
    return out
