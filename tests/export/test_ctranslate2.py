"""The CTranslate2 export target: conversion, its BLEU gate, the card, a failed gate keeping the old model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nmt.config.evaluate import Decoding
from nmt.decode.translator import Translator
from nmt.errors import DataError, GateError
from nmt.runtime.ct2 import Ct2Translator
from support.onnx import ct2_folder, sentences

pytest.importorskip("ctranslate2")


def _run(root: Path, model_path: Path, out: Path | None = None, **overrides) -> Path:
    return ct2_folder(root, model_path, out, **overrides)


@pytest.fixture(scope="module")
def ct2(model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("ct2"), model_path)


def test_converted_model_decodes_like_torch(ct2: Path, model_path: Path) -> None:
    card = json.loads((ct2 / "model.json").read_text())
    assert card["format"] == "nmt-ctranslate2" and card["decoding"]["length_penalty"] == 1.0
    assert {"ctranslate2/model.bin", "src.vocab", "tgt.vocab", "tokenizer.json"} <= set(card["files"])
    metrics = json.loads((ct2.parent / "ctranslate2.json").read_text())["test"]
    assert abs(metrics["sacrebleu_ctranslate2"] - metrics["sacrebleu_torch"]) <= 0.5
    report = json.loads((ct2.parent / "reports" / "ctranslate2.json").read_text())
    assert report["success"] is True
    torch_greedy = Translator.from_file(model_path, Decoding(beam_size=1))
    ct2_greedy = Ct2Translator.open(ct2 / "ctranslate2", torch_greedy, torch_greedy.max_len, "float32", 1)
    lines = sentences(24, seed=3)
    assert ct2_greedy.translate(lines) == torch_greedy.translate(lines)  # same weights, same argmax


def test_failed_gate_keeps_the_previous_model(ct2: Path, model_path: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    out = Path(shutil.copytree(ct2, tmp_path / "ct2"))  # a copy: the shared model and its reports stay as made
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    monkeypatch.setattr(Ct2Translator, "decode_batch", lambda self, sources: [[4] for _ in sources])  # garbage
    with pytest.raises(GateError, match="BLEU"):
        _run(tmp_path, model_path, out=out)
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_disabled_target_writes_a_note_only(model_path: Path, tmp_path: Path) -> None:
    out = _run(tmp_path, model_path, ctranslate2=False)
    assert [p.name for p in out.iterdir()] == ["README.md"]
    assert json.loads((tmp_path / "ctranslate2.json").read_text()) == {"enabled": False}


def test_the_folder_translates_on_its_own_without_torch(ct2: Path, model_path: Path) -> None:
    """`Ct2Translator.from_dir` reads the stage's folder alone (card, vocabularies, tokenizer) and
    decodes as torch does (greedy: the same argmax), in a process that never imports torch."""
    lines = sentences(16, seed=5)
    expected = Translator.from_file(model_path, Decoding(beam_size=1)).translate(lines)
    code = ("import json, sys\nfrom nmt.runtime.ct2 import Ct2Translator\n"
            "t = Ct2Translator.from_dir(sys.argv[1], beam_size=1, inter_threads=2, intra_threads=1)\n"
            "print(json.dumps({'lines': t.translate(json.loads(sys.argv[2])), 'torch': 'torch' in sys.modules,"
            " 'card': [t.beam_size, t.alpha]}))")
    out = subprocess.run([sys.executable, "-c", code, str(ct2), json.dumps(lines)], capture_output=True, text=True,
                         check=True).stdout
    got = json.loads(out)
    assert got["lines"] == expected and got["torch"] is False
    assert Ct2Translator.from_dir(ct2).beam_size == 4  # the card's decoding settings by default (the fixture's)


def test_a_changed_file_in_the_folder_is_named(ct2: Path, tmp_path: Path) -> None:
    out = Path(shutil.copytree(ct2, tmp_path / "ct2"))
    (out / "tgt.vocab").write_text("<pad>\n<unk>\n<s>\n</s>\nchanged\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"tgt\.vocab: SHA-256 .* differs"):
        Ct2Translator.from_dir(out)
    (out / "model.json").unlink()
    with pytest.raises(DataError, match="not a CTranslate2 model of nmt"):
        Ct2Translator.from_dir(out)
