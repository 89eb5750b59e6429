"""`nmt serve` as clients use it: LibreTranslate's request shapes, its answers, every error status,
the endpoints beside /translate, against a real uvicorn server on 127.0.0.1 (tests/support/serve.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest

from nmt.runtime.translator import OnnxTranslator
from nmt.serve.dispatch.batcher import SWITCH_INTERVAL_S
from nmt.translate.decoding import translate_sentences
from support.onnx import sentences
from support.serve import TOKEN, ThreadServer, ask, config, post
from support.serve import offline as offline_answers

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def server(package: Path) -> Iterator[ThreadServer]:
    s = ThreadServer(config(package, admin_token=TOKEN, max_wait_ms=20))
    yield s
    s.close()


@pytest.fixture(scope="module")
def offline(package: Path) -> Callable[[list[str]], list[str]]:
    """The same package translated offline (`translate_sentences`, batches of 64)."""
    translator = OnnxTranslator.from_dir(package, device="cpu", threads=1)
    return lambda lines: offline_answers(translator, lines)


def test_json_and_form_shapes_with_a_string_and_a_list(server: ThreadServer, offline) -> None:
    lines = ["s1 s2 s3", "s4 s5 s6 s7", "s8 s9"]
    want = offline(lines)
    assert post(server.url, json=ask(lines[0])).json() == {"translatedText": want[0]}
    assert post(server.url, json=ask(lines)).json() == {"translatedText": want}
    form = {"q": lines[1], "source": "de", "target": "en"}
    assert post(server.url, data=form).json() == {"translatedText": want[1]}  # url-encoded, as Weblate and others
    twice = urlencode([("q", lines[0]), ("q", lines[2]), ("source", "de"), ("target", "en")])
    r = post(server.url, content=twice, headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.json() == {"translatedText": [want[0], want[2]]}
    r = post(server.url, data={"source": "de", "target": "en"}, files={"q": (None, lines[2])})  # multipart
    assert r.request.headers["content-type"].startswith("multipart/form-data") and r.json()["translatedText"] == want[2]
    r = httpx.get(f"{server.url}/translate", params=form, timeout=60)  # fields in the query string
    assert r.json() == {"translatedText": want[1]}
    r = httpx.request("GET", f"{server.url}/translate", content=urlencode(form), timeout=60,
                      headers={"Content-Type": "application/x-www-form-urlencoded"})  # a form in a GET body
    assert r.status_code == 200 and r.json() == {"translatedText": want[1]}


def test_auto_source_and_alternatives_answer_as_libretranslate(server: ThreadServer, package: Path) -> None:
    """`alternatives`: the beam's n-best list after the translation (the package decodes with beam 4);
    `auto`: each text's detected language and confidence (the copy model reads German words as unknowns)."""
    offline = OnnxTranslator.from_dir(package, device="cpu", threads=1)

    def guarded(texts: list[str], n: int) -> list[list[str]]:  # what the server answers: the n-best, loops last
        return [out.texts for out in translate_sentences(offline, texts, n)[0]]

    # a sentence the partly trained copy model does not loop on in any of its 3 best (the guard's business)
    text = next(t for t in sentences(60, seed=7) if len(guarded([t], 3)[0]) == 3)
    one = post(server.url, json=ask(text, alternatives=2)).json()
    n_best = guarded([text], 3)[0]
    assert one == {"translatedText": n_best[0], "alternatives": n_best[1:]}
    assert len(one["alternatives"]) == 2  # the copy model's beam holds other hypotheses
    many = post(server.url, json=ask(["s1 s2", "s3 s4 s5"], alternatives=1)).json()
    assert many["alternatives"] == [[h for h in r[1:] if h != r[0]] for r in guarded(["s1 s2", "s3 s4 s5"], 2)]
    texts = ["Der Hund läuft s1 s2 s3 s4", "Ich bin heute müde"]  # German words: detected as German
    auto = post(server.url, json=ask(texts, source="auto")).json()
    assert auto["translatedText"] == [h[0] for h in guarded(texts, 1)]
    assert [d["language"] for d in auto["detectedLanguage"]] == ["de", "de"]
    assert all(50 < d["confidence"] <= 100 for d in auto["detectedLanguage"])
    plain = post(server.url, json=ask(text)).json()
    assert plain == {"translatedText": n_best[0]}  # no alternatives asked: none in the answer


