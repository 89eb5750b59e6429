"""The validate stage with the cleaning and decontamination steps, as the corpus grows.

Runs the validate stage (as general/dvc.yaml runs it) on a mix whose train source is bench/scale.py's
synthetic corpus (`bench/common/corpus.py`) at `--factors` times Multi30k (every pair two Multi30k
pairs joined, 30% with a made-up name), its dev source Multi30k val, its test sources Multi30k test
and newstest2014, with the cleaning and decontamination settings of general/params.yaml (language
ID, the dictionary rule when /usr/share/trans/de-en exists, dedupe, near duplicates). Measured per
factor: wall time, peak memory of the stage's process tree and pairs per second; printed with the
time exponent between `--growth A B` (1.0 = linear) and the memory ratio of every factor to the
first. Written to bench/results/clean_scale.json.

    python -m bench.clean_scale [--factors 1 8 32] [--mirror ../shared/data]
"""

from __future__ import annotations

import argparse
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from bench.common.corpus import make_corpus
from bench.common.measure import run_measured
from bench.common.record import write_result

ROOT = Path(__file__).resolve().parents[1]
COMMAND = "python -m nmt.data.validate --params params.yaml --raw raw --out validated --reports reports"


def mix_params() -> dict[str, Any]:
    """general/params.yaml with one synthetic train corpus, Multi30k's dev and test, newstest2014."""
    params = yaml.safe_load((ROOT / "general" / "params.yaml").read_text(encoding="utf-8"))
    corpora = params["data"]["corpora"]
    synthetic = {"languages": ["de", "en"], "licence": "", "requires_train": True, "files": [],
                 "splits": {"train": {"de": "train.de.gz", "en": "train.en.gz"}}}
    for lang in ("de", "en"):  # file:// entries, hashed below, so the download stage is not needed
        synthetic["files"].append({"name": f"train.{lang}.gz", "url": "file:///dev/null", "sha256": "0" * 64})
    synthetic["splits"]["val"] = synthetic["splits"]["train"]
    corpora["synthetic"] = synthetic
    params["data"]["corpora"] = {k: corpora[k] for k in ("synthetic", "multi30k", "wmt-news")}
    params["data"]["mixes"] = {"scaled": {"languages": ["de", "en"], "sources": [
        {"corpus": "synthetic", "split": "train", "role": "train", "max_filtered_rate": 0.5},
        {"corpus": "multi30k", "split": "val", "role": "dev"},
        {"corpus": "multi30k", "split": "test_2016_flickr", "role": "test"},
        {"corpus": "wmt-news", "split": "newstest2014", "role": "test"}]}}
    params["data"]["corpus"] = "scaled"
    if not Path(params["validate"]["clean"]["lexicon"]).is_file():
        params["validate"]["clean"]["min_lexical"] = 0.0
    return params


def prepare(work: Path, mirror: Path, factor: int) -> int:
    """The scratch project of one factor: raw/<corpus>/ as the download stage leaves it; its pairs."""
    raw = work / "raw"
    pairs = make_corpus(mirror / "multi30k", factor, raw / "synthetic")
    (raw / "multi30k").mkdir(parents=True, exist_ok=True)
    for split in ("val", "test_2016_flickr"):
        for lang in ("de", "en"):
            shutil.move(raw / "synthetic" / f"{split}.{lang}.gz", raw / "multi30k" / f"{split}.{lang}.gz")
    (raw / "wmt-news").mkdir(parents=True, exist_ok=True)
    for lang in ("de", "en"):
        shutil.copy(mirror / "wmt-news" / f"newstest2014.de-en.{lang}", raw / "wmt-news")
    (work / "params.yaml").write_text(yaml.safe_dump(mix_params(), sort_keys=False), encoding="utf-8")
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--factors", type=int, nargs="+", default=[1, 8, 32], help="corpus sizes, x Multi30k")
    parser.add_argument("--mirror", type=Path, default=ROOT.parent / "shared" / "data",
                        help="a folder with one sub-folder per corpus (multi30k, wmt-news)")
    parser.add_argument("--growth", type=int, nargs=2, default=[8, 32], help="the two factors the exponent compares")
    parser.add_argument("--sample-s", type=float, default=0.1, help="memory sampling interval")
    args = parser.parse_args()
    rows: dict[str, Any] = {}
    for factor in args.factors:
        with tempfile.TemporaryDirectory(prefix=f"clean-scale-{factor}x-") as tmp:
            work = Path(tmp)
            pairs = prepare(work, args.mirror, factor)
            seconds, peak = run_measured(COMMAND, work, args.sample_s)
            report = yaml.safe_load((work / "reports" / "raw.json").read_text(encoding="utf-8"))
            src = report["stats"]["sources"]["synthetic.train"]
            rows[str(factor)] = {"pairs": pairs, "seconds": round(seconds, 2), "peak_mib": round(peak, 1),
                                 "pairs_per_s": round(pairs / seconds, 1), "dropped": src["dropped"],
                                 "pairs_out": src["pairs_out"]}
            print(f"{factor:>4}x {pairs:>9,} pairs  {seconds:7.1f} s  {peak:7.1f} MiB  {pairs / seconds:9.0f} pairs/s")
    first = rows[str(args.factors[0])]
    a, b = (rows.get(str(f)) for f in args.growth)
    summary: dict[str, Any] = {"memory_ratio_to_first": {f: round(r["peak_mib"] / first["peak_mib"], 3)
                                                         for f, r in rows.items()}}
    if a and b:
        summary["time_exponent"] = round(math.log(b["seconds"] / a["seconds"]) / math.log(b["pairs"] / a["pairs"]), 3)
        print(f"time exponent {args.growth[0]}x -> {args.growth[1]}x: {summary['time_exponent']}")
    print("memory vs the first factor:", summary["memory_ratio_to_first"])
    write_result("clean_scale", {"factors": rows, **summary}, repeats=1)


if __name__ == "__main__":
    main()
