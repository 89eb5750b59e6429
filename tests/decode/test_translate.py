"""`nmt translate`: text to text with a trained model file, line alignment, bad input."""

from __future__ import annotations

import io
import logging
import sys
from pathlib import Path

import pytest
import torch

from nmt.cli import main
from nmt.config.evaluate import Decoding
from nmt.decode.translator import Translator
from nmt.errors import DataError
from support.learned import beam_lines, checked_lines
from support.onnx import sentences


@pytest.fixture(scope="module")
def model_file(learned_model_path: Path) -> Path:
    """The learned copy model (tests/support/learned.py), a train stage's model file: trained until
    it copies every line of `checked_lines()` greedily and those of `beam_lines()` with beam 4, with
    a margin no host's rounding crosses, so the tests below can ask for the copy itself."""
    return learned_model_path


def test_translates_and_keeps_empty_lines_aligned(model_file: Path) -> None:
    """Empty and blank lines come back empty, in their place, and every other line's output beside
    it. Greedy on lines of `checked_lines()`: the learned model copies each of them on any host (each
    symbol ahead of the next best by `MARGIN` nats), so every output is its own line word for word,
    and an output shifted past the empty lines would be another line's."""
    lines = sentences(24, seed=3)[:6]  # in checked_lines(); 2 to 12 symbols
    assert len(set(lines)) == len(lines)  # a shifted output cannot equal its neighbour's line
    lines[2:2] = ["", "   "]
    translator = Translator.from_file(model_file, Decoding(beam_size=1))
    out = translator.translate(lines)
    assert len(out) == len(lines)
    assert out[2] == "" and out[3] == ""
    assert out == [line.strip() for line in lines]  # the copy of each line, beside its own line


@pytest.mark.parametrize("beam_size, alpha", [(1, 0.6), (4, 0.6), (4, 1.0)])
def test_greedy_and_beam_output_the_copy(model_file: Path, beam_size: int, alpha: float) -> None:
    """Greedy and beam search give back every line word for word, each in its place, in batches of 8
    over lines of varied lengths (rows finishing at different steps). Exact, on any host: the
    learned model is checked where it is made to copy these lines greedily with a margin of `MARGIN`
    nats at every step, and beam search (beam 4, alpha 0.6 and 1.0) to find the copy of each of
    `beam_lines()` (at most `BEAM_LONGEST` symbols: on longer lines beam 4 may end four early
    hypotheses first); the decoding settings here are those checked (beam 2 is not). A search that
    kept the worst finished hypothesis, dropped a token, or mixed up the sentences of a batch misses
    the copy of some line."""
    lines = checked_lines() if beam_size == 1 else beam_lines()
    translator = Translator.from_file(model_file, Decoding(beam_size=beam_size, alpha=alpha), batch_size=8)
    out = translator.translate(lines)
    assert out == lines, [(line, o) for line, o in zip(lines, out) if o != line]


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
