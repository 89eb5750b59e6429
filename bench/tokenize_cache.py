"""Cold vs warm tokenization of the whole corpus, measured side by side in one run.

The corpus is downloaded (NMT_DATA_MIRROR or params.yaml data.mirror, else the URLs) and
validated into a temporary folder once. Then, `--repeats` times: a cold run with an empty cache
(spaCy is imported and loaded, every file tokenized) and a warm run over the same cache (every
file served from the content-addressed cache). Each run is a fresh interpreter, so the cold side
pays spaCy's import as a real first run does; its time starts before the first import and ends
after the last output file is written (interpreter start-up is not counted).

Each run writes its tokenized files to its own folder. The bench fails unless the warm run hit
the cache for every file, the cold run for none, and every warm file is byte-for-byte the cold
file of the same repeat.

    NMT_DATA_MIRROR=../shared/data/multi30k python bench/tokenize_cache.py [--repeats 3]

Results (`bench/results/tokenize_cache.json`, key `results`):
- `corpus`, `files` (split.lang names), `sentences` (total input lines; per file cap with
  --sentences in `sentences_per_file_limit`, null for the whole corpus);
- `cold_s`, `warm_s`: best of the repeats, seconds; `cold_s_repeats`, `warm_s_repeats`: all;
- `ratio`: cold_s / warm_s (best against best);
- `warm_hits`: files served from the cache in each warm run (= len(files));
- `identical`: true (the bench stops before writing a result otherwise).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import RESULTS, write_result  # noqa: E402

# Runs in a child process: tokenize every split/language into `out`, print seconds and the files hit.
CHILD = """
import json, sys, time
from pathlib import Path
t0 = time.perf_counter()
from nmt.config.loader import load_sections
from nmt.data.tokenize import TokenCache, TokenizeParams, tokenize_file
from nmt.files.lines import split_file
from nmt.text.tokenizer import SUFFIX
params_file, validated, cache, out = (Path(a) for a in sys.argv[1:5])
params = load_sections(params_file, TokenizeParams)
out.mkdir(parents=True, exist_ok=True)
hits = []
for split in params.data.active.splits:
    for lang in params.data.active.languages:
        content, hit, _ = tokenize_file(split_file(validated, split, lang), lang, params.tokenize, TokenCache(cache))
        split_file(out, split, lang, SUFFIX).write_bytes(content)
        hits += [f"{split}.{lang}"] if hit else []
print(json.dumps({"seconds": time.perf_counter() - t0, "hits": hits}))
"""


def timed_run(params: Path, validated: Path, cache: Path, out: Path) -> tuple[float, list[str]]:
    """One fresh interpreter: (seconds, names of the files served from the cache)."""
    proc = subprocess.run([sys.executable, "-c", CHILD, str(params), str(validated), str(cache), str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"tokenize run failed:\n{proc.stderr}")
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    return row["seconds"], row["hits"]


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
            seconds, hits = timed_run(args.params, work / "validated", cache, cold_out)
            if hits:
                raise SystemExit(f"repeat {i + 1}: the cold run hit the cache for {hits}; it must start empty")
            cold.append(seconds)
            seconds, hits = timed_run(args.params, work / "validated", cache, warm_out)
            missed = sorted(set(files) - set(hits))
            if missed:
                raise SystemExit(f"repeat {i + 1}: the warm run tokenized {missed} again instead of hitting the cache")
            warm.append(seconds)
            differ = differing_files(cold_out, warm_out)
            if differ:
                raise SystemExit(f"repeat {i + 1}: warm output differs from cold output in {differ}")

    ratio = min(cold) / min(warm)
    print(f"corpus: {params.data.corpus} ({len(files)} files, {sentences} sentences), best of {args.repeats}")
    print(f"cold (spaCy import + tokenize): {min(cold):7.3f} s   runs: " + " ".join(f"{s:.3f}" for s in cold))
    print(f"warm (content-hash cache hit) : {min(warm):7.3f} s   runs: " + " ".join(f"{s:.3f}" for s in warm))
    print(f"ratio cold/warm               : {ratio:7.1f}x")
    print(f"warm runs hit the cache for all {len(files)} files; warm output byte-identical to cold output")

    results = {"corpus": params.data.corpus, "files": files, "sentences": sentences,
               "sentences_per_file_limit": args.sentences,
               "cold_s": min(cold), "warm_s": min(warm), "cold_s_repeats": cold, "warm_s_repeats": warm,
               "ratio": ratio, "warm_hits": len(files), "identical": True}
    write_result("tokenize_cache", results, args.repeats, args.out)


if __name__ == "__main__":
    main()
