"""A damaged package is refused by every loader, naming the file: `nmt translate` and `nmt serve`.

One flipped bit in each kind of file of an ONNX package (the graphs, fp32 and int8, the
vocabularies, the tokenizer settings), and a digit of the card changed so that it still parses
(the beam size): each is refused before anything is translated or served. The card is covered by
its own digest (`card_sha256`, issue 80); every other file by the digest the card records.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nmt.cli import main
from nmt.errors import DataError
from nmt.runtime.package import CARD, CARD_DIGEST, load_package
from nmt.serve.api.server import load_models
from support.serve import config

pytestmark = pytest.mark.fault


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x04
    path.write_bytes(bytes(data))


def _files(package: Path) -> list[str]:
    return sorted(p.name for p in package.iterdir() if p.is_file() and p.name != CARD)


@pytest.mark.parametrize("name", ["encoder.onnx", "decoder_step.onnx", "encoder.int8.onnx", "decoder_step.int8.onnx",
                                  "src.vocab", "tgt.vocab", "tokenizer.json", CARD])
def test_a_damaged_file_is_refused_by_translate_and_serve(package: Path, tmp_path: Path, name: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert name == CARD or name in _files(package)  # every kind the export writes is tried
    copy = Path(shutil.copytree(package, tmp_path / "onnx"))
    if name == CARD:  # a digit that still parses: the beam size the server would decode with
        card = json.loads((copy / CARD).read_text())
        assert card[CARD_DIGEST]  # written by the export stage
        text = (copy / CARD).read_text()
        beam = card["decoding"]["beam_size"]
        changed = text.replace(f'"beam_size": {beam}', f'"beam_size": {beam + 1}', 1)
        assert changed != text
        (copy / CARD).write_text(changed)
    else:
        _flip(copy / name)
    source = tmp_path / "in.txt"
    source.write_text("s1 s2 s3\n")
    argv = ["translate", "--model", str(copy), "--input", str(source), "--output", str(tmp_path / "out.txt")]
    assert main([*argv, *(["--int8"] if "int8" in name else [])]) == 1
    err = capsys.readouterr().err
    assert name in err and "Traceback" not in err, err
    assert not (tmp_path / "out.txt").exists()
    with pytest.raises(DataError, match=name.replace(".", r"\.")):
        load_models(config(copy, int8="int8" in name))


def test_every_file_of_the_package_is_covered(package: Path) -> None:
    """The list above is every file kind of the package: a new file kind gets its damage test."""
    card = load_package(package).card
    assert sorted(card["files"]) == _files(package)
    assert set(_files(package)) <= {"encoder.onnx", "decoder_step.onnx", "encoder.int8.onnx", "decoder_step.int8.onnx",
                                    "src.vocab", "tgt.vocab", "tokenizer.json", "bpe.merges"}
