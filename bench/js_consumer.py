"""The JavaScript consumer (js/) against Python's ONNX package, side by side in one run (issue 76).

The same package, the same lines and the same intra-op threads (each layout of `--threads`): for fp32 and int8
graphs, greedy and beam search, Python's `OnnxTranslator.translate` (in this process) and the Node consumer's
`Translator.translate` (js/bench/speed.js, onnxruntime-node, in a process of its own) each translate the lines
once untimed, then `--repeats` times; each keeps its best pass. Their outputs are compared line by line. Then the
in-browser page (`node js/bin/build-page.js`, served by a plain static file server on 127.0.0.1) is opened in
headless Chromium: the time from navigation to "ready" (onnxruntime-web's WebAssembly, SentencePiece and the fp32
sessions), and the time the page itself reports for a paragraph of `--paragraph` sentences (one per line), the
first pass and the best of `--repeats`; its output is compared with Python's. `--screenshot FILE` saves the page
after it translated (docs/export.md shows it).

    python -m bench.js_consumer --package DIR --lines FILE [--skip 300] [--sentences 200] [--threads 1 2]
                                [--repeats 3] [--paragraph 20] [--screenshot bench/results/js_consumer_page.png]
                                [--label "what the package is"]

`make js` installs js/node_modules (npm ci); Chromium: apt-get install chromium (or NMT_CHROMIUM).

Results (`bench/results/js_consumer.json`, key `results`): `package` (the path given), `languages`, `model`
(the card's architecture), `vocab_size` (target), `sentences`, `lines` (the file and skipped lines);
`label` (--label), `beam_default` (the card's beam, the page's); `rows`: per threads, graphs (fp32, int8)
and beam size {threads, graphs, beam_size, python_sentences_per_s, node_sentences_per_s (best passes), node_over_python,
python_seconds, node_seconds (every timed pass), node_open_s (package open: files, SHA-256 checks,
sessions), identical (lines whose translations are equal)}; `browser`: {sentences, ready_s, first_s,
best_s, seconds (every pass; best_s leaves the first out), identical, graphs "fp32", threads 1, chromium}.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common.record import RESULTS, write_result
from nmt.runtime.translator import OnnxTranslator
from tools.browser import Browser, find_chromium, static_site
from tools.gpu.children import die_with_parent

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "js"
TIMEOUT_S = 1800  # one Node pass over the lines, all repeats


def read_lines(path: Path, skip: int, n: int) -> list[str]:
    data = path.read_bytes()
    text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")
    lines = text.splitlines()[skip:skip + n]
    if len(lines) < n:
        raise SystemExit(f"{path}: {len(lines)} lines after skipping {skip}, {n} asked (--sentences)")
    return lines


def node() -> str:
    found = shutil.which("node")
    if found is None or not (JS / "node_modules" / "onnxruntime-node").is_dir():
        raise SystemExit("node or js/node_modules is missing: `make js` runs npm ci in js/")
    return found


def python_side(package: Path, lines: list[str], threads: int, int8: bool, beam: int,
                repeats: int) -> tuple[list[float], list[str]]:
    translator = OnnxTranslator.from_dir(package, device="cpu", threads=threads, int8=int8, beam_size=beam)
    outputs = translator.translate(lines)  # warm-up, untimed
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        translator.translate(lines)
        seconds.append(time.perf_counter() - start)
    return seconds, outputs


def node_side(package: Path, lines_file: Path, threads: int, int8: bool, beam: int, repeats: int) -> dict[str, Any]:
    cmd = [node(), str(JS / "bench" / "speed.js"), "--package", str(package), "--lines", str(lines_file), "--threads",
           str(threads), "--beam-size", str(beam), "--repeats", str(repeats), *(["--int8"] if int8 else [])]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, preexec_fn=die_with_parent)
    if done.returncode != 0:
        raise SystemExit(f"the Node consumer failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def browser_side(package: Path, lines: list[str], expected: list[str], repeats: int,
                 screenshot: Path | None) -> dict[str, Any]:
    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("headless Chromium not found (Debian: apt-get install chromium; or set NMT_CHROMIUM)")
    version = subprocess.run([chromium, "--version"], capture_output=True, text=True).stdout.strip()
    # Chromium's helper processes may still write its profile a moment after it exits: not an error of the bench
    with tempfile.TemporaryDirectory(prefix="js-consumer-", ignore_cleanup_errors=True) as tmp:
        site = Path(tmp) / "site"
        built = subprocess.run([node(), str(JS / "bin" / "build-page.js"), "--package", str(package), "--out",
                                str(site)], capture_output=True, text=True, timeout=300)
        if built.returncode != 0:
            raise SystemExit(f"build-page.js failed:\n{built.stderr[-3000:]}")
        with static_site(site) as url:
            browser = Browser(Path(tmp) / "profile", chromium)
            try:
                page, status = browser.page, "document.getElementById('status')"
                page.call("Emulation.setDeviceMetricsOverride", width=1200, height=760, deviceScaleFactor=1,
                          mobile=False)
                start = time.perf_counter()
                page.goto(f"{url}/index.html")
                page.wait_for(f"{status}.textContent === 'ready' || {status}.className === 'error'", 300)
                ready_s = time.perf_counter() - start
                if page.evaluate(f"{status}.textContent") != "ready":
                    raise SystemExit(f"the page did not open the package: {page.evaluate(f'{status}.textContent')}")
                page.type("#source", "\n".join(lines))
                seconds, got = [], []
                for _ in range(1 + repeats):
                    page.evaluate("delete document.body.dataset.seconds")
                    page.click("#translate")
                    page.wait_for(f"document.body.dataset.seconds || {status}.className === 'error'", 600)
                    if page.evaluate(f"{status}.className") == "error":
                        raise SystemExit(f"the page failed: {page.evaluate(f'{status}.textContent')}")
                    seconds.append(float(page.evaluate("document.body.dataset.seconds")))
                    got = page.evaluate("document.getElementById('target').value").split("\n")
                if screenshot is not None:
                    screenshot.parent.mkdir(parents=True, exist_ok=True)
                    page.screenshot(screenshot)
            finally:
                browser.close()
    return {"sentences": len(lines), "graphs": "fp32", "threads": 1, "chromium": version, "ready_s": ready_s,
            "first_s": seconds[0], "best_s": min(seconds[1:]), "seconds": seconds,
            "identical": sum(a == b for a, b in zip(got, expected))}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--package", type=Path, required=True, help="an ONNX package of a SentencePiece model "
                   "(models/onnx of a model trained with vocab.kind: sentencepiece)")
    p.add_argument("--lines", type=Path, required=True, help="source sentences, one per line (.gz read as gzip)")
    p.add_argument("--skip", type=int, default=0, help="lines of --lines to skip first (default: 0)")
    p.add_argument("--sentences", type=int, default=200, help="lines translated (default: 200)")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="intra-op thread layouts, each measured "
                   "for both consumers (default: 1 2)")
    p.add_argument("--beam-sizes", type=int, nargs="+", default=[1, 4], help="searches measured (default: 1 4)")
    p.add_argument("--repeats", type=int, default=3, help="timed passes; the best is kept (default: 3)")
    p.add_argument("--paragraph", type=int, default=20, help="sentences of the browser's paragraph (default: 20)")
    p.add_argument("--screenshot", type=Path, help="save the page after translating the paragraph (PNG)")
    p.add_argument("--label", default="", help="what the package is, for the docs (default: its path alone)")
    p.add_argument("--out", type=Path, default=RESULTS, help=f"folder for js_consumer.json (default: {RESULTS})")
    args = p.parse_args()
    if args.repeats < 1 or args.sentences < 1 or args.paragraph < 1:
        p.error("--repeats, --sentences and --paragraph must be at least 1")

    card = json.loads((args.package / "model.json").read_text(encoding="utf-8"))
    if card.get("vocab", {}).get("kind") != "sentencepiece":
        raise SystemExit(f"{args.package}: not a SentencePiece package; the JavaScript consumer needs one "
                         "(vocab.kind: sentencepiece)")
    lines = read_lines(args.lines, args.skip, args.sentences)
    rows = []
    with tempfile.TemporaryDirectory(prefix="js-consumer-") as tmp:
        lines_file = Path(tmp) / "lines.txt"
        lines_file.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        print(f"{args.package}: {len(lines)} lines, best of {args.repeats}")
        print(f"{'threads':<8}{'graphs':<7}{'beam':>5}{'Python sent/s':>15}{'Node sent/s':>13}{'Node/Python':>13}"
              f"{'identical':>11}")
        for threads, int8, beam in ((t, q, b) for t in args.threads for q in (False, True) for b in args.beam_sizes):
            py_s, expected = python_side(args.package, lines, threads, int8, beam, args.repeats)
            js = node_side(args.package, lines_file, threads, int8, beam, args.repeats)
            row = {"threads": threads, "graphs": "int8" if int8 else "fp32", "beam_size": beam,
                   "python_sentences_per_s": len(lines) / min(py_s), "python_seconds": py_s,
                   "node_sentences_per_s": len(lines) / min(js["seconds"]), "node_seconds": js["seconds"],
                   "node_open_s": js["open_s"],
                   "identical": sum(a == b for a, b in zip(js["outputs"], expected))}
            row["node_over_python"] = row["node_sentences_per_s"] / row["python_sentences_per_s"]
            rows.append(row)
            print(f"{threads:<8}{row['graphs']:<7}{beam:>5}{row['python_sentences_per_s']:>15.1f}"
                  f"{row['node_sentences_per_s']:>13.1f}{row['node_over_python']:>12.2f}x"
                  f"{row['identical']:>7}/{len(lines)}")
    paragraph = lines[:args.paragraph]
    _, expected = python_side(args.package, paragraph, 1, False, card["decoding"]["beam_size"], 0)
    browser = browser_side(args.package, paragraph, expected, args.repeats, args.screenshot)
    print(f"browser: ready in {browser['ready_s']:.2f} s; {len(paragraph)} sentences in {browser['first_s']:.2f} s "
          f"(first), {browser['best_s']:.2f} s (best); identical to Python: {browser['identical']}/{len(paragraph)}")
    results = {"package": str(args.package), "label": args.label, "languages": card["languages"],
               "model": card["model"],
               "vocab_size": card["model"]["tgt_vocab_size"], "sentences": len(lines),
               "lines": {"file": args.lines.name, "skip": args.skip}, "beam_default": card["decoding"]["beam_size"],
               "rows": rows, "browser": browser}
    write_result("js_consumer", results, args.repeats, args.out)


if __name__ == "__main__":
    main()
