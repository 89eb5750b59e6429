"""The `nmt` command line: fast help, one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nmt.cli import main


def test_help_lists_every_stage_without_heavy_imports() -> None:
    code = ("import sys; from nmt.cli import build_parser; h = build_parser().format_help(); "
            "heavy = [m for m in ('torch', 'spacy', 'great_expectations', 'pandas') if m in sys.modules]; "
            "print(h); print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for stage in ("download", "validate", "tokenize", "vocab", "train"):
        assert stage in out
    assert "HEAVY []" in out


def test_help_imports_no_numeric_or_model_library() -> None:
    """`nmt --help` (and `nmt translate --help`, `nmt serve --help`) stays instant: importing the
    CLI and parsing loads none of numpy, torch, ONNX Runtime, spaCy; the commands import them."""
    code = ("import sys\nfrom nmt.cli import main\n"
            "for argv in (['--help'], ['translate', '--help'], ['serve', '--help']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "heavy = ('numpy', 'torch', 'onnxruntime', 'spacy', 'ctranslate2')\n"
            "print('HEAVY', sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "usage: nmt translate" in out and "usage: nmt serve" in out
    assert out.splitlines()[-1] == "HEAVY []"


@pytest.mark.parametrize(("stage", "option"), [("download", "--out"), ("validate", "--raw"), ("tokenize", "--in"),
                                              ("vocab", "--tokens"), ("train", "--checkpoints"),
                                              ("evaluate", "--gates"), ("export", "--export-metrics")])
def test_each_stage_has_help_with_its_paths(stage: str, option: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        main([stage, "--help"])  # forwarded to the stage module, as `python -m MODULE --help`
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: nmt {stage} ") and "--params" in out and option in out


def test_missing_params_file_is_one_line_error(tmp_path, capsys: pytest.CaptureFixture) -> None:
    code = main(["download", "--params", str(tmp_path / "nope.yaml"), "--out", str(tmp_path / "raw")])
    err = capsys.readouterr().err
    assert code == 1
    assert "nope.yaml: file not found" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "raw").exists()


def test_translate_beam_and_length_penalty_default_to_the_tuned_ones_and_can_be_set(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """Model files carry no decoding settings: `nmt translate` uses evaluate.beam_size and
    evaluate.alpha of params.yaml (tuned on val), so it decodes as the evaluate stage and the ONNX
    card do; --beam-size and --alpha override."""
    import yaml

    from nmt import cli
    from nmt.decode import translator
    from support.corpus import ROOT

    tuned = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["evaluate"]
    seen = []
    monkeypatch.setattr(translator.Translator, "from_file",
                        classmethod(lambda cls, path, decoding, *a, **kw: seen.append((decoding.beam_size,
                                                                                        decoding.alpha)) or 1 / 0))
    (tmp_path / "m.pt").write_bytes(b"")  # a file: a model file, whatever it holds (from_file reads it)
    for extra in ([], ["--alpha", "0.6", "--beam-size", "3"]):
        args = cli.build_parser().parse_args(["translate", "--model", str(tmp_path / "m.pt"), *extra])
        with pytest.raises(ZeroDivisionError):
            cli.open_translator(args)
    assert seen == [(tuned["beam_size"], tuned["alpha"]), (3, 0.6)]
    with pytest.raises(SystemExit):
        cli.main(["translate", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert f"for model files {tuned['beam_size']}," in help_text and f"for model files {tuned['alpha']}," in help_text


def test_translate_leaves_an_onnx_packages_decoding_to_its_card(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    """A package folder carries its tuned beam size and length penalty in model.json: without
    --beam-size / --alpha, `nmt translate` passes none, so the card's apply."""
    from nmt import cli
    from nmt.runtime import translator

    seen = []
    (tmp_path / "model.json").write_text('{"format": "nmt-onnx"}')  # the card says what the folder is
    monkeypatch.setattr(translator.OnnxTranslator, "from_dir",
                        classmethod(lambda cls, path, **kw: seen.append((kw["beam_size"], kw["alpha"])) or 1 / 0))
    for extra in ([], ["--beam-size", "2", "--alpha", "0.5"]):
        args = cli.build_parser().parse_args(["translate", "--model", str(tmp_path), *extra])
        with pytest.raises(ZeroDivisionError):
            cli.open_translator(args)
    assert seen == [(None, None), (2, 0.5)]


@pytest.mark.parametrize("command", ["finetune", "adapt"])
def test_the_help_of_a_training_command_loads_no_torch(command: str) -> None:
    """`nmt finetune --help` took 10 s on a slow host importing torch (issue 78): the help is instant."""
    code = (f"import sys\nfrom nmt.cli import main\ntry:\n    main([{command!r}, '--help'])\nexcept SystemExit:\n"
            "    pass\nprint('torch loaded:', 'torch' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "usage: " in run.stdout and run.stdout.strip().endswith("torch loaded: False"), run.stdout + run.stderr
