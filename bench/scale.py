"""How the data stages and the train stage's start-up grow with the corpus (issue 29).

Builds synthetic corpora from the Multi30k training split at `--factors` times its size
(default 1, 8, 32): every synthetic pair joins two Multi30k pairs (so sentences are
WMT-length), and 30% of them start with a made-up name drawn from a pool that grows with the
factor (so the vocabulary grows with the corpus, as a real one does; flat memory on a corpus
that repeats itself would prove nothing). Deterministic: the same factor gives the same bytes.
val and test are Multi30k's own.

Each stage then runs as `dvc.yaml` runs it (the command read from there), in a scratch
project per factor, cold (an empty tokenization cache): validate, tokenize, vocab, binarize, and train
cut to `--updates` updates (its start-up: reading the corpus, building batches, then the
updates, validation and the model file). Measured per stage and factor: wall time, peak
memory of the whole process tree (the stage and its workers, RSS summed, sampled every
`--sample-s`), and pairs per second. Printed with the growth from the second-largest to the
largest factor: the time exponent (1.0 = linear) and the memory ratio; written to
`bench/results/scale.json`.

    python bench/scale.py [--factors 1 8 32] [--mirror DIR]    # default: data/raw (the download stage's)
"""

from __future__ import annotations

import argparse
import gzip
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import RESULTS, write_result  # noqa: E402

STAGES = ("validate", "tokenize", "vocab", "binarize", "train")
NAMED_SHARE = 0.3  # pairs that start with a made-up name
NAMES_PER_FACTOR = 2000  # the name pool grows with the corpus
SYLLABLES = ("ka", "lo", "mir", "ten", "us", "vel", "dra", "ni", "bor", "est", "qui", "zan", "pe", "rho", "lin",
             "sa", "gur", "to", "wen", "fi")  # 2-5 syllables: over 3 million names, enough for any factor


def made_up_names(count: int, rng: random.Random) -> list[str]:
    """`count` distinct capitalised names of 2-5 syllables."""
    names: set[str] = set()
    if count > sum(len(SYLLABLES) ** k for k in range(2, 6)) // 2:
        raise SystemExit(f"{count} made-up names asked for: too many for the syllable table; add syllables")
    while len(names) < count:
        names.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 5))).capitalize())
    return sorted(names)


def make_corpus(mirror: Path, factor: int, raw: Path) -> int:
    """Write the synthetic `train.{de,en}.gz` (and Multi30k's val and test) into `raw`; the pair count."""
    de = gzip.decompress((mirror / "train.de.gz").read_bytes()).decode("utf-8").splitlines()
    en = gzip.decompress((mirror / "train.en.gz").read_bytes()).decode("utf-8").splitlines()
    rng = random.Random(factor)
    names = made_up_names(NAMES_PER_FACTOR * factor, rng)
    raw.mkdir(parents=True, exist_ok=True)
    pairs = 0
    with gzip.open(raw / "train.de.gz", "wt", encoding="utf-8", compresslevel=1) as out_de, \
            gzip.open(raw / "train.en.gz", "wt", encoding="utf-8", compresslevel=1) as out_en:
        for _ in range(factor):
            partner = list(range(len(de)))
            rng.shuffle(partner)
            for a, b in enumerate(partner):
                prefix = f"{rng.choice(names)} : " if rng.random() < NAMED_SHARE else ""
                out_de.write(f"{prefix}{de[a]} {de[b]}\n")
                out_en.write(f"{prefix}{en[a]} {en[b]}\n")
                pairs += 1
    for split in ("val", "test_2016_flickr"):
        for lang in ("de", "en"):
            shutil.copy(mirror / f"{split}.{lang}.gz", raw / f"{split}.{lang}.gz")
    return pairs


