"""The `nmt` command line: fast help, one-line errors."""

from __future__ import annotations

import subprocess
import sys

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