def test_a_texts_alternatives_combine_its_sentences_hypotheses() -> None:
    from nmt.text.sentences import Segmented
    from nmt.translate.texts import alternative_texts

    seg = Segmented(("", "A.", " ", "B.", "\n"))
    hyps = [["a1", "a2", "a3"], ["b1", "b2"]]
    assert alternative_texts(seg, hyps, 3) == ["a2 b2\n", "a3 b1\n"]
    assert alternative_texts(seg, [["a1", "a1x"], ["b1"]], 1) == ["a1x b1\n"]
    assert alternative_texts(seg, [["a1"], ["b1"]], 2) == []  # greedy: nothing else


def test_a_text_is_split_into_sentences_and_keeps_its_layout(server: ThreadServer, offline) -> None:
    text = "s1 s2 s3\n\n  s4 s5\ns6 s7! s8 s9\n"
    got = post(server.url, json=ask(text)).json()["translatedText"]
    lines = got.split("\n")
    assert len(lines) == 5 and lines[1] == "" and lines[4] == "" and lines[2].startswith("  ")
    assert lines[0] == offline(["s1 s2 s3"])[0] and lines[2] == "  " + offline(["s4 s5"])[0]
    assert lines[3] == " ".join(offline(["s6 s7!", "s8 s9"]))  # two sentences, each translated alone
    assert post(server.url, json=ask(["", "  "])).json() == {"translatedText": ["", "  "]}


def test_served_output_is_the_offline_output_under_concurrent_requests(server: ThreadServer, offline) -> None:
    """fp32: the batch mix of concurrent requests does not change a translation."""
    lines = sentences(48, seed=21, hi=14)
    want = offline(lines)
    with ThreadPoolExecutor(12) as pool:
        got = list(pool.map(lambda line: post(server.url, json=ask(line)).json()["translatedText"], lines))
        bulk = pool.submit(post, server.url, json=ask(lines))
        assert bulk.result().json()["translatedText"] == want
    assert got == want


def test_decoders_side_by_side_take_short_turns_at_the_gil_and_give_the_default_back(start, offline) -> None:
    """Two decoder threads over one queue: the same translations; while they run, Python hands the
    GIL over every SWITCH_INTERVAL_S (search and text hold it between session runs), then its own again."""
    before = sys.getswitchinterval()
    assert before > SWITCH_INTERVAL_S
    server = start(decoders=2)
    assert server.state.batcher.decoders == 2 and len(server.state.batcher.threads) == 2
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S)
    lines = sentences(32, seed=5, hi=12)
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda line: post(server.url, json=ask(line)).json()["translatedText"], lines))
    assert got == offline(lines)
    server.close()
    assert sys.getswitchinterval() == before


def test_what_is_queued_is_shared_out_among_the_decoders_waiting_for_work(start, offline) -> None:
    """One request of 8 sentences while 2 decoders wait: each takes 4, so both cores work (one
    decoder taking all 8 left the other idle at every load a closed loop of clients gives)."""
    server = start(decoders=2, max_wait_ms=50)
    taken: list[int] = []
    hold = server.hold()
    translate = server.state.batcher.translate

    def counted(texts: list[str], n: int = 1, engine=None) -> list:
        taken.append(len(texts))
        return translate(texts, n, engine)

    server.state.batcher.translate = counted
    lines = sentences(8, seed=11)
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(post, server.url, json=ask(lines))
        hold.wait_entered()
        hold.wait_entered(timeout_s=10)  # the second decoder has its share too
        hold.release()
        assert answer.result().json()["translatedText"] == offline(lines)
    assert sorted(taken) == [4, 4]


