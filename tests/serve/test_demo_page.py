"""The demo page at / in headless Chromium, as a person uses it: type German, click Translate,
read the English and the latency, take a screenshot; with nothing loaded from elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nmt.runtime.translator import OnnxTranslator
from support.browser import Browser, chromium
from support.serve import ThreadServer, config, offline

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
        assert page.wait_for("document.getElementById('pair').textContent") == "German to English"
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
