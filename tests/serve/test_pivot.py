"""A pair without a package of its own, translated through English (issue 65): with fr-en and en-de
packages, French -> German is the en-de package's translation of the fr-en package's, said in the
answer's `pivot`; `/languages` lists German among French's targets, under `through_english` too;
`auto` takes the same chain; a request glossary (it maps French to German, no package reads both)
is refused naming the hops, and a pair with no chain either is refused naming what is served."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from nmt.runtime.translator import OnnxTranslator
from support.onnx import sentences
from support.serve import ThreadServer, config, offline, post, relabelled_package

pytestmark = pytest.mark.network
FRENCH = ["Un homme descend une rue à vélo pendant que des enfants jouent."]


@pytest.fixture(scope="module")
def packages(package: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pivot")
    relabelled_package(package, root / "fr-en", "fr", "en")
    relabelled_package(package, root / "en-de", "en", "de")
    return root


@pytest.fixture(scope="module")
def server(packages: Path):
    s = ThreadServer(config(packages))
    yield s
    s.close()


def test_languages_list_the_targets_through_english(server: ThreadServer) -> None:
    assert httpx.get(f"{server.url}/languages").json() == [  # the packages' folders in order: en-de, fr-en
        {"code": "en", "name": "English", "targets": ["de"], "through_english": []},
        {"code": "de", "name": "German", "targets": [], "through_english": []},
        {"code": "fr", "name": "French", "targets": ["en", "de"], "through_english": ["de"]}]


def test_french_to_german_is_the_second_package_on_the_first_ones_translation(server: ThreadServer,
                                                                               packages: Path) -> None:
    fr_en = OnnxTranslator.from_dir(packages / "fr-en", device="cpu", threads=1)
    en_de = OnnxTranslator.from_dir(packages / "en-de", device="cpu", threads=1)
    lines = sentences(4, seed=5)
    english = offline(fr_en, lines)
    assert post(server.url, json={"q": lines, "source": "fr", "target": "en"}).json() == {"translatedText": english}
    answer = post(server.url, json={"q": lines, "source": "fr", "target": "de", "confidence": True}).json()
    assert answer["translatedText"] == offline(en_de, english)
    assert answer["pivot"] == {"language": "en", "texts": [0, 1, 2, 3]}
    assert all(0.0 <= c <= 1.0 for c in answer["confidence"])
    auto = post(server.url, json={"q": FRENCH, "source": "auto", "target": "de"}).json()
    assert auto["detectedLanguage"][0]["language"] == "fr" and auto["pivot"] == {"language": "en", "texts": [0]}
    assert auto["translatedText"] == offline(en_de, offline(fr_en, FRENCH))
    html = post(server.url, json={"q": f"<p>{lines[0]}</p>", "source": "fr", "target": "de", "format": "html"}).json()
    assert html["translatedText"].startswith("<p>") and html["pivot"] == {"language": "en", "texts": [0]}


def test_a_request_glossary_and_an_unserved_pair_are_refused(server: ThreadServer) -> None:
    r = post(server.url, json={"q": "s1 s2", "source": "fr", "target": "de", "glossary": {"s1": "s9"}})
    assert r.status_code == 400 and "through en (fr-en then en-de)" in r.json()["error"]
    r = post(server.url, json={"q": "s1 s2", "source": "de", "target": "fr"})
    assert r.status_code == 400 and "de is not supported" in r.json()["error"]
    assert "en to de, fr to en" in r.json()["error"]
