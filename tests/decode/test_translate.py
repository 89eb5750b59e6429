"""`nmt translate`: text to text with a trained model file, line alignment, bad input."""

from __future__ import annotations

import io
import logging
import random
import sys
from pathlib import Path

import pytest
import torch

from nmt.cli import main
from nmt.config.data import TokenizeConfig
from nmt.config.evaluate import Decoding
from nmt.config.model import ModelConfig
from nmt.decode.translator import Translator
from nmt.errors import DataError
from nmt.train.stage import TrainPaths, train_stage
from support.train import binarized, copy_corpus, tiny_train


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model trained on the copy task, written by the train stage."""
    root = tmp_path_factory.mktemp("translate")
    tokens, vocab = copy_corpus(root / "corpus", n_train=2000, n_val=50, seed=1)
    cfg = tiny_train(max_tokens=1200, epochs=20, warmup=100, lr_factor=0.5, val_bleu_sentences=0, log_every=50,
                     num_threads=1, average_last=1, keep_last=1, precision="fp32")  # the same on every host
    model_cfg = ModelConfig(n_layers=2, d_model=128, n_heads=4, d_ff=256, dropout=0.0, max_len=64)
    bin_dir = binarized(tokens, vocab)
    train_stage(model_cfg, cfg, TokenizeConfig(),
                TrainPaths(vocab, tokens, bin_dir, root / "ckpt", root / "model.pt", root / "reports", root / "tr"))
    return root / "model.pt"


def sentences(n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(f"s{rng.randrange(10)}" for _ in range(10)) for _ in range(n)]


def test_translates_and_keeps_empty_lines_aligned(model_file: Path) -> None:
    lines = sentences(6)
    lines[2:2] = ["", "   "]
    translator = Translator.from_file(model_file)
    out = translator.translate(lines)
    assert len(out) == len(lines)
    assert out[2] == "" and out[3] == ""
    assert out[:2] + out[4:] == translator.translate(lines[:2] + lines[4:])  # each output beside its own line
    copied = [o == i for o, i in zip(out, lines) if i.strip()]
    assert sum(copied) >= 3  # the copy model copies (an output shifted past the empty lines: 2 at most)


@pytest.mark.parametrize("beam_size", [1, 2, 4])  # not in make test-isa: its model is the run's slowest to train
def test_greedy_and_beam_output_the_copy(model_file: Path, beam_size: int) -> None:
    """The model learned the copy task: greedy and beam search give back the lines word for word,
    each in its place (measured in fp32: 16 to 20 of 20, as the host's kernels round). A
    search that kept the worst finished hypothesis, dropped a token, or mixed up the sentences of a
    batch copies almost none (measured: 0 or 1 of 40): half the lines tells the two apart on any host."""
    lines = sentences(20, seed=9)  # ten symbols each, as in training
    translator = Translator.from_file(model_file, Decoding(beam_size=beam_size, alpha=0.6), batch_size=8)
    out = translator.translate(lines)
    copied = sum(o == line for o, line in zip(out, lines))
    assert len(out) == len(lines) and copied >= len(lines) // 2, [(line, o) for line, o in zip(lines, out) if o != line]


def test_overlong_line_is_truncated_with_a_warning(model_file: Path, caplog) -> None:
    lines = ["s1 s2 s3", " ".join(["s4"] * 200)]
    with caplog.at_level(logging.WARNING):
        out = Translator.from_file(model_file).translate(lines)
    assert len(out) == 2 and out[1]
    assert "line 2" in caplog.text and "translating the first" in caplog.text


def test_cli_files_stdin_and_invalid_utf8(model_file: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    src = tmp_path / "in.txt"
    src.write_text("s1 s2 s3 s4 s5 s6 s7 s8 s9 s0\n\ns3 s3 s1 s2 s5 s6 s7 s8 s9 s0\n")
    assert main(["translate", "--model", str(model_file), "--input", str(src),
                 "--output", str(tmp_path / "o.txt")]) == 0
    out = (tmp_path / "o.txt").read_text().split("\n")
    assert len(out) == 4 and out[1] == "" and out[3] == ""

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"s1 s2\n\xff\xfe bad\n")))
    assert main(["translate", "--model", str(model_file)]) == 1
    err = capsys.readouterr().err
    assert "<stdin>:2: invalid UTF-8" in err and "Traceback" not in err

    assert main(["translate", "--model", str(model_file), "--input", str(tmp_path / "missing.txt")]) == 1
    assert "missing.txt: cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--batch-size", "0"], "--batch-size must be >= 1"),
    (["--batch-size", "-1"], "--batch-size must be >= 1"),
    (["--output", "{tmp}"], "is a directory"),
    (["--output", "/proc/no/such/out.txt"], "cannot write"),
])
def test_cli_bad_options_are_one_line_errors(model_file: Path, tmp_path: Path, capsys, args, message) -> None:
    src = tmp_path / "in.txt"
    src.write_text("s1 s2 s3\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert main(["translate", "--model", str(model_file), "--input", str(src), *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_training_checkpoint_is_not_a_model_file(model_file: Path, tmp_path: Path) -> None:
    state = torch.load(model_file, weights_only=True)
    del state["text"]
    torch.save(state, tmp_path / "old.pt")
    with pytest.raises(DataError, match="not a final model file"):
        Translator.from_file(tmp_path / "old.pt")


def test_help_does_not_import_torch() -> None:
    import subprocess

    code = ("import sys; from nmt.cli import main\ntry: main(['translate', '--help'])\nexcept SystemExit: pass\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("False") and "--beam-size" in out