@pytest.mark.parametrize("body, message", [
    ({"source": "de", "target": "en"}, "missing q parameter"),
    ({"q": "s1", "target": "en"}, "missing source parameter"),
    ({"q": "s1", "source": "de"}, "missing target parameter"),
    (ask("s1", source="fr"), "fr is not supported"),
    (ask("s1", target="de"), "de is not supported as a target"),
    (ask("s1", format="xml"), "format 'xml' is not supported"),
    (ask([1, 2]), "every element of q must be a string"),
    (ask([]), "q is an empty list"),
    (ask("s1", alternatives="many"), "alternatives must be a whole number"),
    ("[1]", "must be an object"),
    ("{not json", "not valid JSON"),
])
def test_bad_requests_are_400_with_a_message(server: ThreadServer, body, message: str) -> None:
    r = post(server.url, json=body) if isinstance(body, dict) else \
        post(server.url, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and message in r.json()["error"]


def test_limits_are_413(server: ThreadServer) -> None:
    cfg = server.state.config
    r = post(server.url, json=ask(["s1"] * (cfg.max_texts + 1)))
    assert r.status_code == 413 and "--max-texts" in r.json()["error"]
    r = post(server.url, json=ask(["s1", "s2 " * (cfg.max_chars // 3 + 1)]))
    assert r.status_code == 413 and "q[1] has" in r.json()["error"] and "--max-chars" in r.json()["error"]
    r = post(server.url, content=b"x" * (cfg.max_body_bytes + 1), headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and "--max-body-bytes" in r.json()["error"]


def test_the_other_endpoints(server: ThreadServer, package: Path) -> None:
    get = lambda path: httpx.get(f"{server.url}{path}", timeout=30)  # noqa: E731
    assert get("/health").json() == {"status": "ok"} and get("/livez").status_code == 200
    assert get("/readyz").json() == {"status": "ready"}
    assert get("/languages").json() == [{"code": "de", "name": "German", "targets": ["en"], "through_english": []},
                                        {"code": "en", "name": "English", "targets": [], "through_english": []}]
    (model,) = get("/v1/model").json()["models"]
    assert model["served"]["direction"] == "de-en" and model["card"]["format"] == "nmt-onnx"
    assert model["served"]["path"] == str(package)
    assert model["served"]["kind"] == "onnx" and model["served"]["int8"] is False
    r = get("/nowhere")
    assert r.status_code == 404 and r.json() == {"error": "Not Found"}
    page = get("/")
    assert page.headers["content-type"].startswith("text/html") and '<textarea id="source"' in page.text
    assert "http://" not in page.text and "https://" not in page.text  # no CDN: nothing from elsewhere


def test_metrics_are_exported(server: ThreadServer) -> None:
    assert post(server.url, json=ask(["s1 s2", "s3"])).status_code == 200
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    for name in ("nmt_serve_request_duration_seconds_bucket", "nmt_serve_queue_wait_seconds_bucket",
                 "nmt_serve_batch_size_bucket", "nmt_serve_queue_depth", "nmt_serve_sentences_total",
                 'nmt_serve_rejections_total{reason="queue_full"}', "nmt_serve_model_info{"):
        assert name in text, name
    count = next(float(line.split()[-1]) for line in text.splitlines() if line.startswith("nmt_serve_batch_size_count"))
    assert count >= 1 and 'route="/translate",status="200"' in text


def test_cors_is_off_unless_origins_are_given(server: ThreadServer, start) -> None:
    preflight = {"Origin": "http://example.org", "Access-Control-Request-Method": "POST"}
    r = httpx.options(f"{server.url}/translate", headers=preflight, timeout=30)
    assert "access-control-allow-origin" not in r.headers
    cors = start(cors_origins=("http://example.org",))
    r = httpx.options(f"{cors.url}/translate", headers=preflight, timeout=30)
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "http://example.org"


@pytest.mark.isa  # the ctranslate2 stage's gate compares CTranslate2 with torch: on the learned copy model
def test_the_ctranslate2_model_is_served_too(start, learned_model_path: Path,
                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    """`--model models/ct2`: the same API over the torch-free CTranslate2 translator, its output as offline."""
    pytest.importorskip("ctranslate2")
    from nmt.runtime.ct2 import Ct2Translator
    from support.learned import BEAM_LONGEST
    from support.onnx import ct2_folder

    folder = ct2_folder(tmp_path_factory.mktemp("ct2serve"), learned_model_path, longest=BEAM_LONGEST)
    server = start(model=folder)
    lines = sentences(6, seed=5)
    want = offline_answers(Ct2Translator.from_dir(folder), lines)
    got = post(server.url, json=ask(lines)).json()
    assert got == {"translatedText": want}
    served = httpx.get(f"{server.url}/v1/model", timeout=30).json()["models"][0]["served"]
    assert served["kind"] == "ct2" and served["path"] == str(folder)
