"""Cold vs warm tokenization of the whole corpus, measured side by side in one run.

Cold: an empty cache, so spaCy is loaded and every file tokenized. Warm: the same files
again, served from the content-addressed cache. Each is run in a fresh interpreter, so
the cold side pays spaCy's import as a real first run does. Prints both and the ratio.

    NMT_DATA_MIRROR=../shared/data/multi30k python bench/tokenize_cache.py
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs in a child process: tokenize every split/language, print the seconds taken.
CHILD = """
import sys, time
from pathlib import Path
t0 = time.perf_counter()
from nmt.config.data import DataConfig, TokenizeConfig
from nmt.config.params import load_params
from nmt.data.tokenize import TokenCache, tokenize_file
from nmt.files.lines import split_file
params, validated, cache = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
data = load_params(params).data
cfg = load_params(params).tokenize
hits = 0
for split in data.active.splits:
    for lang in data.active.languages:
        hits += tokenize_file(split_file(validated, split, lang), lang, cfg, TokenCache(cache))[1]
print(time.perf_counter() - t0, hits)
"""


def timed_run(params: Path, validated: Path, cache: Path) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(params), str(validated), str(cache)],
                         check=True, capture_output=True, text=True, cwd=ROOT).stdout.split()
    return float(out[0]), int(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each kind; the best is reported")
    args = parser.parse_args()

    from nmt.config.params import load_params
    from nmt.data.download import download_corpus
    from nmt.data.validate import validate_corpus

    data = load_params(args.params).data
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        download_corpus(data, work / "raw")
        validate_corpus(data, load_params(args.params).validate,
                        work / "raw", work / "validated", work / "reports")
        cold, warm = [], []
        for i in range(args.repeats):
            cache = work / f"cache{i}"
            seconds, hits = timed_run(args.params, work / "validated", cache)
            assert hits == 0, "cold run must not hit the cache"
            cold.append(seconds)
            seconds, hits = timed_run(args.params, work / "validated", cache)
            assert hits > 0, "warm run must be served from the cache"
            warm.append(seconds)
    print(f"corpus: {data.corpus} ({len(data.active.splits)} splits x 2 languages)")
    print(f"cold (spaCy import + tokenize): {min(cold):7.3f} s")
    print(f"warm (content-hash cache hit) : {min(warm):7.3f} s")
    print(f"ratio cold/warm               : {min(cold) / min(warm):7.1f}x   (goal: >= 10x)")


if __name__ == "__main__":
    main()
