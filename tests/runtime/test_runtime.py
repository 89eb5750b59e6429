"""The torch-free runtime: import without torch, text to text like Translator, bad packages, CLI."""

from __future__ import annotations

import io
import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nmt.cli import main
from nmt.config.evaluate import Decoding
from nmt.decode.translator import Translator
from nmt.errors import DataError, NmtError
from nmt.runtime.package import load_package, write_card
from nmt.runtime.translator import OnnxTranslator
from support.onnx import sentences


@pytest.fixture(scope="module")
def fp32_only(package: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package as exported with `quantize: false`: no int8 graphs."""
    out = tmp_path_factory.mktemp("fp32") / "onnx"
    shutil.copytree(package, out, ignore=shutil.ignore_patterns("*.int8.onnx"))
    card = json.loads((out / "model.json").read_text())
    del card["graphs"]["int8"]
    card["files"] = {k: v for k, v in card["files"].items() if ".int8." not in k}
    write_card(out, card)  # re-sealed: the card's own digest (issue 80)
    return out


def _lines() -> list[str]:
    lines = sentences(10, seed=11)
    lines[3:3] = ["", "   "]
    lines.append(" ".join(["s4"] * 30))  # longer than this model takes (max_len 64 - 1 - 50 = 13 symbols)
    return lines


def test_import_and_translate_with_torch_blocked(package: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['torch'] = None  # any `import torch` now raises ImportError\n"
        "from nmt.runtime.translator import OnnxTranslator\n"
        f"t = OnnxTranslator.from_dir({str(package)!r}, device='cpu')\n"
        "print(repr(t.translate(['s1 s2 s3', '', 's7 s8'])))\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    out, modules = run.stdout.strip().splitlines()[-2:]
    assert len(eval(out)) == 3 and eval(out)[1] == ""
    assert modules == "['torch']"  # only the blocking entry itself

    cli = ("import sys\nsys.modules['torch'] = None\nfrom nmt.cli import main\n"
           f"sys.exit(main(['translate', '--model', {str(package)!r}, '--device', 'cpu']))\n")
    run = subprocess.run([sys.executable, "-c", cli], input="s1 s2 s3\n\ns4 s5\n", capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert len(run.stdout.split("\n")) == 4 and run.stdout.split("\n")[1] == ""


@pytest.mark.isa  # torch and ONNX Runtime compared line for line: also run with a lower instruction set forced
@pytest.mark.parametrize("beam_size", [1, 4])
def test_text_to_text_equals_translator(package: Path, model_path: Path, beam_size: int, caplog) -> None:
    lines = _lines()
    expected = Translator.from_file(model_path, Decoding(beam_size=beam_size, alpha=0.6), 4).translate(lines)
    with caplog.at_level(logging.WARNING, logger="nmt.runtime"):
        got = OnnxTranslator.from_dir(package, device="cpu", beam_size=beam_size, alpha=0.6,
                                      batch_size=4).translate(lines)
    assert got == expected
    assert got[3] == "" and got[4] == ""
    assert f"line {len(lines)}" in caplog.text and "translating the first" in caplog.text


def test_auto_device_runs_without_error_spam(package: Path, capfd) -> None:
    import onnxruntime as ort

    translator = OnnxTranslator.from_dir(package, device="auto", threads=1)
    assert translator.model.providers[0] in ort.get_available_providers()
    assert len(translator.translate(["s1 s2"])) == 1
    err = capfd.readouterr().err
    assert "[E:onnxruntime" not in err and "libonnxruntime_providers_cuda" not in err


def test_missing_or_changed_files_are_clear_errors(package: Path, fp32_only: Path, tmp_path: Path) -> None:
    broken = tmp_path / "pkg"
    shutil.copytree(package, broken)
    (broken / "tgt.vocab").write_text((broken / "tgt.vocab").read_text() + "extra\n")
    with pytest.raises(DataError, match=r"tgt\.vocab: SHA-256 \w+\.\.\. differs from .* recorded in .*model\.json"):
        load_package(broken)
    (broken / "tgt.vocab").unlink()
    with pytest.raises(DataError, match=r"tgt\.vocab: missing from the package"):
        load_package(broken)
    (broken / "model.json").unlink()
    with pytest.raises(DataError, match=r"model\.json: not found; .* is not an ONNX export"):
        OnnxTranslator.from_dir(broken)
    with pytest.raises(DataError, match="no int8 graphs"):
        OnnxTranslator.from_dir(fp32_only, int8=True)


def test_card_vocab_hash_is_checked_even_if_files_list_agrees(package: Path, tmp_path: Path) -> None:
    broken = tmp_path / "pkg"
    shutil.copytree(package, broken)
    card = json.loads((broken / "model.json").read_text())
    card["vocab"]["src"]["sha256"] = "0" * 64
    (broken / "model.json").write_text(json.dumps(card))
    with pytest.raises(DataError, match=r"src\.vocab: SHA-256 .* differs from the recorded 000000000000"):
        load_package(broken)


@pytest.mark.isa
def test_cli_translate_with_package(package: Path, fp32_only: Path, model_path: Path, tmp_path: Path, capsys,
                                    monkeypatch) -> None:
    src = tmp_path / "in.txt"
    src.write_text("s1 s2 s3 s4\n\ns5 s5 s6\n")
    assert main(["translate", "--model", str(package), "--input", str(src), "--output", str(tmp_path / "onnx.txt"),
                 "--threads", "1", "--device", "cpu"]) == 0
    card = json.loads((package / "model.json").read_text())["decoding"]  # the package decodes with its card's
    assert main(["translate", "--model", str(model_path), "--input", str(src), "--output", str(tmp_path / "pt.txt"),
                 "--beam-size", str(card["beam_size"]), "--alpha", str(card["alpha"])]) == 0
    assert (tmp_path / "onnx.txt").read_text() == (tmp_path / "pt.txt").read_text()
    assert (tmp_path / "onnx.txt").read_text().split("\n")[1] == ""

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"s1 s2\n\xff bad\n")))
    assert main(["translate", "--model", str(package)]) == 1
    err = capsys.readouterr().err
    assert "<stdin>:2: invalid UTF-8" in err and "Traceback" not in err
    assert main(["translate", "--model", str(tmp_path)]) == 1  # a folder that is no package
    assert "model.json: not found" in capsys.readouterr().err
    assert main(["translate", "--model", str(fp32_only), "--int8", "--input", str(src)]) == 1
    assert "no int8 graphs" in capsys.readouterr().err
    assert main(["translate", "--model", str(package), "--int8", "--input", str(src)]) == 0
    assert len(capsys.readouterr().out.split("\n")) == 4


@pytest.mark.isa
def test_plain_onnxruntime_consumer_from_the_card_alone(package: Path) -> None:
    """examples/onnx_consumer.py (onnxruntime + numpy, nmt and torch blocked) reads only the card
    and gets the ids `nmt translate --beam-size 1` decodes."""
    translator = OnnxTranslator.from_dir(package, device="cpu", beam_size=1)
    lines = [line for line in sentences(12, seed=5) if line.strip()]
    sources = [translator.source_ids(tokens) for tokens, _ in translator.tokenize(lines)]
    expected = [hyp for _, hyp in translator.search(lines)]
    script = Path(__file__).resolve().parents[2] / "examples" / "onnx_consumer.py"
    code = ("import runpy, sys\n"
            "sys.modules['torch'] = sys.modules['nmt'] = None  # the consumer has neither\n"
            f"sys.argv = ['onnx_consumer.py', {str(package)!r}]\n"
            f"runpy.run_path({str(script)!r}, run_name='__main__')\n")
    run = subprocess.run([sys.executable, "-c", code], input="".join(json.dumps(s) + "\n" for s in sources),
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    got = [json.loads(line) for line in run.stdout.splitlines()]
    assert got == expected and any(len(h) > 2 for h in got)


@pytest.mark.isa
@pytest.mark.parametrize("beam_size", [1, 4])
def test_torch_and_onnx_run_the_one_search(package: Path, model_path: Path, beam_size: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Both translators decode through nmt.decode.search (no search of their own), each with its backend."""
    from nmt.decode import search
    from nmt.decode.backend import TorchBackend
    from nmt.runtime.session import OnnxModel

    seen: list[str] = []
    name = "greedy" if beam_size == 1 else "beam_search"
    real = getattr(search, name)

    def spy(backend, *args, **kwargs):
        seen.append(type(backend).__name__)
        return real(backend, *args, **kwargs)

    monkeypatch.setattr(search, name, spy)
    lines = sentences(6, seed=8)
    torch_out = Translator.from_file(model_path, Decoding(beam_size=beam_size, alpha=0.6)).translate(lines)
    onnx_out = OnnxTranslator.from_dir(package, device="cpu", beam_size=beam_size, alpha=0.6).translate(lines)
    assert torch_out == onnx_out
    assert set(seen) == {TorchBackend.__name__, OnnxModel.__name__}


def test_a_failed_cuda_library_preload_is_logged_and_not_fatal(monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """`device="auto"` preloads pip's CUDA/cuDNN libraries before probing CUDA: when that fails the
    probe still decides (here: the CPU), and the debug log says what failed."""
    import onnxruntime as ort

    from nmt.runtime import session

    class Session:
        def __init__(self, path: Path, providers: list[str]) -> None:
            self.path, self.providers = path, providers

        def get_providers(self) -> list[str]:
            return ["CPUExecutionProvider"]  # CUDA asked for, not granted

    def preload_dlls(*args, **kwargs) -> None:
        raise OSError("libcudnn.so.9: cannot open shared object file")

    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    monkeypatch.setattr(ort, "preload_dlls", preload_dlls, raising=False)
    monkeypatch.setattr(session, "_session", lambda path, providers, threads: Session(path, providers))
    with caplog.at_level(logging.DEBUG, logger="nmt.runtime.session"):
        opened = session.open_sessions([Path("encoder.onnx"), Path("decoder_step.onnx")], device="auto")
    assert [s.path for s in opened] == [Path("encoder.onnx"), Path("decoder_step.onnx")]
    assert opened[1].providers == ["CPUExecutionProvider"]
    failed = [r for r in caplog.records if r.levelno == logging.DEBUG and "preload_dlls" in r.getMessage()]
    assert len(failed) == 1, caplog.text
    assert "OSError: libcudnn.so.9: cannot open shared object file" in failed[0].getMessage()
    assert failed[0].exc_info is not None and failed[0].exc_info[0] is OSError


@pytest.mark.parametrize("beam_size", [1, 4])
def test_the_n_best_list_starts_with_the_translation(package: Path, beam_size: int) -> None:
    """`translate_n`: the beam's finished hypotheses, best first, distinct; the first is `translate`'s
    (LibreTranslate's `alternatives` in `nmt serve`). Greedy search keeps one."""
    lines = _lines()
    t = OnnxTranslator.from_dir(package, device="cpu", beam_size=beam_size, alpha=0.6, batch_size=4)
    best, ranked = t.translate(lines), t.translate_n(lines, 3)
    assert [r[0] if r else "" for r in ranked] == best
    assert ranked[3] == [] and ranked[4] == []  # empty lines
    assert all(len(set(r)) == len(r) for r in ranked)  # distinct texts
    counts = {len(r) for r in ranked if r}
    assert counts == {1} if beam_size == 1 else max(counts) == 3


def test_beam_search_n_ranks_by_the_length_penalised_score() -> None:
    from nmt.decode.hypotheses import Finished, Hypothesis

    f = Finished(batch=2, beam_size=3, alpha=0.0)
    f.hyps[0] = [(score, Hypothesis(ids, score, len(ids) + 1))
                 for score, ids in [(-2.0, [5]), (-1.0, [6, 7]), (-1.0, [8]), (-3.0, [6, 7])]]
    assert f.ranked(3) == [[[6, 7], [8], [5]], []]  # ties: the first finished; duplicates once
    assert f.ranked(1)[0][0] == f.best()[0]


def test_cpu_sessions_leave_out_the_slow_skip_layer_norm_fusion(package: Path, tmp_path: Path, monkeypatch) -> None:
    """On the CPU, SkipLayerNormalization was 5x slower than the Add + LayerNormalization
    it fuses; the graphs ONNX Runtime runs keep the plain ops."""
    import onnx
    import onnxruntime as ort

    from nmt.runtime import session

    real = ort.SessionOptions

    def dumping() -> ort.SessionOptions:  # every session writes the graph it really runs
        options = real()
        options.optimized_model_filepath = str(tmp_path / f"optimized-{len(list(tmp_path.iterdir()))}.onnx")
        return options

    monkeypatch.setattr(ort, "SessionOptions", dumping)
    session.open_sessions([load_package(package).graph("decoder_step")], device="cpu", threads=1)
    ops = {node.op_type for f in tmp_path.iterdir() for node in onnx.load(str(f)).graph.node}
    assert "LayerNormalization" in ops and "SkipLayerNormalization" not in ops


@pytest.mark.parametrize("beam_size", [1, 3])
def test_decoder_processes_translate_as_one_decoder_does(package: Path, beam_size: int) -> None:
    """`workers=2` decodes the batches in two processes of their own, side by
    side, and the output is line for line what one decoder writes."""
    import os

    lines = sentences(150, seed=5) + _lines()  # several batches of 16
    one = OnnxTranslator.from_dir(package, device="cpu", threads=1, beam_size=beam_size, batch_size=16)
    two = OnnxTranslator.from_dir(package, device="cpu", threads=1, beam_size=beam_size, batch_size=16, workers=2)
    try:
        assert two.pool is not None and len(pids := two.pool.pids()) == 2 and os.getpid() not in pids
        assert two.translate(lines) == one.translate(lines)
        assert two.translate_n(lines[:5], 2) == one.translate_n(lines[:5], 2)  # n-best: decoded here
    finally:
        two.close()
    with pytest.raises(NmtError, match="workers=-1"):
        OnnxTranslator.from_dir(package, workers=-1)


def test_auto_workers_start_one_decoder_process_per_core_once_the_input_is_large_enough(
        package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`workers=0`: small inputs are decoded here (starting processes would cost more than they
    save); the first call with AUTO_SENTENCES or more starts one process per core."""
    import os

    from nmt.runtime import translator as runtime

    monkeypatch.setattr(runtime, "available_cores", lambda: 2)
    monkeypatch.setattr(runtime, "AUTO_SENTENCES", 30)
    lines = sentences(40, seed=9)
    one = OnnxTranslator.from_dir(package, device="cpu", threads=1, beam_size=2, batch_size=8)
    auto = OnnxTranslator.from_dir(package, device="cpu", beam_size=2, batch_size=8, workers=0)
    try:
        assert auto.pool is not None and not auto.pool.started
        assert auto.translate(lines[:20]) == one.translate(lines[:20]) and not auto.pool.started  # 20 < 30
        assert auto.translate(lines) == one.translate(lines) and auto.pool.started  # 40 >= 30
        assert len(pids := auto.pool.pids()) == 2 and os.getpid() not in pids
    finally:
        auto.close()


def test_the_text_path_decodes_in_the_decoder_processes_too(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`nmt translate` and the Python API decode the beam's n-best lists (the loop guard chooses among them): with
    `workers=0` a large enough input goes to the decoder processes as well, with the same answer."""
    from nmt.runtime import translator as runtime
    from nmt.translate.local import LocalTranslator
    from nmt.translate.models import ModelOptions

    monkeypatch.setattr(runtime, "available_cores", lambda: 2)
    monkeypatch.setattr(runtime, "AUTO_SENTENCES", 30)
    lines = sentences(40, seed=11)
    one = LocalTranslator.open(package, ModelOptions(device="cpu", threads=1, beam_size=2, batch_size=8))
    auto = LocalTranslator.open(package, ModelOptions(device="cpu", beam_size=2, batch_size=8, workers=0))
    try:
        assert auto.translate(lines).texts == one.translate(lines).texts
        pool = auto.model.translator.pool
        assert pool is not None and pool.started  # 40 sentences >= 30: decoded in the processes
    finally:
        auto.close()


@pytest.mark.parametrize("workers", [2, 3])
def test_decoder_processes_decode_with_the_callers_settings(package: Path, workers: int) -> None:
    """A copy of the translator with other settings shares its decoder processes (the loop guard's
    greedy retry is `replace(translator, beam_size=1)`) and must be decoded its own way there, as in
    this process. Before the fix the processes searched with the settings they were opened with:
    the guard's greedy retry came back as the beam's rejected output, an empty line on a host
    where the beam's best is empty (issue 79)."""
    from dataclasses import replace

    lines = sentences(60, seed=7)
    one = OnnxTranslator.from_dir(package, device="cpu", threads=1, beam_size=3, batch_size=8)
    many = OnnxTranslator.from_dir(package, device="cpu", threads=1, beam_size=3, batch_size=8, workers=workers)
    variants = [{"beam_size": 1}, {"alpha": 0.0}, {"max_extra": 1}, {"beam_size": 2, "max_extra": 2}]
    try:
        here = {str(v): replace(one, **v).translate(lines) for v in variants}
        # the settings matter on this model (else the test could not tell them apart)
        assert any(out != one.translate(lines) for out in here.values())
        for _ in range(3):  # the processes take the batches in whatever order they come free
            for v in variants:
                assert replace(many, **v).translate(lines) == here[str(v)], v
            assert many.translate(lines) == one.translate(lines)
    finally:
        many.close()


def test_the_guards_greedy_retry_is_greedy_in_the_decoder_processes(package: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop guard's last resort, greedy decoding of a sentence none of whose beam hypotheses
    passes, gives the greedy translation with decoder processes too (issue 79: `nmt translate
    --workers 2` wrote an empty line where one process wrote the greedy one). Here the guard accepts
    only the greedy translations, so every sentence whose beam lacks its greedy output is retried."""
    from dataclasses import replace

    from nmt.translate import guard
    from nmt.translate.local import LocalTranslator
    from nmt.translate.models import ModelOptions

    lines = sentences(40, seed=3)
    one = LocalTranslator.open(package, ModelOptions(device="cpu", threads=1, beam_size=3, batch_size=8))
    two = LocalTranslator.open(package, ModelOptions(device="cpu", threads=1, beam_size=3, batch_size=8, workers=2))
    try:
        greedy = replace(one.model.translator, beam_size=1).translate(lines)
        beam = one.model.translator.translate(lines)
        assert greedy != beam  # some sentences are retried
        monkeypatch.setattr(guard, "acceptable", lambda text, source: text in greedy)
        assert one.translate(lines).texts == greedy
        assert two.translate(lines).texts == greedy
    finally:
        two.close()


def test_cli_translate_with_decoder_processes(package: Path, model_path: Path, tmp_path: Path, capsys) -> None:
    src = tmp_path / "in.txt"
    src.write_text("\n".join(sentences(40, seed=3)) + "\n\ns5 s5 s6\n")
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}.txt"
        assert main(["translate", "--model", str(package), "--input", str(src), "--output", str(out),
                     "--threads", "1", "--workers", workers, "--batch-size", "8", "--device", "cpu"]) == 0
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1] and len(outputs[0].split("\n")) == 43
    assert main(["translate", "--model", str(package), "--input", str(src), "--workers", "-1"]) == 1
    assert "--workers must be >= 0" in capsys.readouterr().err
    assert main(["translate", "--model", str(model_path), "--input", str(src), "--workers", "2"]) == 1
    assert "decoder processes (workers) need the ONNX package" in capsys.readouterr().err
