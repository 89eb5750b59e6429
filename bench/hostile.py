"""The hostile inputs of the serving review against a real `nmt serve`: each answered how, how fast,
at what memory, and how long /livez took meanwhile.

Loopback only; one request per input, bounded in time. The server (its own process, torch blocked,
`--api-keys` on) gets, one after another: a .txt of one line `x` + 80,000 spaces + `y`; HTML with
`<b>x</b></i>` repeated (240 KB); an .srt cue of 8,000 nested `<i>`; an .srt of unclosed `<b `
repeated; a .docx of ~1.5 million one-letter paragraphs (a small zip of tens of MiB of XML); a .docx
of 150,000 one-letter paragraphs; an HTML upload without a key; a /translate with a 400-word
glossary term over 16 texts of 2,000 words. A thread asks /livez every 20 ms throughout.

Per input: the status and the first line of the answer, seconds to answer, the server's peak RSS
(VmHWM) growth, /livez's slowest answer and its p99 while the input was handled. Criteria
(reported, not asserted): every answer a 2xx, a 4xx or a bounded refusal (503 busy, 504 past
--request-timeout), never a 500 or no answer; /livez's slowest answer under 100 ms.

    python -m bench.hostile [--model models/onnx] [--out bench/results]
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

import httpx

from bench.common.record import RESULTS, write_result
from bench.common.server import HOST, Server

ROOT = Path(__file__).resolve().parents[1]
KEY = "hostile-bench-key-0123456789"
W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def docx_of(paragraphs: int) -> bytes:
    """A minimal .docx whose body is `paragraphs` one-letter paragraphs."""
    body = "<w:p><w:r><w:t>a</w:t></w:r></w:p>" * paragraphs
    parts = {
        "[Content_Types].xml": '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/'
        'document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
        "</Types>",
        "_rels/.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
        'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
        '2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
        "word/document.xml": f'<?xml version="1.0" encoding="UTF-8"?><w:document {W}><w:body>{body}</w:body>'
                             "</w:document>",
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, text)
    return out.getvalue()


def inputs(scale: float) -> list[tuple[str, dict[str, Any]]]:
    """(name, httpx.post keyword arguments) of each hostile input; `scale` shrinks them for --smoke."""
    n = lambda k: max(1, int(k * scale))  # noqa: E731
    form = {"source": "de", "target": "en", "api_key": KEY}
    term = " ".join(["w"] * 400)
    text = " ".join(["w"] * n(2000))  # 4,000 characters: inside --max-chars, so the glossary is what is tested
    return [
        ("txt: x, 80,000 spaces, y", {"data": form, "files": {"file": ("a.txt", b"x" + b" " * n(80_000) + b"y")}}),
        ("html: <b>x</b></i> repeated", {"data": form, "files": {"file": ("a.html", b"<b>x</b></i>" * n(20_000))}}),
        ("srt: 8,000 nested <i>", {"data": form, "files": {"file": ("a.srt", b"1\n00:00:01,000 --> 00:00:02,000\n"
                                                                             + b"<i>" * n(8000) + b"x\n")}}),
        ("srt: unclosed <b repeated", {"data": form, "files": {"file": ("a.srt", b"1\n00:00:01,000 --> 00:00:02,000\n"
                                                                                 + b"<b " * n(20_000) + b"\n")}}),
        ("docx: 1.5M tiny paragraphs", {"data": form, "files": {"file": ("a.docx", docx_of(n(1_500_000)))}}),
        ("docx: 150k tiny paragraphs", {"data": form, "files": {"file": ("b.docx", docx_of(n(150_000)))}}),
        ("html upload without a key", {"data": {"source": "de", "target": "en"},
                                       "files": {"file": ("a.html", b"<p>Wort</p>" * n(9000))}}),
        ("glossary: 400-word term, 16 x 2,000 words", {"json": {"q": [text] * 16, "source": "de", "target": "en",
                                                               "api_key": KEY, "glossary": {term: "word"}}}),
    ]


def peak_rss_mib(server: Server) -> float:
    status = Path(f"/proc/{server.proc.pid}/status").read_text()
    return int(re.search(r"^VmHWM:\s+(\d+)", status, re.M).group(1)) / 1024


def probe(port: int, stop: threading.Event, times: list[float]) -> None:
    """/livez every 20 ms until `stop`, at least once (an input answered before the thread's first probe
    still gets one); each answer's milliseconds (a failed one counts as 10 s)."""
    with httpx.Client(timeout=10) as client:
        while True:
            started = time.perf_counter()
            try:
                ok = client.get(f"http://{HOST}:{port}/livez").status_code == 200
            except httpx.HTTPError:
                ok = False
            times.append((time.perf_counter() - started) * 1000 if ok else 10_000.0)
            if stop.wait(0.02):
                break


def measure(server: Server, name: str, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    path = "/translate_file" if "files" in request else "/translate"
    stop, times = threading.Event(), []
    prober = threading.Thread(target=probe, args=(server.port, stop, times))
    rss0 = peak_rss_mib(server)
    prober.start()
    started = time.perf_counter()
    try:
        r = httpx.post(f"http://{HOST}:{server.port}{path}", timeout=timeout_s, **request)
        status, answer = r.status_code, r.text
    except httpx.HTTPError as exc:
        status, answer = 0, f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - started
    stop.set()
    prober.join()
    times.sort()
    row = {"input": name, "status": status, "answer": answer.splitlines()[0][:160] if answer else "",
           "seconds": round(seconds, 3), "peak_rss_growth_mib": round(peak_rss_mib(server) - rss0, 1),
           "livez_probes": len(times), "livez_max_ms": round(times[-1], 1) if times else None,
           "livez_p99_ms": round(times[int(0.99 * (len(times) - 1))], 1) if times else None}
    print(f"{name:<42} {status} {seconds:8.2f} s  peak RSS +{row['peak_rss_growth_mib']} MiB  "
          f"/livez max {row['livez_max_ms']} ms  {row['answer'][:70]}", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, default=ROOT / "models/onnx", help="package to serve (default: models/onnx)")
    p.add_argument("--timeout-s", type=float, default=120, help="the most one input may take (default 120)")
    p.add_argument("--smoke", action="store_true", help="inputs a hundredth of the size; writes nothing unless --out")
    p.add_argument("--out", type=Path, default=None, help="write <out>/hostile.json (default: bench/results)")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hostile-"))
    keys = work / "keys.json"
    keys.write_text(json.dumps({KEY: {}}))
    options = ["--api-keys", str(keys), *(["--request-timeout", "5"] if args.smoke else [])]
    server = Server(args.model.resolve(), False, 0, options, work / "serve.log")
    try:
        rows = [measure(server, name, request, args.timeout_s) for name, request in inputs(0.01 if args.smoke else 1)]
    finally:
        server.stop()
    results = {"model": str(args.model), "smoke": args.smoke, "inputs": rows,
               "criteria": {"no_error": all(r["status"] and (r["status"] < 500 or r["status"] in (503, 504))
                                            for r in rows),
                            "livez_max_ms": max(r["livez_max_ms"] or 0 for r in rows)}}
    print("criteria: " + json.dumps(results["criteria"]), flush=True)
    out = args.out if args.out is not None else (None if args.smoke else RESULTS)
    if out is not None:
        write_result("hostile", results, repeats=1, out_dir=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
