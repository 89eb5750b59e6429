"""bench/final_weights.py: the last checkpoint and the averages of the last k, scored on val as the
train stage scores its final model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from bench import final_weights
from nmt.model import checkpoint
from nmt.text.vocabularies import load_vocabularies
from nmt.train.loop import train
from nmt.train.loss import LabelSmoothingKL
from nmt.train.monitor import validation_loss
from nmt.train.pairs import bin_direction, open_split
from support.train import TINY_MODEL, binarized, copy_corpus, tiny_train
from tools.publish.general import final_weights as final_weights_block
from tools.publish.sources import Sources


def test_scores_the_last_checkpoint_and_each_average(tmp_path: Path) -> None:
    tokens, vocab = copy_corpus(tmp_path / "corpus", n_train=120, n_val=16)
    bin_dir = binarized(tokens, vocab)
    cfg = tiny_train(epochs=3, keep_last=3, average_last=1, val_bleu_sentences=0)
    model, _ = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "ckpt", bin_dir=bin_dir)
    code = final_weights.main(["--checkpoints", str(tmp_path / "ckpt"), "--bin", str(bin_dir), "--vocab", str(vocab),
                               "--last", "3", "--bleu-sentences", "4", "--out", str(tmp_path / "out")])
    assert code == 0
    result = json.loads((tmp_path / "out" / "final_weights.json").read_text())["results"]
    rows = {r["weights"]: r for r in result["rows"]}
    assert list(rows) == ["last epoch", "average of the last 2", "average of the last 3"]
    assert [len(r["checkpoints"]) for r in rows.values()] == [1, 2, 3]
    assert result["train"]["epochs"] == 3 and result["train"]["average_last"] == 1
    vocabs = load_vocabularies(vocab, bin_direction(bin_dir))  # the run's own final weights: its last checkpoint
    own = validation_loss(model, open_split(bin_dir, "val", vocabs), LabelSmoothingKL(len(vocabs.tgt), 0.1),
                          cfg.max_tokens, torch.device("cpu"), autocast=False)
    assert rows["last epoch"]["val_loss"] == pytest.approx(own, abs=1e-4)
    averaged = checkpoint.average(checkpoint.CheckpointDir(tmp_path / "ckpt", 3).epochs()[-2:])
    model.load_state_dict(averaged)
    two = validation_loss(model, open_split(bin_dir, "val", vocabs), LabelSmoothingKL(len(vocabs.tgt), 0.1),
                          cfg.max_tokens, torch.device("cpu"), autocast=False)
    assert rows["average of the last 2"]["val_loss"] == pytest.approx(two, abs=1e-4) != rows["last epoch"]["val_loss"]
    assert all(r["val_bleu_greedy"] is not None for r in rows.values())
    text = final_weights_block(Sources(tmp_path / "reports", tmp_path / "out"))  # docs/data.md's block
    last = rows["last epoch"]
    row = f"| last epoch | `{last['checkpoints'][0]}` | {last['val_loss']:.4f} | {last['val_bleu_greedy']:.2f} |"
    assert row in text
    assert "`train.epochs: 3`" in text and "shipped `average_last: 1`" in text
    assert "Source: `bench/results/final_weights.json`, measured" in text
    assert "Not measured on this machine yet" in final_weights_block(Sources(tmp_path, tmp_path))


def test_a_folder_without_checkpoints_is_refused_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                                ) -> None:
    with pytest.raises(SystemExit) as exc:
        final_weights.main(["--checkpoints", str(tmp_path), "--bin", str(tmp_path), "--vocab", str(tmp_path)])
    assert exc.value.code == 2 and "no epoch checkpoints there" in capsys.readouterr().err
