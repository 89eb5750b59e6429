"""HTML, files and glossaries as people use them, against a real server on the test package: `format: html`,
`/translate_file` and `/download_file` (.txt, .srt, .docx; 413, 415, 404, keys), glossaries and
do-not-translate spans (a file per direction and per request), and `nmt translate` on a .docx."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import docx
import httpx
import pytest

from nmt.runtime.translator import OnnxTranslator
from nmt.translate.markup.html import parse_html
from support.onnx import sentences
from support.serve import ThreadServer, ask, config, offline, offline_html, post

pytestmark = pytest.mark.network

TIMING = "00:00:01,000 --> 00:00:02,500"


@pytest.fixture(scope="module")
def translator(package: Path) -> OnnxTranslator:
    return OnnxTranslator.from_dir(package, device="cpu", threads=1)


@pytest.fixture(scope="module")
def server(package: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadServer]:
    folder = tmp_path_factory.mktemp("glossary")
    (folder / "de-en.tsv").write_text("# term\ttranslation\ns3 s4\tZIELWORT\n", encoding="utf-8")
    s = ThreadServer(config(package, max_wait_ms=20, glossary=(str(folder / "de-en.tsv"),), max_file_bytes=100_000,
                            files_dir=tmp_path_factory.mktemp("files")))
    yield s
    s.close()


def tags(html: str) -> list[str]:
    return re.findall(r"<[^>]+>", html)


def test_html_keeps_its_markup_and_translates_across_inline_tags(server: ThreadServer, package: Path) -> None:
    html = ('<p class="x">s1 s2 <b>s5</b> s6 s7</p>\n<!-- note -->\n<ul><li>s8 <i>s9 s1</i></li></ul>'
            '<script>var s1 = "s2";</script><p translate="no">s3 s3</p>')
    answer = post(server.url, json=ask(html, format="html")).json()["translatedText"]
    assert tags(answer) == tags(html)  # every tag, attribute and comment as written, in order
    assert '<script>var s1 = "s2";</script>' in answer and '<p translate="no">s3 s3</p>' in answer
    doc = parse_html(html)
    assert len(doc.units) == 2 and "s5" in doc.units[0]  # the inline <b> inside its sentence's unit
    assert answer == offline_html(package, html)  # the server's path, unit by unit


def test_translate_file_answers_a_url_and_the_download_keeps_the_format(server: ThreadServer, translator) -> None:
    srt = f"1\n{TIMING}\ns1 s2 s3\n\n2\n00:00:03,000 --> 00:00:04,000\n<i>s5 s6</i>\n"
    r = post(server.url, path="/translate_file", data={"source": "de", "target": "en"},
             files={"file": ("talk.srt", srt.encode(), "application/x-subrip")})
    assert r.status_code == 200, r.text
    url = r.json()["translatedFileUrl"]
    assert re.fullmatch(rf"{re.escape(server.url)}/download_file/[A-Za-z0-9_-]{{32}}\.talk\.srt", url)
    got = httpx.get(url, timeout=30)
    assert got.status_code == 200 and 'filename="talk.srt"' in got.headers["content-disposition"]
    lines = got.text.split("\n")
    assert lines[:2] == ["1", TIMING] and lines[5] == "00:00:03,000 --> 00:00:04,000"  # timings untouched
    assert lines[2] == offline(translator, ["s1 s2 s3"])[0] and lines[6].startswith("<i>")

    document = docx.Document()
    paragraph = document.add_paragraph("s1 s2 ")
    paragraph.add_run("s5").bold = True
    paragraph.add_run(" s6")
    buffer = io.BytesIO()
    document.save(buffer)
    r = post(server.url, path="/translate_file", data={"source": "de", "target": "en"},
             files={"file": ("report.docx", buffer.getvalue())})
    back = docx.Document(io.BytesIO(httpx.get(r.json()["translatedFileUrl"], timeout=30).content))
    runs = back.paragraphs[0].runs
    assert any(run.bold for run in runs)  # the bold run kept (its exact extent: tests/serve/test_documents.py)


def test_file_errors_name_the_limit_or_the_kind(server: ThreadServer, package: Path, tmp_path: Path) -> None:
    def send(name: str, data: bytes) -> httpx.Response:
        return post(server.url, path="/translate_file", data={"source": "de", "target": "en"},
                    files={"file": (name, data)})

    assert send("scan.pdf", b"%PDF-1.4").status_code == 415
    assert send("big.txt", b"s1 s2\n" * 20000).status_code == 413  # over --max-file-bytes
    assert httpx.get(f"{server.url}/download_file/{'A' * 32}.nothing.txt", timeout=30).status_code == 404
    missing = post(server.url, path="/translate_file", data={"source": "de", "target": "en"})
    assert missing.status_code == 400 and "file" in missing.json()["error"]
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"k" * 20: {}}))
    locked = ThreadServer(config(package, api_keys=keys))
    try:
        r = post(locked.url, path="/translate_file", data={"source": "de", "target": "en", "api_key": "k" * 20},
                 files={"file": ("a.txt", b"s1 s2\n")})
        url = r.json()["translatedFileUrl"]
        assert httpx.get(url, timeout=30).status_code == 403  # the download needs the key too
        assert httpx.get(url, params={"api_key": "k" * 20}, timeout=30).status_code == 200
    finally:
        locked.close()


def test_glossary_terms_and_do_not_translate_spans_come_through(server: ThreadServer, translator) -> None:
    plain = sentences(5, seed=4)
    # no term: as before
    assert post(server.url, json=ask(plain)).json()["translatedText"] == offline(translator, plain)
    text = "s1 s2 s3 s4 s6"
    assert "ZIELWORT" in post(server.url, json=ask(text)).json()["translatedText"]  # --glossary de-en:FILE
    asked = post(server.url, json=ask(text, glossary={"s6": "SECHS"}, do_not_translate=["s1 s2"])).json()
    assert "SECHS" in asked["translatedText"] and "ZIELWORT" in asked["translatedText"]
    assert "s1 s2" in asked["translatedText"]
    bad = post(server.url, json=ask(text, glossary=["s6"]))
    assert bad.status_code == 400 and "glossary must be an object" in bad.json()["error"]


def test_a_glossary_for_a_direction_without_a_package_is_refused(package: Path, tmp_path: Path) -> None:
    from nmt.errors import DataError

    terms = tmp_path / "en-de.tsv"
    terms.write_text("a\tb\n", encoding="utf-8")
    with pytest.raises(DataError, match="no package translates en-de"):
        ThreadServer(config(package, glossary=(str(terms),)))


def test_nmt_translate_dispatches_a_docx_by_its_extension(package: Path, tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("s1 s2 s3")
    source, target = tmp_path / "in.docx", tmp_path / "out.docx"
    document.save(source)
    run = subprocess.run([sys.executable, "-m", "nmt.cli", "translate", "--model", str(package), "--input",
                          str(source), "--output", str(target)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    translator = OnnxTranslator.from_dir(package, device="cpu", threads=1)
    assert docx.Document(target).paragraphs[0].text == offline(translator, ["s1 s2 s3"])[0]


def test_an_html_file_comes_back_as_format_html_answers_through_the_server_and_the_cli(
        server: ThreadServer, translator, package: Path, tmp_path: Path) -> None:
    """Tag pairs are put back by the model's alignment on every path: `format: html`, the same page
    uploaded to /translate_file, and `nmt translate --input page.html` without a server."""
    html = '<p>s1 s2 <b>s5 s6</b> s7 <a href="#x">s8</a> s9.</p>'
    want = offline_html(package, html)
    assert want.count("<b>") == 1 and want.count('<a href="#x">') == 1
    assert post(server.url, json=ask(html, format="html")).json()["translatedText"] == want
    r = post(server.url, path="/translate_file", data={"source": "de", "target": "en"},
             files={"file": ("page.html", html.encode(), "text/html")})
    assert httpx.get(r.json()["translatedFileUrl"], timeout=30).text == want
    source, target = tmp_path / "page.html", tmp_path / "page.en.html"
    source.write_text(html, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "nmt.cli", "translate", "--model", str(package), "--input",
                          str(source), "--output", str(target)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert target.read_text(encoding="utf-8") == want


def test_a_page_being_aligned_holds_up_no_plain_text_request(server: ThreadServer, translator,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The alignment runs on its own thread: while a page's pairs are being put back, a plain-text
    request (cut into sentences on the text thread) is answered."""
    import threading

    from nmt.serve.api import translating

    started, release, real = threading.Event(), threading.Event(), translating._finished

    def slow(prepared, *args):
        if any(p is not None for p in prepared.plains):  # the page's units, put back on the align thread
            started.set()
            release.wait(60)
        return real(prepared, *args)

    monkeypatch.setattr(translating, "_finished", slow)
    page: dict[str, httpx.Response] = {}
    worker = threading.Thread(target=lambda: page.update(r=post(server.url, json=ask("<p>s1 <b>s2</b> s3</p>",
                                                                                     format="html"))))
    worker.start()
    try:
        assert started.wait(30)
        plain = post(server.url, timeout_s=10, json=ask("s4 s5"))
        assert plain.status_code == 200 and plain.json()["translatedText"] == offline(translator, ["s4 s5"])[0]
        assert "r" not in page  # the page was still waiting for its alignment
    finally:
        release.set()
        worker.join(60)
    assert page["r"].status_code == 200 and "<b>" in page["r"].json()["translatedText"]


