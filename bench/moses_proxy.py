"""Moses-escaped training text: detokenize it, or filter it out? A short proxy training.

The OpenNMT sample in the general mix is Moses-tokenized and XML-escaped (`Parliament &apos;s`).
Its variants, each trained the same number of updates from scratch, on the general mix with
newstest2013 alone as the dev set:

- `detokenized`: `format: moses` (unescaped, detokenized with sacremoses): what general/params.yaml does;
- `as published`: read as plain lines, escapes and token spacing kept;
- `filtered`: the sample left out of the mix.

One vocabulary for all (learned on the `detokenized` variant's training data), so the dev loss is
comparable: the variant with the lower newstest2013 loss per target token wins (BLEU after so
few updates is too noisy to rank by). Each variant runs the pipeline's own stage commands in a
scratch folder; the download stage's output is reused from data/general/raw. Written to
bench/results/moses_proxy.json.

    python -m bench.moses_proxy [--updates 2000] [--raw data/general/raw]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench.common.record import write_result
from nmt import ranking

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ("detokenized", "as published", "filtered")
STAGES = [
    "python -m nmt.data.validate --params params.yaml --raw {raw} --out validated --reports reports",
    "python -m nmt.data.tokenize --params params.yaml --in validated --out tokens --reports reports "
    "--cache-dir {cache}",
]
VOCAB = "python -m nmt.data.vocab --params params.yaml --tokens tokens --out {vocab} --reports reports"
TRAIN = [
    "python -m nmt.data.binarize --params params.yaml --tokens tokens --vocab {vocab} --out bin --reports reports",
    "python -m nmt.train.stage --params params.yaml --vocab {vocab} --tokens tokens --bin bin --checkpoints ckpt "
    "--model model.pt --reports reports --train-reports train",
]


def variant_params(variant: str, updates: int) -> dict[str, Any]:
    params = yaml.safe_load((ROOT / "general" / "params.yaml").read_text(encoding="utf-8"))
    mix = params["data"]["mixes"]["general"]
    sources = [s for s in mix["sources"] if s["role"] == "train" or s.get("split") == "newstest2013"]
    for s in sources:
        s.pop("dev_share", None)  # val: newstest2013 only
    if variant == "filtered":
        sources = [s for s in sources if s["corpus"] != "onmt-sample"]
    elif variant == "as published":
        params["data"]["corpora"]["onmt-sample"]["splits"]["train"] = {"de": "tgt-train.txt", "en": "src-train.txt"}
    sources.append({"corpus": "wmt-news", "split": "newstest2014", "role": "test"})  # a mix needs no test; harmless
    mix["sources"] = sources
    params["train"].update(max_steps=updates, epochs=1, val_bleu_sentences=0, early_stop_metric="val_loss",
                           keep_last=1, average_last=1, patience=1)
    return params


def run(cmd: str, cwd: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(cmd, shell=True, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"`{cmd}` failed in {cwd}:\n{proc.stderr[-3000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=2000, help="training updates per variant")
    parser.add_argument("--raw", type=Path, default=ROOT / "data" / "general" / "raw",
                        help="the general download stage's output (make repro-general)")
    args = parser.parse_args()
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="moses-proxy-") as tmp:
        vocab = Path(tmp) / "vocab"
        for variant in VARIANTS:
            work = Path(tmp) / variant.replace(" ", "-")
            work.mkdir()
            (work / "params.yaml").write_text(yaml.safe_dump(variant_params(variant, args.updates), sort_keys=False),
                                              encoding="utf-8")
            fill = {"raw": args.raw.resolve(), "cache": ROOT / ".cache" / "tokenize", "vocab": vocab}
            start = time.perf_counter()
            for cmd in STAGES + ([VOCAB] if variant == VARIANTS[0] else []) + TRAIN:
                run(cmd.format(**fill), work)
            raw = json.loads((work / "reports" / "raw.json").read_text(encoding="utf-8"))
            trained = json.loads((work / "reports" / "train.json").read_text(encoding="utf-8"))["stats"]
            onmt = raw["stats"]["sources"].get("onmt-sample.train", {})
            rows[variant] = {"dev_loss": round(trained["val_loss"], 4), "updates": trained["updates"],
                             "train_pairs": raw["stats"]["splits"]["train"], "onmt_pairs_out": onmt.get("pairs_out", 0),
                             "onmt_dropped": onmt.get("dropped", {}), "seconds": round(time.perf_counter() - start, 1)}
            print(f"{variant:>13}: newstest2013 loss {trained['val_loss']:.4f} after {trained['updates']} updates, "
                  f"{rows[variant]['train_pairs']:,} training pairs ({onmt.get('pairs_out', 0):,} from the sample)")
    best = ranking.best(rows, lambda v: rows[v]["dev_loss"], higher=False)
    print(f"lowest dev loss: {best}")
    write_result("moses_proxy", {"variants": rows, "best": best, "dev": "newstest2013",
                                 "updates": args.updates}, repeats=1)


if __name__ == "__main__":
    main()
