"""The demo page at / in headless Chromium, as a person uses it: the languages picked from the server's
(German to English for a de-en package), type German, click Translate, read the English and the
latency, take a screenshot; with nothing loaded from elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nmt.runtime.translator import OnnxTranslator
from support.browser import Browser, chromium
from support.serve import ThreadServer, config, offline, offline_html

pytestmark = [pytest.mark.network, pytest.mark.slow]


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    chromium()  # skip (or fail, with NMT_REQUIRE_BROWSER) before starting anything
    b = Browser(tmp_path / "profile")
    yield b
    b.close()


def test_type_click_read_the_translation_and_screenshot(package: Path, browser: Browser, tmp_path: Path) -> None:
    server = ThreadServer(config(package))
    try:
        page = browser.page
        requested: list[str] = []
        page.goto(server.url + "/")
        assert page.wait_for("document.getElementById('to').value") == "en"
        assert page.evaluate("[...document.getElementById('from').options].map(o => o.textContent)") == [
            "detect the language", "German"]
        assert page.evaluate("document.getElementById('from').value") == "de"
        page.type("#source", "s1 s2 s3\ns4 s5")
        page.click("#translate")
        status = page.wait_for("(t => /^\\d+ ms$/.test(t) && t)(document.getElementById('status').textContent)")
        output = page.evaluate("document.getElementById('output').textContent")
        entries = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
        requested += [page.evaluate("location.href"), *entries]
        shot = page.screenshot(tmp_path / "demo.png")
    finally:
        server.close()
    want = offline(OnnxTranslator.from_dir(package, device="cpu", threads=1), ["s1 s2 s3", "s4 s5"])
    assert output == "\n".join(want) and status.endswith(" ms")
    assert all(url.startswith(server.url) for url in requested), requested  # no CDN, nothing from elsewhere
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 2000


def test_html_mode_and_a_file_upload(package: Path, browser: Browser, tmp_path: Path) -> None:
    """The page's HTML box sends format html (the markup comes back); a file chosen in the page is
    sent to /translate_file and its download link appears, serving the translated file."""
    import httpx

    server = ThreadServer(config(package))
    upload = tmp_path / "note.txt"
    upload.write_text("s1 s2 s3\n", encoding="utf-8")
    try:
        page = browser.page
        page.goto(server.url + "/")
        page.wait_for("document.getElementById('to').value")
        page.type("#source", "<p>s1 <b>s2</b> s3</p>")
        page.click("#html")
        page.click("#translate")
        page.wait_for("(t => /^\\d+ ms$/.test(t) && t)(document.getElementById('status').textContent)")
        html = page.evaluate("document.getElementById('output').textContent")
        root = page.call("DOM.getDocument")["root"]["nodeId"]
        node = page.call("DOM.querySelector", nodeId=root, selector="#file")["nodeId"]
        page.call("DOM.setFileInputFiles", files=[str(upload)], nodeId=node)
        page.click("#upload")
        href = page.wait_for("(a => !a.hidden && a.href)(document.getElementById('download'))")
        downloaded = httpx.get(href, timeout=30).text
    finally:
        server.close()
    translator = OnnxTranslator.from_dir(package, device="cpu", threads=1)
    assert html == offline_html(package, "<p>s1 <b>s2</b> s3</p>") and "<b>" in html
    assert href.startswith(server.url + "/download_file/") and downloaded == offline(translator, ["s1 s2 s3"])[0] + "\n"
