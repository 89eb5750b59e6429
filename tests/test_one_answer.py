"""Same input, same answer: `nmt translate`, the Python API (`nmt.translate.local`) and `POST /translate`
(plain text and `format: html`) give one translation of a paragraph with several sentences, a URL, a
number, an emoji and a glossary term, for each kind of model (a model file, an ONNX package with fp32
and with int8 graphs, a CTranslate2 folder): they all drive the one text path (`nmt.translate.texts`).

The models are the learned copy model's (tests/support/learned.py): lines of its symbols up to
`BEAM_LONGEST` long are copied with a margin no host's rounding crosses, so every decoder of a kind
agrees with itself however the sentences are batched.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nmt.cli import main
from nmt.translate.local import LocalTranslator
from nmt.translate.models import ModelOptions
from support.learned import BEAM_LONGEST
from support.onnx import ct2_folder, export
from support.serve import ThreadServer, ask, config, post

pytestmark = pytest.mark.slow

# three sentences over two lines; a URL, a number and an emoji (spans), "s3 s4" a glossary term
PARAGRAPH = "s1 s2 https://example.com/a?b=1 s5.\ns6 s7 42 s3 s4 🙂 s8. s9 s2 s1!"
HTML = '<p>s1 s2 <b>s3 s4</b> s5 https://example.com/x. s6 <i>s7</i> 7 s8.</p>'
KINDS = ["pt", "onnx", "onnx-int8", "ct2"]


@pytest.fixture(scope="module")
def models(learned_model_path: Path, learned_package: Path, tmp_path_factory: pytest.TempPathFactory
           ) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("kinds")
    int8 = export(root / "int8", learned_model_path, longest=BEAM_LONGEST)  # int8 graphs beside the fp32 ones
    return {"pt": learned_model_path, "onnx": learned_package, "onnx-int8": int8,
            "ct2": ct2_folder(root / "ct2", learned_model_path, longest=BEAM_LONGEST)}


@pytest.fixture(scope="module")
def glossary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("glossary") / "de-en.tsv"
    path.write_text("# term\ttranslation\ns3 s4\tZIELWORT\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=KINDS)
def served(request: pytest.FixtureRequest, models: dict[str, Path], glossary: Path
           ) -> Iterator[tuple[str, Path, ThreadServer]]:
    kind = request.param
    server = ThreadServer(config(models[kind], int8=kind == "onnx-int8", glossary=(str(glossary),)))
    yield kind, models[kind], server
    server.close()


def test_every_entry_point_gives_the_same_answer(served: tuple[str, Path, ThreadServer], glossary: Path,
                                                 tmp_path: Path) -> None:
    kind, model, server = served
    api = LocalTranslator.open(model, ModelOptions(device="cpu", threads=1, int8=kind == "onnx-int8"), glossary)
    want = api.translate([PARAGRAPH]).texts[0]
    assert "ZIELWORT" in want and all(s in want for s in ("https://example.com/a?b=1", "42", "🙂")), want
    assert want.count("\n") == 1  # the paragraph's layout: two lines

    source, out = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text(PARAGRAPH + "\n", encoding="utf-8")
    argv = ["translate", "--model", str(model), "--input", str(source), "--output", str(out), "--glossary",
            str(glossary), "--device", "cpu", "--threads", "1", *(["--int8"] if kind == "onnx-int8" else [])]
    assert main(argv) == 0
    assert out.read_text(encoding="utf-8") == want + "\n"

    bare = LocalTranslator.open(model, ModelOptions(device="cpu", threads=1, int8=kind == "onnx-int8"))
    assert main([*argv[:7], *argv[9:]]) == 0  # no glossary: still the server's path (sentences, spans, guard)
    assert out.read_text(encoding="utf-8") == bare.translate([PARAGRAPH]).texts[0] + "\n"

    answer = post(server.url, json=ask(PARAGRAPH))
    assert answer.status_code == 200 and answer.json()["translatedText"] == want

    html = api.translate_html([HTML]).texts[0]
    assert html.count("<b>") == html.count("</b>") == 1 and "ZIELWORT" in html
    answer = post(server.url, json=ask(HTML, format="html"))
    assert answer.status_code == 200 and answer.json()["translatedText"] == html
    page, translated = tmp_path / "page.html", tmp_path / "page.out.html"
    page.write_text(HTML, encoding="utf-8")
    assert main([*argv[:3], "--input", str(page), "--output", str(translated), *argv[7:]]) == 0
    assert translated.read_text(encoding="utf-8") == html
