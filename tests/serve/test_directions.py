"""Two packages in one server: both directions, `auto` routed by the
detected language, `/detect`, `/languages` and `/v1/model` listing both, reload of one or all,
driven with the request shapes LibreTranslate's clients send (JSON and forms)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest

from nmt.runtime.translator import OnnxTranslator
from nmt.serve.api.options import ServeConfig
from nmt.serve.dispatch.router import package_folders
from support.onnx import sentences
from support.serve import TOKEN, ThreadServer, both_packages, config, offline, post

pytestmark = pytest.mark.network
GERMAN = ["Der Hund läuft s1 s2 s3", "Ich bin heute müde s4 s5"]
ENGLISH = ["The dog is running s1 s2 s3", "I am tired today s4 s5"]


@pytest.fixture(scope="module")
def both(package: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of two packages: de-en (the test package) and en-de (its relabelled copy)."""
    return both_packages(package, tmp_path_factory.mktemp("packages"))


@pytest.fixture(scope="module")
def server(both: Path):
    s = ThreadServer(config(both, admin_token=TOKEN))
    yield s
    s.close()


def test_a_folder_of_packages_is_one_per_direction(both: Path) -> None:
    assert package_folders([both]) == [both / "de-en", both / "en-de"]
    assert ServeConfig(model=both).model == (both,)


def test_both_directions_answer_and_auto_routes_by_language(server: ThreadServer, both: Path) -> None:
    de_en = OnnxTranslator.from_dir(both / "de-en", device="cpu", threads=1)
    en_de = OnnxTranslator.from_dir(both / "en-de", device="cpu", threads=1)
    lines = sentences(6, seed=3)  # what the copy model copies (German or English words it would loop on)
    assert post(server.url, json={"q": lines, "source": "de", "target": "en"}).json() == \
        {"translatedText": offline(de_en, lines)}
    assert post(server.url, data={"q": lines[0], "source": "en", "target": "de"}).json() == \
        {"translatedText": offline(en_de, lines[:1])[0]}  # a form, as LibreTranslate's web client sends
    mixed = post(server.url, json={"q": [GERMAN[0], ENGLISH[0], "12345"], "source": "auto", "target": "en"})
    assert mixed.status_code == 400 and "text 1 reads as English" in mixed.json()["error"]  # en-en: no package
    auto = post(server.url, json={"q": [*ENGLISH, "12345 🙂"], "source": "auto", "target": "de"}).json()
    assert len(auto["translatedText"]) == 3 and "12345 🙂" in auto["translatedText"][2]
    assert [d["language"] for d in auto["detectedLanguage"]] == ["en", "en", "en"]  # digits only: the package's
    router = server.state.router
    found = [router.detect(t) for t in [GERMAN[0], ENGLISH[0]]]
    assert router.route_auto(found[1:], "de")[0] is router.engines["en-de"]
    assert router.route_auto(found[:1], "en")[0] is router.engines["de-en"]
    r = post(server.url, json={"q": "x", "source": "fr", "target": "en"})
    assert r.status_code == 400 and "this server translates de to en, en to de" in r.json()["error"]


def test_detect_answers_in_libretranslates_shape(server: ThreadServer) -> None:
    one = post(server.url, json={"q": "Ich bin heute sehr müde und gehe schlafen."}, path="/detect").json()
    assert one[0]["language"] == "de" and 90 <= one[0]["confidence"] <= 100
    many = httpx.post(f"{server.url}/detect", content=urlencode({"q": "hello handsome"}), timeout=30,
                      headers={"Content-Type": "application/x-www-form-urlencoded"}).json()
    assert many[0]["language"] == "en"  # LibreTranslate #902: not Bengali
    unsure = post(server.url, json={"q": ["Hallo", "12345"]}, path="/detect").json()
    assert unsure[0][0]["confidence"] < 90 and unsure[1][0] == {"confidence": 0.0, "language": "und"}


def test_languages_model_and_reload_list_every_package(server: ThreadServer, both: Path) -> None:
    assert httpx.get(f"{server.url}/languages").json() == [
        {"code": "de", "name": "German", "targets": ["en"], "through_english": []},
        {"code": "en", "name": "English", "targets": ["de"], "through_english": []}]
    models = httpx.get(f"{server.url}/v1/model").json()["models"]
    assert [m["served"]["direction"] for m in models] == ["de-en", "en-de"]
    auth = {"Authorization": f"Bearer {TOKEN}"}
    one = httpx.post(f"{server.url}/admin/reload", json={"model": str(both / "en-de")}, headers=auth, timeout=60)
    assert one.status_code == 200 and [m["direction"] for m in one.json()["models"]] == ["en-de"]
    models = {m["served"]["direction"]: m["served"] for m in httpx.get(f"{server.url}/v1/model").json()["models"]}
    assert models["en-de"]["generation"] == 2 and models["de-en"]["generation"] == 1
    every = httpx.post(f"{server.url}/admin/reload", headers=auth, timeout=60)
    assert [m["generation"] for m in every.json()["models"]] == [2, 3]
    metrics = httpx.get(f"{server.url}/metrics").text
    assert 'nmt_serve_model_info{direction="de-en"' in metrics and 'nmt_serve_model_info{direction="en-de"' in metrics


def test_two_packages_of_one_direction_are_refused(package: Path) -> None:
    from nmt.errors import DataError
    from nmt.serve.api.server import load_models, make_state

    cfg = config(package)
    with pytest.raises(DataError, match="both translate de-en: serve one package per direction"):
        make_state(cfg, load_models(cfg) * 2)
