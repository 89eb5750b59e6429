"""The ONNX package in JavaScript (issue 76): js/, an npm package (`npm ci` from its lock: onnxruntime-node,
onnxruntime-web, SentencePiece compiled to WebAssembly), translates a SentencePiece package with no Python.
Its greedy and beam ids must be ours on 200 Multi30k test lines, fp32 and int8: the same graphs, the same
ONNX Runtime release and threads, the same batches and the search written as nmt/decode/search.py is, so
no tie can part them. `make js` installs it; .ci/run does, and sets NMT_REQUIRE_PEERS=1 so that these tests
fail rather than skip without it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support.corpus import ROOT
from support.pairs import FR_CS, _lines

pytestmark = pytest.mark.slow
JS = ROOT / "js"
CLI = JS / "bin" / "nmt-translate.js"


def node() -> str:
    found = shutil.which("node")
    if found is None or not (JS / "node_modules" / "onnxruntime-node").is_dir():
        if os.environ.get("NMT_REQUIRE_PEERS"):
            pytest.fail("node or js/node_modules is missing: `make js` runs npm ci in js/")
        pytest.skip("the JavaScript consumer is not installed here: run `make js`")
    return found


def run_js(package: Path, lines: list[str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([node(), str(CLI), "--package", str(package), "--threads", "1", *args],
                          input="".join(f"{line}\n" for line in lines), capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def lines() -> list[str]:
    """200 Multi30k test lines that the model never saw (the tiny corpus cuts lines 0-300 of the same file)."""
    return _lines(FR_CS / "test_2016_flickr.fr.gz")[300:500]


@pytest.mark.parametrize("int8", [False, True], ids=["fp32", "int8"])
def test_node_decodes_the_package_as_python_does(trained: Path, lines: list[str], int8: bool) -> None:
    from nmt.runtime.translator import OnnxTranslator

    package = trained / "models" / "onnx"
    for beam in (1, 4):
        ours = OnnxTranslator.from_dir(package, device="cpu", threads=1, int8=int8, beam_size=beam)
        done = run_js(package, lines, "--ids", "--beam-size", str(beam), *(["--int8"] if int8 else []))
        assert done.returncode == 0, done.stderr[-2000:]
        theirs = [json.loads(line) for line in done.stdout.splitlines()]
        expected = [hyp for _, hyp in ours.search(lines)]
        assert sum(map(len, expected)) > 5 * len(lines)  # it says something
        differ = [i for i, (a, b) in enumerate(zip(theirs, expected)) if a != b]
        assert len(theirs) == len(lines) and not differ, (beam, differ[:5])
    texts = run_js(package, lines[:20], *(["--int8"] if int8 else []))  # the card's beam, SentencePiece decoding
    assert texts.returncode == 0, texts.stderr[-2000:]
    assert texts.stdout.splitlines() == ours.__class__.from_dir(package, device="cpu", threads=1,
                                                                int8=int8).translate(lines[:20])


def test_a_package_js_cannot_run_says_why_in_one_line(trained: Path, tmp_path: Path) -> None:
    ct2 = run_js(trained / "models" / "ct2", ["Un homme."])
    assert ct2.returncode == 1 and "CTranslate2 model folder" in ct2.stderr and "    at " not in ct2.stderr
    bpe = tmp_path / "bpe"
    shutil.copytree(trained / "models" / "onnx", bpe)
    card = json.loads((bpe / "model.json").read_text())
    card["vocab"]["kind"] = "bpe"
    (bpe / "model.json").write_text(json.dumps(card))
    done = run_js(bpe, ["Un homme."])
    assert done.returncode == 1 and "vocab.kind: sentencepiece" in done.stderr and "    at " not in done.stderr
    changed = tmp_path / "changed"
    shutil.copytree(trained / "models" / "onnx", changed)
    with (changed / "src.vocab").open("a") as fh:
        fh.write("extra\n")
    done = run_js(changed, ["Un homme."])
    assert done.returncode == 1 and "src.vocab: SHA-256 differs" in done.stderr
    done = run_js(tmp_path / "nowhere", ["Un homme."])
    assert done.returncode == 1 and "no readable model.json" in done.stderr


def test_the_javascript_unit_tests_pass() -> None:
    done = subprocess.run([node(), "--test", "test/"], cwd=JS, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "# fail 0" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.fixture(scope="module")
def site(trained: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The in-browser translator page of the trained package, as build-page.js writes it."""
    out = tmp_path_factory.mktemp("page") / "site"
    built = subprocess.run([node(), str(JS / "bin" / "build-page.js"), "--package", str(trained / "models" / "onnx"),
                            "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    return out


# The page's own modules, run in the page on `lines` (through its import map): the ids its Translator finds.
IN_PAGE = """(async () => {
  const ort = await import("onnxruntime-web");
  const { Translator } = await import("./src/translator.js");
  const base = new URL("./package/", location.href);
  const get = async (n) => { const r = await fetch(new URL(n, base)); if (!r.ok) throw new Error(n); return r; };
  const files = { text: async (n) => (await get(n)).text(),
                  bytes: async (n) => new Uint8Array(await (await get(n)).arrayBuffer()) };
  const t = await Translator.open(files, ort, "package",
                                  { beamSize: BEAM, sessionOptions: { executionProviders: ["wasm"] } });
  return await t.translateIds(LINES);
})()"""


def test_the_page_translates_in_headless_chromium_as_python_does(trained: Path, site: Path, lines: list[str],
                                                                  tmp_path: Path) -> None:
    """In fp32 the page's ids are Python's but where the two part at a tie (the code's own rule: our model's
    scores of both choices within TIE; WebAssembly's kernels sum in another order than native ONNX Runtime's),
    greedy on 20 lines and the card's beam on the 5 the page is then given (the same batch as Python's); typed
    into and clicked, the page shows Python's text wherever those ids agree. int8: WebAssembly's int8 kernels
    round otherwise, so it is checked to translate."""
    from nmt.config.evaluate import Decoding
    from nmt.decode.translator import Translator
    from nmt.runtime.translator import OnnxTranslator
    from support.browser import Browser, chromium
    from support.ties import TIE, tie_gap
    from tools.browser import static_site

    package = trained / "models" / "onnx"
    decoding = json.loads((package / "model.json").read_text())["decoding"]
    scorer = Translator.from_file(trained / "models" / "model.pt", Decoding(beam_size=1))
    chromium()  # skip (or fail, with NMT_REQUIRE_BROWSER) before starting anything
    with static_site(site) as url:  # a plain static file server: the page has no server code
        browser = Browser(tmp_path / "profile")
        try:
            page, status = browser.page, "document.getElementById('status')"
            page.goto(f"{url}/index.html")
            page.wait_for(f"{status}.textContent === 'ready' || {status}.className === 'error'", 120)
            assert page.evaluate(f"{status}.textContent") == "ready"
            agreed: list[bool] = []
            for beam, n in ((1, 20), (decoding["beam_size"], 5)):
                in_page = page.evaluate(IN_PAGE.replace("BEAM", str(beam)).replace("LINES", json.dumps(lines[:n])))
                ours = OnnxTranslator.from_dir(package, device="cpu", threads=1, beam_size=beam)
                expected = [hyp for _, hyp in ours.search(lines[:n])]
                assert sum(map(len, expected)) > 5 * n  # it says something
                for line, mine, theirs in zip(lines[:n], expected, in_page, strict=True):
                    if mine != theirs:
                        src = scorer.source_ids(next(iter(scorer.tokenize([line])))[0])
                        limit = min(len(src) + decoding["max_extra"], scorer.max_len - 1)  # the search's
                        gap = tie_gap(scorer, src, mine, theirs, beam, decoding["alpha"], limit)
                        assert abs(gap) < TIE, (beam, line, mine, theirs, gap)
                agreed = [a == b for a, b in zip(expected, in_page)]  # the card's beam's, the page's default
            page.type("#source", "\n".join(lines[:5]))
            page.click("#translate")
            page.wait_for(f"{status}.textContent.startsWith('done') || {status}.className === 'error'", 120)
            assert page.evaluate(f"{status}.textContent").startswith("done: 5 sentences")
            got = page.evaluate("document.getElementById('target').value").split("\n")
            want = OnnxTranslator.from_dir(package, device="cpu", threads=1).translate(lines[:5])
            assert sum(agreed) >= 3, agreed  # a tie is rare: most lines must agree for this to say anything
            assert len(got) == 5 and [a for a, same in zip(got, agreed, strict=True) if same] == \
                [b for b, same in zip(want, agreed, strict=True) if same]
            page.evaluate("document.getElementById('target').value = ''; delete document.body.dataset.seconds")
            page.click("#int8")  # WebAssembly's int8 kernels round otherwise than native ONNX Runtime's
            page.click("#translate")
            page.wait_for(f"document.body.dataset.seconds || {status}.className === 'error'", 120)
            got = page.evaluate("document.getElementById('target').value").split("\n")
            assert page.evaluate(f"{status}.textContent").startswith("done: 5 sentences") and len(got) == 5
            assert all(got)
            assert page.screenshot(tmp_path / "page.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        finally:
            browser.close()


def test_nmt_serve_offers_the_page_as_translate_in_this_browser(trained: Path, site: Path, tmp_path: Path) -> None:
    """`nmt serve --browser-page SITE`: the demo page links to /browser/, which serves the page's files with the
    types a browser needs (module scripts, WebAssembly) and nothing outside SITE; a folder that is not such a page
    is refused before any model loads, naming the option and how to write one."""
    import httpx

    from nmt.errors import ConfigError
    from nmt.serve.api.browser import check_site
    from support.serve import ThreadServer, config

    package = trained / "models" / "onnx"
    server = ThreadServer(config(package, browser_page=site))
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            assert 'href="/browser/"' in client.get("/").text
            index = client.get("/browser/")
            assert index.status_code == 200 and index.content == (site / "index.html").read_bytes()
            wasm = client.get("/browser/vendor/ort-wasm-simd-threaded.wasm")
            assert wasm.headers["content-type"] == "application/wasm" and wasm.content[:4] == b"\0asm"
            assert "javascript" in client.get("/browser/vendor/ort.wasm.min.mjs").headers["content-type"]
            assert client.get("/browser/package/model.json").json()["vocab"]["kind"] == "sentencepiece"
            assert client.get("/browser/%2e%2e/%2e%2e/model.json").status_code == 404
    finally:
        server.close()
    plain = ThreadServer(config(package))
    try:
        assert "/browser/" not in httpx.get(plain.url + "/", timeout=30).text
        assert httpx.get(plain.url + "/browser/", timeout=30).status_code == 404
    finally:
        plain.close()
    with pytest.raises(ConfigError, match=r"--browser-page .*no index.html.*build-page.js"):
        check_site(tmp_path)
    bpe = tmp_path / "bpe"
    shutil.copytree(site, bpe)
    card = json.loads((bpe / "package" / "model.json").read_text())
    card["vocab"]["kind"] = "bpe"
    (bpe / "package" / "model.json").write_text(json.dumps(card))
    with pytest.raises(ConfigError, match="not an ONNX package of a SentencePiece model"):
        check_site(bpe)
