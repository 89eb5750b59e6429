"""Cold vs warm tokenization of the whole corpus, measured side by side in one run.

The corpus is downloaded (NMT_DATA_MIRROR or params.yaml data.mirror, else the URLs) and
validated into a temporary folder once. Then, `--repeats` times: a cold run with an empty cache
(spaCy is imported and loaded, every shard tokenized) and a warm run over the same cache (every
shard served from the content-addressed cache). Each run is the tokenize stage as dvc.yaml runs
it (`python -m nmt.data.tokenize`, default workers, gate included), timed wall clock from start
to exit, so the cold side pays spaCy's import as a real first run does.

Each run writes its tokenized files to its own folder. The bench fails unless the warm run hit
the cache for every shard, the cold run for none, and every warm file is byte-for-byte the cold
file of the same repeat.

    NMT_DATA_MIRROR=../shared/data/multi30k python -m bench.tokenize_cache [--repeats 3]

Results (`bench/results/tokenize_cache.json`, key `results`):
- `corpus`, `files` (split.lang names), `sentences` (total input lines; per file cap with
  --sentences in `sentences_per_file_limit`, null for the whole corpus);
- `cold_s`, `warm_s`: best of the repeats, seconds; `cold_s_repeats`, `warm_s_repeats`: all;
- `ratio`: cold_s / warm_s (best against best);
- `warm_hits`: shards served from the cache in each warm run (every shard);
- `identical`: true (the bench stops before writing a result otherwise).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common.record import RESULTS, write_result

ROOT = Path(__file__).resolve().parents[1]
def timed_run(params: Path, validated: Path, cache: Path, out: Path) -> tuple[float, dict[str, int]]:
    """The tokenize stage as dvc.yaml runs it, in a fresh interpreter (spaCy imported as a first
    run pays): (wall seconds, the gate report's cache counts: shards hit and missed)."""
    reports = out.with_name(out.name + "-reports")
    cmd = [sys.executable, "-m", "nmt.data.tokenize", "--params", str(params), "--in", str(validated),
           "--out", str(out), "--reports", str(reports), "--cache-dir", str(cache)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"tokenize run failed:\n{proc.stderr}")
    cache_stats = json.loads((reports / "tokens.json").read_text(encoding="utf-8"))["stats"]["cache"]
    return seconds, {"hits": cache_stats["hits"], "misses": cache_stats["misses"]}


def differing_files(cold: Path, warm: Path) -> list[str]:
    """Names of files that are not byte-equal in the two folders (or exist in one only)."""
    names = sorted({p.name for p in cold.iterdir()} | {p.name for p in warm.iterdir()})
    return [n for n in names if not ((cold / n).is_file() and (warm / n).is_file()
                                     and (cold / n).read_bytes() == (warm / n).read_bytes())]


def truncate(validated: Path, n: int) -> None:
    """Keep the first `n` lines of every file (a quick check of the bench itself)."""
    for path in validated.iterdir():
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:n]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", type=Path, default=ROOT / "params.yaml", help="data, validate, tokenize sections")
    parser.add_argument("--repeats", type=int, default=3, help="cold + warm pairs; the best of each is reported "
                                                               "(default: 3)")
    parser.add_argument("--sentences", type=int, help="only the first N lines of every file (a quick check)")
    parser.add_argument("--out", type=Path, default=RESULTS,
                        help=f"folder for tokenize_cache.json (default: {RESULTS})")
    args = parser.parse_args()

    from nmt.config.params import load_params
    from nmt.data.download import download_corpus
    from nmt.data.validate import validate_corpus

    params = load_params(args.params)
    files = [f"{split}.{lang}" for split in params.data.active.splits for lang in params.data.active.languages]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        download_corpus(params.data, work / "raw")
        validate_corpus(params.data, params.validate, work / "raw", work / "validated", work / "reports")
        if args.sentences is not None:
            truncate(work / "validated", args.sentences)
        sentences = sum(len(p.read_bytes().splitlines()) for p in (work / "validated").iterdir())
        cold, warm = [], []
        for i in range(args.repeats):
            cache, cold_out, warm_out = work / f"cache{i}", work / f"cold{i}", work / f"warm{i}"
            seconds, counts = timed_run(args.params, work / "validated", cache, cold_out)
            if counts["hits"]:
                raise SystemExit(f"repeat {i + 1}: the cold run hit the cache for {counts['hits']} shards; "
                                 "it must start empty")
            cold.append(seconds)
            seconds, counts = timed_run(args.params, work / "validated", cache, warm_out)
            if counts["misses"]:
                raise SystemExit(f"repeat {i + 1}: the warm run tokenized {counts['misses']} shards again "
                                 "instead of hitting the cache")
            shards = counts["hits"]
            warm.append(seconds)
            differ = differing_files(cold_out, warm_out)
            if differ:
                raise SystemExit(f"repeat {i + 1}: warm output differs from cold output in {differ}")

    ratio = min(cold) / min(warm)
    print(f"corpus: {params.data.corpus} ({len(files)} files, {sentences} sentences), best of {args.repeats}")
    print(f"cold (spaCy import + tokenize): {min(cold):7.3f} s   runs: " + " ".join(f"{s:.3f}" for s in cold))
    print(f"warm (content-hash cache hit) : {min(warm):7.3f} s   runs: " + " ".join(f"{s:.3f}" for s in warm))
    print(f"ratio cold/warm               : {ratio:7.1f}x")
    print(f"warm runs hit the cache for all {shards} shards; warm output byte-identical to cold output")

    results = {"corpus": params.data.corpus, "files": files, "sentences": sentences,
               "sentences_per_file_limit": args.sentences,
               "cold_s": min(cold), "warm_s": min(warm), "cold_s_repeats": cold, "warm_s_repeats": warm,
               "ratio": ratio, "warm_hits": shards, "identical": True}
    write_result("tokenize_cache", results, args.repeats, args.out)


if __name__ == "__main__":
    main()
