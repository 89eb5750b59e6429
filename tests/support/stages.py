"""A smoke model trained by the pipeline's own stages, in process, on the tiny French-English cut of
Multi30k (support.pairs): for the tests that need a real model file and its data folders (nmt adapt,
the SentencePiece vocabulary)."""

from __future__ import annotations

from pathlib import Path

import yaml

from nmt.data import binarize, download, tokenize, validate, vocab
from nmt.evaluate import stage as evaluate
from nmt.export import ct2_stage as ctranslate2
from nmt.export import stage as export
from nmt.train import stage as train
from support.corpus import ROOT
from support.pairs import smoke, tiny_corpus


def train_smoke(root: Path, *, evaluated: bool = False, **sections: dict) -> tuple[Path, Path]:
    """(the params file, the model file) of the smoke fr-en model trained in `root` (`sections`: params laid
    over the smoke settings); `evaluated`: its evaluate, export and ctranslate2 stages run too (reports/,
    models/onnx, models/ct2)."""
    params = smoke(yaml.safe_load((ROOT / "params.yaml").read_text()))
    params["data"].update(corpus="tiny", direction="fr-en", corpora={"tiny": tiny_corpus(root / "srv")})
    for name, values in sections.items():
        params[name].update(values)
    recipe = root / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True))
    d, r, m, p = root / "data", root / "reports", root / "models", ["--params", str(recipe)]
    steps = [(download, ["--out", f"{d}/raw"]),
             (validate, ["--raw", f"{d}/raw", "--out", f"{d}/validated", "--reports", f"{r}/validation"]),
             (tokenize, ["--in", f"{d}/validated", "--out", f"{d}/tokens", "--reports", f"{r}/validation",
                         "--cache-dir", f"{root}/cache"]),
             (vocab, ["--tokens", f"{d}/tokens", "--out", f"{d}/vocab", "--reports", f"{r}/validation"]),
             (binarize, ["--tokens", f"{d}/tokens", "--vocab", f"{d}/vocab", "--out", f"{d}/bin", "--reports",
                         f"{r}/validation"]),
             (train, ["--vocab", f"{d}/vocab", "--tokens", f"{d}/tokens", "--bin", f"{d}/bin", "--checkpoints",
                      f"{m}/checkpoints", "--model", f"{m}/model.pt", "--reports", f"{r}/validation",
                      "--train-reports", f"{r}/train"])]
    if evaluated:
        steps += [(evaluate, ["--model", f"{m}/model.pt", "--data", f"{d}/validated", "--tokens", f"{d}/tokens",
                              "--reports", str(r), "--gates", f"{r}/validation"]),
                  (export, ["--model", f"{m}/model.pt", "--data", f"{d}/validated", "--metrics", f"{r}/metrics.json",
                            "--out", f"{m}/onnx", "--reports", f"{r}/validation", "--export-metrics",
                            f"{r}/export.json"]),
                  (ctranslate2, ["--model", f"{m}/model.pt", "--data", f"{d}/validated", "--out", f"{m}/ct2",
                                 "--reports", f"{r}/validation", "--metrics", f"{r}/ctranslate2.json"])]
    for module, argv in steps:
        assert module.main([*p, *argv]) == 0, module.__name__
    return recipe, m / "model.pt"


def portable_model(root: Path) -> Path:
    """`root`, holding the SentencePiece model the export tests and bench.js_consumer share, made once: the
    smoke fr-en model trained longer (600 updates, two layers of d_model 64) so that it says something (a
    25-update model answers "▁" to every line), through evaluate, export (models/onnx) and ctranslate2
    (models/ct2). A folder whose package is whole is used as it is."""
    root = root.resolve()  # the tiny corpus is served from it by file:// address
    if not (root / "models" / "ct2" / "model.json").is_file():
        train_smoke(root, evaluated=True,
                    vocab={"kind": "sentencepiece", "max_size": 600, "joint": True, "min_size": 100},
                    train={"max_steps": 600, "epochs": 1000, "warmup": 100},
                    model={"n_layers": 2, "d_model": 64, "n_heads": 4, "d_ff": 128})
    return root