def _srt(text: str) -> bytes:
    return f"1\n{TIMING}\n{text}\n\n".encode()


def _docx(text: str) -> bytes:
    document, out = docx.Document(), io.BytesIO()
    document.add_paragraph(text)
    document.save(out)
    return out.getvalue()


def _text_of(name: str, data: bytes) -> str:
    return "\n".join(p.text for p in docx.Document(io.BytesIO(data)).paragraphs) if name.endswith(".docx") \
        else data.decode("utf-8")


@pytest.mark.parametrize("name, data", [
    ("page.html", b'<p>s1 s2 s3 s4 <b>s5 s6</b> s7.</p>'),
    ("film.srt", _srt("s1 s3 s4 <i>s5</i> s6")),
    ("letter.docx", _docx("s2 s3 s4 s5. s6 s7")),
])
def test_the_cli_and_translate_file_give_one_file_the_same_answer_with_a_glossary(
        server: ThreadServer, package: Path, tmp_path: Path, name: str, data: bytes) -> None:
    """One unit path: `nmt translate --glossary` swaps a file's terms in exactly as the server does
    for the same file uploaded to /translate_file with that glossary (the server's --glossary)."""
    r = post(server.url, path="/translate_file", data={"source": "de", "target": "en"}, files={"file": (name, data)})
    served = _text_of(name, httpx.get(r.json()["translatedFileUrl"], timeout=30).content)
    assert "ZIELWORT" in served
    terms, source, target = tmp_path / "de-en.tsv", tmp_path / name, tmp_path / f"out.{name}"
    terms.write_text("# term\ttranslation\ns3 s4\tZIELWORT\n", encoding="utf-8")  # the server's (fixture)
    source.write_bytes(data)
    run = subprocess.run([sys.executable, "-m", "nmt.cli", "translate", "--model", str(package), "--input",
                          str(source), "--output", str(target), "--glossary", str(terms)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert _text_of(name, target.read_bytes()) == served


def test_nmt_translate_lines_with_a_glossary_as_the_server_translates_a_text(
        server: ThreadServer, package: Path, tmp_path: Path) -> None:
    lines = ["s1 s2 s3 s4 s6", "", "s5 s3 s4"]
    want = [post(server.url, json=ask(line)).json()["translatedText"] if line else "" for line in lines]
    assert "ZIELWORT" in want[0]
    terms, source = tmp_path / "de-en.tsv", tmp_path / "in.txt"
    terms.write_text("s3 s4\tZIELWORT\n", encoding="utf-8")
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "nmt.cli", "translate", "--model", str(package), "--input",
                          str(source), "--glossary", str(terms)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines() == want


@pytest.mark.fault
def test_a_full_disk_while_storing_a_translated_file_is_507_with_retry_after(server: ThreadServer,
                                                                             monkeypatch: pytest.MonkeyPatch,
                                                                             caplog: pytest.LogCaptureFixture) -> None:
    import contextlib
    import errno

    from nmt.files import atomic
    from nmt.serve.api import filestore

    @contextlib.contextmanager
    def full_disk(path, mode="w", encoding=None):
        with atomic.atomic_open(path, mode, encoding) as fh:
            class Full:
                def write(self, data: bytes) -> int:
                    raise OSError(errno.ENOSPC, "No space left on device")
            yield Full()
            fh.write(b"")

    monkeypatch.setattr(filestore, "atomic_open", full_disk)
    r = post(server.url, path="/translate_file", data={"source": "de", "target": "en"},
             files={"file": ("notes.txt", b"s1 s2 s3\n", "text/plain")})
    assert r.status_code == 507 and r.headers["retry-after"] == "60", r.text
    assert "cannot store the translated file now (its disk is full)" in r.json()["error"]
    assert any("out of disk space while writing it" in rec.getMessage() and "notes.txt" in rec.getMessage()
               for rec in caplog.records)
