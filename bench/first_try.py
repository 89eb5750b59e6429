"""The first tries of docs/pairs.md and docs/training.md, timed on this host: a new pair from
examples/first-try/pair.yaml (French->English on Multi30k, the recipe cut short), its stages run in order
with their own commands (download .. train, then evaluate) in a scratch folder, then `nmt adapt` of the
model it made on 1,014 pairs it never trained on (Multi30k val, the pair's dev set, as stand-in user data)
with the documented first-try budget. Writes bench/results/first_try.json (the `first-try` block).

`--vocab-kinds UPDATES`: the vocabularies side by side on a first try's budget (issue 75), for the default
de-en recipe and the fr-en pair: spaCy + BPE (the recipe's), then SentencePiece unigram and BPE of the same
size, each trained from the same data with the same command, and scored on val only (greedy, through the
engine `nmt translate` runs): sacreBLEU, chrF, source symbols per sentence, training tokens/s. Writes
vocab_kinds.json.

    python -m bench.first_try [--adapt-steps 200] [--vocab-kinds UPDATES]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench.common.record import ROOT, write_result

MIRROR = ROOT.parent / "shared" / "data"
STAGES = [("download", "nmt.data.download", "--out data/raw"),
          ("validate", "nmt.data.validate", "--raw data/raw --out data/validated --reports reports/data"),
          ("tokenize", "nmt.data.tokenize", "--in data/validated --out data/tokens --reports reports/data"),
          ("vocab", "nmt.data.vocab", "--tokens data/tokens --out data/vocab --reports reports/data"),
          ("binarize", "nmt.data.binarize", "--tokens data/tokens --vocab data/vocab --out data/bin --reports "
                                            "reports/validation"),
          ("train", "nmt.train.stage", "--vocab data/vocab --tokens data/tokens --bin data/bin --checkpoints "
                                       "models/checkpoints --model models/model.pt --reports reports/validation "
                                       "--train-reports reports/train"),
          ("evaluate", "nmt.evaluate.stage", "--model models/model.pt --data data/validated --tokens data/tokens "
                                             "--reports reports --gates reports/validation")]


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    env = {**os.environ, "NMT_DATA_MIRROR": str(MIRROR), "PYTHONPATH": str(ROOT)}
    run = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"{' '.join(cmd[:4])}: failed\n{run.stderr[-3000:]}")
    return round(time.perf_counter() - start, 1)


def vocab_kinds(updates: int) -> None:
    import sacrebleu

    from nmt.translate.local import LocalTranslator
    from nmt.translate.models import ModelOptions

    first = yaml.safe_load((ROOT / "examples" / "first-try" / "pair.yaml").read_text())
    rows = []
    for pair, recipe in (("de-en", "params.yaml"), ("fr-en", "pairs/fr-en.yaml")):
        size = None
        for kind in ("bpe", "sentencepiece", "sentencepiece-bpe"):
            with tempfile.TemporaryDirectory(prefix=f"vocab-{kind}-") as tmp:
                work = Path(tmp)
                vocab = {} if size is None else {"kind": kind, "max_size": size - 4, "joint": True}
                params = {"recipe": str(ROOT / recipe), "train": {**first["train"], "max_steps": updates},
                          **({"vocab": vocab} if vocab else {})}
                (work / "pair.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
                for _, module, argv in STAGES[:-1]:
                    timed([sys.executable, "-m", module, "--params", "pair.yaml", *argv.split()], work)
                size = size or json.loads((work / "data" / "vocab" / "manifest.json").read_text())["src"]["size"]
                train = json.loads((work / "data" / "bin" / "manifest.json").read_text())["splits"]["train"]
                live = json.loads((work / "reports" / "train" / "live" / "metrics.json").read_text())
                src, tgt = pair.split("-")
                lines = [(work / "data" / "validated" / f"val.{lang}").read_text().splitlines() for lang in (src, tgt)]
                engine = LocalTranslator.open(work / "models" / "model.pt", ModelOptions(beam_size=1))
                hyps = list(engine.lines(lines[0]))
                rows.append({"pair": pair, "kind": kind, "vocab_size": size, "updates": updates,
                             "val_sacrebleu": round(sacrebleu.corpus_bleu(hyps, [lines[1]]).score, 2),
                             "val_chrf": round(sacrebleu.corpus_chrf(hyps, [lines[1]]).score, 2),
                             "src_symbols_per_sentence": round((train["src_ids"] - train["pairs"]) / train["pairs"], 2),
                             "train_tokens_per_s": round(live["tokens_per_s"], 1)})
                print(rows[-1])
    write_result("vocab_kinds", {"rows": rows, "decoding": "greedy (beam 1) on val, sacreBLEU on detokenized text"},
                 repeats=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--adapt-steps", type=int, default=200)
    ap.add_argument("--adapt-minutes", type=float, default=5.0)
    ap.add_argument("--vocab-kinds", type=int, metavar="UPDATES", help="the vocabularies side by side, UPDATES each")
    args = ap.parse_args()
    if args.vocab_kinds:
        return vocab_kinds(args.vocab_kinds)
    with tempfile.TemporaryDirectory(prefix="first-try-") as tmp:
        work = Path(tmp)
        pair = yaml.safe_load((ROOT / "examples" / "first-try" / "pair.yaml").read_text())
        pair["recipe"] = str(ROOT / "pairs" / "fr-en.yaml")
        (work / "pair.yaml").write_text(yaml.safe_dump(pair, sort_keys=False))
        seconds = {name: timed([sys.executable, "-m", module, "--params", "pair.yaml", *argv.split()], work)
                   for name, module, argv in STAGES}
        metrics = json.loads((work / "reports" / "metrics.json").read_text())
        trained = json.loads((work / "reports" / "validation" / "train.json").read_text())["stats"]
        fr, en = (gzip.decompress((MIRROR / "multi30k-fr-cs" / f"val.{lang}.gz").read_bytes()).decode().splitlines()
                  for lang in ("fr", "en"))
        (work / "mine.tsv").write_text("".join(f"{f}\t{e}\n" for f, e in zip(fr, en)), encoding="utf-8")
        adapt = [sys.executable, "-m", "nmt.cli", "adapt", "--model", "models/model.pt", "--recipe", "pair.yaml",
                 "--train", "mine.tsv", "--replay", "data/bin", "--out", "adapted", "--max-steps",
                 str(args.adapt_steps), "--max-minutes", str(args.adapt_minutes)]
        adapt_s = timed(adapt, work)
        compare = json.loads((work / "adapted" / "reports" / "validation" / "finetune-compare.json").read_text())
        tuned = json.loads((work / "adapted" / "reports" / "validation" / "finetune.json").read_text())["stats"]
    write_result("first_try", {
        "pair": {"config": "examples/first-try/pair.yaml", "direction": "fr-en", "stages_s": seconds,
                 "total_s": round(sum(seconds.values()), 1), "updates": trained["updates"],
                 "test_2016_flickr": metrics["test_2016_flickr"]["sacrebleu"]},
        "adapt": {"command": " ".join(adapt[3:]), "data": "Multi30k val fr-en (1,014 pairs the pair never trained on)",
                  "total_s": adapt_s, "updates": tuned["updates"], "train_s": tuned["train_s"],
                  "passed": compare["success"], "sets": compare["stats"]["sets"]}}, repeats=1)


if __name__ == "__main__":
    main()
