"""A per-translation confidence from the model's own token log-probabilities,
computed for every sentence, returned when asked, and counted in a /metrics histogram."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from nmt.runtime.translator import OnnxTranslator
from nmt.translate.decoding import Output, translate_sentences
from nmt.translate.texts import text_confidence
from support.onnx import sentences
from support.serve import ThreadServer, ask, config, post

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def server(package: Path) -> Iterator[ThreadServer]:
    s = ThreadServer(config(package, max_wait_ms=20))
    yield s
    s.close()


@pytest.fixture(scope="module")
def translator(package: Path) -> OnnxTranslator:
    return OnnxTranslator.from_dir(package, device="cpu", threads=1)


def test_the_confidence_is_the_geometric_mean_of_the_chosen_tokens_probabilities(translator) -> None:
    """The beam's best hypothesis and the greedy one, each scored by the model: 0 < c <= 1, and the
    server path gives every sentence the confidence of the translation it chose."""
    lines = sentences(12, seed=5)
    for beam in (translator, replace(translator, beam_size=1)):
        scored = beam.translate_scored(lines, 1)
        assert [line.hyps[0][0] for line in scored] == beam.translate(lines)
        assert all(0.0 < line.hyps[0][1] <= 1.0 for line in scored)
        assert [len(line.source) for line in scored] == [len(t.split()) + 1 for t in lines]  # s0..s9 and </s>
    outputs, _ = translate_sentences(translator, lines)
    best = {text: c for line in translator.translate_scored(lines, 4) for text, c in line.hyps}
    assert all(o.confidence == pytest.approx(best[o.texts[0]]) for o in outputs if o.texts[0] in best)
    assert [(o.pieces, o.unknown) for o in outputs] == [(len(t.split()) + 1, 0) for t in lines]
    unknown, _ = translate_sentences(translator, ["s1 Wort s2"])
    assert unknown[0].pieces >= 4 and unknown[0].unknown >= 1  # a word the vocabulary lacks


def test_a_texts_confidence_is_its_weakest_sentences() -> None:
    assert text_confidence([Output(["a"], 0.9), Output(["b"], 0.61234567)]) == 0.6123
    assert text_confidence([]) is None  # a text without sentences
    assert text_confidence([Output(["a"], 0.9), Output(["b"], math.nan)]) is None  # an engine without scores


def test_confidence_is_returned_when_asked_and_counted_in_metrics(server: ThreadServer, translator) -> None:
    lines = sentences(3, seed=9)
    plain = post(server.url, json=ask(lines)).json()
    assert "confidence" not in plain  # LibreTranslate's answer unless asked
    asked = post(server.url, json=ask(lines) | {"confidence": True}).json()
    assert asked["translatedText"] == plain["translatedText"]
    want = [text_confidence(translate_sentences(translator, [line])[0]) for line in lines]
    assert asked["confidence"] == pytest.approx(want, abs=1e-4)
    one = post(server.url, data={"q": lines[0], "source": "de", "target": "en", "confidence": "true"}).json()
    assert one["confidence"] == pytest.approx(want[0], abs=1e-4)  # a form's "true", one text: one figure
    bad = post(server.url, json=ask(lines[0]) | {"confidence": "maybe"})
    assert bad.status_code == 400 and "confidence must be true or false" in bad.json()["error"]
    metrics = httpx.get(f"{server.url}/metrics", timeout=30).text
    count = re.search(r'nmt_serve_translation_confidence_count\{direction="de-en"\} (\S+)', metrics)
    assert count and float(count.group(1)) >= 2 * len(lines) + 1  # every sentence, asked or not
