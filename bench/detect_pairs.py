"""`/detect` of one server with every package: does it tell the served languages apart (issue 65: >= 98%
on held-out lines of each)?

One `nmt serve` (its own process, 127.0.0.1) with the packages named (default: every package under
models/: `models/onnx`, `models/general/*/onnx`, `models/pairs/*/onnx`), so the detector is the served
one: eldc over the languages the packages read and the common European ones, a guess of an unserved
language under 50% confidence giving way to the likeliest served one. The held-out lines of each served
language are Multi30k's val and test_2016_flickr sides (`<data>/multi30k/` for German and English,
`<data>/multi30k-fr-cs/` for French and Czech): image descriptions no detector here was tuned on. Every
line is sent to `POST /detect`, `--batch` lines a request; an answer is right when it names the line's
language.

    python -m bench.detect_pairs [--model models/pairs/fr-en/onnx ...] [--data ../shared/data]

Results (`bench/results/detect_pairs.json`, key `results`): packages, batch, per language the file,
lines, accuracy and what the wrong answers named; overall accuracy.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import urllib.request
from collections import Counter
from pathlib import Path

from bench.common.record import ROOT, write_result
from bench.common.server import HOST, Server

FOLDERS = ("multi30k", "multi30k-fr-cs")  # where each language's held-out sides are looked up, in order
SPLITS = ("val", "test_2016_flickr")


def packages(root: Path) -> list[Path]:
    found = [root / "models" / "onnx", *sorted((root / "models" / "general").glob("*/onnx")),
             *sorted((root / "models" / "pairs").glob("*/onnx"))]
    return [p for p in found if (p / "model.json").is_file()]


def held_out(data: Path, lang: str) -> tuple[str, list[str]]:
    """The val and test_2016_flickr lines of `lang` from the first mirror folder that has both."""
    for folder in FOLDERS:
        files = [data / folder / f"{split}.{lang}.gz" for split in SPLITS]
        if all(f.is_file() for f in files):
            lines = [line for f in files for line in gzip.decompress(f.read_bytes()).decode("utf-8").splitlines()]
            return f"{folder}/{{{','.join(SPLITS)}}}.{lang}.gz", [line for line in lines if line.strip()]
    raise SystemExit(f"no held-out lines of {lang!r} under {data} ({', '.join(FOLDERS)})")


def detect(port: int, lines: list[str]) -> list[str]:
    body = json.dumps({"q": lines}).encode()
    request = urllib.request.Request(f"http://{HOST}:{port}/detect", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as r:
        return [answer[0]["language"] for answer in json.loads(r.read())]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, action="append", help="a package to serve (repeat; default: every one)")
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="the corpus mirror folder")
    p.add_argument("--batch", type=int, default=100, help="lines per /detect request (the server takes 128)")
    args = p.parse_args(argv)
    models = args.model or packages(ROOT)
    if not models:
        raise SystemExit("no package under models/: export one first, or name them with --model")
    languages = list(dict.fromkeys(lang for m in models
                                   for lang in json.loads((m / "model.json").read_text())["languages"].values()))
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(models, False, 1, [], Path(tmp) / "serve.log")
        try:
            rows = {}
            for lang in languages:
                name, lines = held_out(args.data, lang)
                answers = [a for i in range(0, len(lines), args.batch)
                           for a in detect(server.port, lines[i:i + args.batch])]
                wrong = Counter(a for a in answers if a != lang)
                rows[lang] = {"file": name, "lines": len(lines), "accuracy": 1 - sum(wrong.values()) / len(lines),
                              "confused": dict(wrong.most_common(5))}
                print(f"{lang}: {rows[lang]['accuracy']:.2%} of {len(lines)} ({dict(wrong.most_common(3))})")
        finally:
            server.stop()
    total = sum(r["lines"] for r in rows.values())
    overall = sum(r["accuracy"] * r["lines"] for r in rows.values()) / total
    write_result("detect_pairs", {"packages": [str(m.relative_to(ROOT) if m.is_relative_to(ROOT) else m)
                                               for m in models], "batch": args.batch, "languages": rows,
                                  "overall": overall}, repeats=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