def scratch_params(updates: int) -> dict[str, Any]:
    """params.yaml with the train stage cut to `updates` updates and no BLEU during training."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["train"].update(max_steps=updates, epochs=1, val_bleu_sentences=0, early_stop_metric="val_loss",
                           keep_last=1, average_last=1, max_val_loss=1e9)  # 20 updates learn little
    return params


def run_measured(cmd: str, cwd: Path, sample_s: float) -> tuple[float, float]:
    """Run `cmd` in `cwd`; (wall seconds, peak MiB of the summed RSS of it and all its descendants)."""
    start = time.perf_counter()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # `python`: this one
    proc = subprocess.Popen(cmd, shell=True, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    root = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            total = 0
            for p in tree:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            peak = max(peak, total)
        except psutil.Error:
            pass
        time.sleep(sample_s)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"`{cmd}` failed in {cwd} (exit {proc.returncode}):\n{proc.stderr.read()[-3000:]}")
    return seconds, peak / 2**20


def growth(small: dict[str, float], large: dict[str, float], ratio: float) -> dict[str, float]:
    """Time exponent (log time ratio / log size ratio) and memory ratio from `small` to `large`."""
    return {"time_exponent": round(math.log(large["seconds"] / small["seconds"]) / math.log(ratio), 2),
            "memory_ratio": round(large["peak_mib"] / small["peak_mib"], 2)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--factors", type=int, nargs="+", default=[1, 8, 32], help="corpus sizes, in Multi30k trains")
    p.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES))
    p.add_argument("--updates", type=int, default=20, help="updates of the cut train stage")
    p.add_argument("--sample-s", type=float, default=0.05, help="memory sampling interval")
    p.add_argument("--mirror", type=Path, default=os.environ.get("NMT_DATA_MIRROR") or ROOT / "data" / "raw",
                   help="folder with Multi30k's files (default: env NMT_DATA_MIRROR, else data/raw of `make repro`)")
    p.add_argument("--out", type=Path, default=RESULTS, help="folder for scale.json")
    args = p.parse_args()
    if args.mirror is None or not (Path(args.mirror) / "train.de.gz").is_file():
        raise SystemExit(f"bench/scale.py needs Multi30k's files in {args.mirror}: run `dvc repro download`, or "
                         "pass --mirror DIR (or set NMT_DATA_MIRROR)")
    commands = {name: stage["cmd"] for name, stage in
                yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"].items()}
    rows: dict[str, dict[str, dict[str, float]]] = {stage: {} for stage in args.stages}
    pairs: dict[str, int] = {}
    for factor in args.factors:
        with tempfile.TemporaryDirectory(prefix=f"scale{factor}-") as tmp:
            work = Path(tmp)
            pairs[str(factor)] = make_corpus(Path(args.mirror), factor, work / "data" / "raw")
            (work / "params.yaml").write_text(yaml.safe_dump(scratch_params(args.updates), sort_keys=False),
                                              encoding="utf-8")
            for git in (["init", "-q"], ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q",
                                         "--allow-empty", "-m", "scale bench"]):  # DVCLive wants a commit
                subprocess.run(["git", *git], cwd=work, check=True)
            for stage in args.stages:
                seconds, peak = run_measured(" ".join(commands[stage].split()), work, args.sample_s)
                rows[stage][str(factor)] = {"seconds": round(seconds, 2), "peak_mib": round(peak, 1),
                                            "pairs_per_s": round(pairs[str(factor)] / seconds, 1)}
                print(f"{factor:>4}x {pairs[str(factor)]:>9} pairs  {stage:<9} {seconds:8.1f} s  {peak:8.0f} MiB",
                      flush=True)
    results: dict[str, Any] = {"factors": args.factors, "pairs": pairs, "updates": args.updates, "stages": rows}
    if len(args.factors) >= 2:
        small, large = str(args.factors[-2]), str(args.factors[-1])
        ratio = pairs[large] / pairs[small]
        results["growth"] = {"from": small, "to": large,
                             "stages": {s: growth(rows[s][small], rows[s][large], ratio) for s in args.stages}}
        print(f"\ngrowth {small}x -> {large}x: " + "; ".join(
            f"{s} time^{g['time_exponent']:.2f} memory x{g['memory_ratio']:.2f}"
            for s, g in results["growth"]["stages"].items()))
    write_result("scale", results, 1, args.out)


if __name__ == "__main__":
    main()
