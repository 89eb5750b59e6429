"""`nmt translate` and model files under bad and big input: every problem is one
line naming the file or option, found before any work, and nothing is lost."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from nmt.cli import main
from nmt.decode.translator import Translator
from nmt.errors import DataError
from nmt.runtime.package import write_card

pytestmark = pytest.mark.usefixtures("model_path")


def _one_line_error(capsys: pytest.CaptureFixture, *needles: str) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


def _no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args, **kwargs):
        raise AssertionError("the model was loaded although the options were already known to be bad")

    monkeypatch.setattr("nmt.cli.open_translator", boom)


def test_progress_is_logged_when_not_on_a_terminal(model_path: Path, tmp_path: Path, caplog) -> None:
    src = tmp_path / "in.txt"
    src.write_text("s1 s2 s3\n\ns4 s5 s6\ns7\n")
    with caplog.at_level(logging.INFO, logger="nmt.translate"):
        assert main(["translate", "--model", str(model_path), "--input", str(src),
                     "--output", str(tmp_path / "o")]) == 0
    assert "translating 4 lines (3 with text)" in caplog.text
    assert "translated 3/3 lines" in caplog.text and "lines/s" in caplog.text and "left)" in caplog.text


def test_the_model_says_its_direction_and_another_expected_one_is_refused(model_path: Path, tmp_path: Path, capsys,
                                                                         caplog) -> None:
    src = tmp_path / "in.txt"
    src.write_text("s1 s2\n")
    direction = Translator.from_file(model_path).vocabs.direction
    reverse = "-".join(reversed(direction.split("-")))
    with caplog.at_level(logging.INFO, logger="nmt.translate"):
        assert main(["translate", "--model", str(model_path), "--direction", direction, "--input", str(src)]) == 0
    assert f"(1 with text) {direction}, beam" in caplog.text
    assert main(["translate", "--model", str(model_path), "--direction", reverse, "--input", str(src)]) == 1
    _one_line_error(capsys, f"translates {direction}, not {reverse}", f"models/general/{reverse}/onnx")


def test_output_streams_in_input_order_one_window_at_a_time(model_path: Path) -> None:
    translator = Translator.from_file(model_path)
    calls: list[int] = []
    decode = translator.decode_batch
    translator.decode_batch = lambda sources: calls.append(len(sources)) or decode(sources)  # type: ignore[method-assign]
    lines = [" ".join(f"s{(i * 7 + j) % 10}" for j in range(3 + i % 5)) for i in range(10)]
    stream = translator.translate_stream(lines, window=4)
    first = next(stream)
    assert calls == [4]  # only the first window was decoded before its first line came out
    assert [first, *stream] == translator.translate(lines)
    assert calls == [4, 4, 2, 10]


def test_output_in_a_folder_that_cannot_be_written_fails_before_any_work(model_path: Path, tmp_path: Path, capsys,
                                                                      monkeypatch) -> None:
    _no_work(monkeypatch)
    src = tmp_path / "in.txt"
    src.write_text("s1 s2\n")
    out = tmp_path / "no" / "such" / "folder" / "out.txt"
    assert main(["translate", "--model", str(model_path), "--input", str(src), "--output", str(out)]) == 1
    _one_line_error(capsys, f"--output {out}: cannot write in {out.parent}")


@pytest.mark.parametrize("via_symlink", [False, True])
def test_output_naming_the_input_is_refused_and_the_input_kept(model_path: Path, tmp_path: Path, capsys,
                                                              monkeypatch, via_symlink: bool) -> None:
    _no_work(monkeypatch)
    src = tmp_path / "in.txt"
    src.write_text("s1 s2\ns3\n")
    out = src
    if via_symlink:
        out = tmp_path / "link.txt"
        out.symlink_to(src)
    assert main(["translate", "--model", str(model_path), "--input", str(src), "--output", str(out)]) == 1
    _one_line_error(capsys, "is the input file", "give another path")
    assert src.read_text() == "s1 s2\ns3\n"


@pytest.mark.parametrize("beam", ["0", "33", "1000"])
def test_beam_size_has_a_documented_upper_bound(model_path: Path, capsys, monkeypatch, beam: str) -> None:
    _no_work(monkeypatch)
    assert main(["translate", "--model", str(model_path), "--beam-size", beam]) == 1
    _one_line_error(capsys, "--beam-size must be 1 (greedy) to 32")


@pytest.mark.parametrize("name, content", [
    ("notes.txt", b"just some text\n"), ("model.json", b'{"format": "nmt-onnx"}\n'),
    ("encoder.onnx", b"\x08\x07\x12\x07pytorch"), ("broken.pt", b"PK\x03\x04 truncated"),
])
def test_a_file_that_is_not_a_model_is_one_line_without_unsafe_advice(tmp_path: Path, capsys, name: str,
                                                                     content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert main(["translate", "--model", str(path)]) == 1
    err = _one_line_error(capsys, f"{path}: not an nmt model file", "models/model.pt", "models/onnx")
    assert "weights_only" not in err and "pickle" not in err.lower()


def test_a_config_that_does_not_match_its_weights_names_the_tensor(model_path: Path, tmp_path: Path) -> None:
    state = torch.load(model_path, weights_only=True)
    state["model_config"]["d_ff"] = 512  # the weights were trained with d_ff 256
    torch.save(state, tmp_path / "mismatch.pt")
    with pytest.raises(DataError) as err:
        Translator.from_file(tmp_path / "mismatch.pt")
    msg = str(err.value)
    assert "\n" not in msg and "encoder.0.ffn.w1.weight" in msg and "(256, 128)" in msg and "(512, 128)" in msg


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU machine --device cuda is honoured")
def test_device_cuda_without_a_gpu_is_refused(model_path: Path, capsys) -> None:
    assert main(["translate", "--model", str(model_path), "--device", "cuda"]) == 1
    _one_line_error(capsys, "device cuda: torch sees no CUDA device")


def test_a_pipeline_command_without_the_pipeline_extra_says_what_to_install(tmp_path: Path) -> None:
    """A runtime-only install has no pandas / Great Expectations: `nmt validate` says so in one line."""
    from support.corpus import make_params, synthetic_pairs, write_corpus

    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(120), "val": synthetic_pairs(20, seed=2)})
    params = make_params(tmp_path, corpus)
    code = ("import sys\nsys.modules['pandas'] = None  # as if not installed\nfrom nmt.cli import main\n"
            f"sys.exit(main(['validate', '--params', {str(params)!r}, '--raw', {str(tmp_path / 'raw')!r}, "
            f"'--out', {str(tmp_path / 'clean')!r}, '--reports', {str(tmp_path / 'reports')!r}]))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == ("nmt validate: error: this command needs the pipeline dependencies "
                                                   "(pandas is not installed); install them with "
                                                   "`pip install \"nmt[pipeline]\"`")
    assert "Traceback" not in run.stderr and not (tmp_path / "clean").exists()


def test_card_with_a_bad_decoding_setting_fails_when_the_package_loads(package: Path, tmp_path: Path) -> None:
    import shutil

    from nmt.errors import ConfigError
    from nmt.runtime.translator import OnnxTranslator

    copy = Path(shutil.copytree(package, tmp_path / "onnx"))
    card = json.loads((copy / "model.json").read_text())
    card["decoding"]["beam_size"] = 0
    write_card(copy, card)  # re-sealed: the card's own digest (issue 80)
    with pytest.raises(ConfigError, match=r"model.json: decoding.beam_size: must be 1 \(greedy\) to 32"):
        OnnxTranslator.from_dir(copy, device="cpu")
    with pytest.raises(ConfigError, match="decoding.beam_size"):
        OnnxTranslator.from_dir(package, device="cpu", beam_size=1000)


def test_a_stage_whose_module_needs_a_missing_package_is_one_line(tmp_path: Path) -> None:
    """`nmt train` in a runtime-only install: torch is missing when the stage module is imported."""
    code = ("import sys\nsys.modules['torch'] = None\nfrom nmt.cli import main\n"
            "sys.exit(main(['train', '--params', 'params.yaml']))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=tmp_path)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.strip() == ("nmt train: error: this command needs the pipeline dependencies (torch is not "
                                  "installed); install them with `pip install \"nmt[pipeline]\"`")


def test_a_beam_wider_than_the_vocabulary_allows_is_narrowed_with_a_warning(
        model_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A beam step ranks the 2K best next tokens of each row: with a small target vocabulary a
    wide beam cannot have them (the default 8 met it in the tiny test models). It decodes with the widest beam that can,
    and says so, instead of failing in the middle of the search."""
    from nmt.config.evaluate import Decoding

    with caplog.at_level(logging.WARNING, logger="nmt.decode.lines"):
        wide = Translator.from_file(model_path, Decoding(beam_size=32, alpha=1.0))
    widest = len(wide.vocabs.tgt) // 2
    assert widest < 32 and wide.beam_size == widest
    assert "beam size 32 needs 64 next-token candidates" in caplog.text and f"beam size {widest}" in caplog.text
    sources = ["s1 s2 s3", "s4 s5"]
    assert wide.translate(sources) == Translator.from_file(model_path, Decoding(beam_size=widest, alpha=1.0)).translate(
        sources)
