"""What the server's per-translation `confidence` says about quality.

The confidence of a translation is the geometric mean of the probabilities the model gave the
tokens it chose (`nmt.decode.hypotheses.Hypothesis.confidence`, 0-1), read off the search at no
extra cost. This bench translates a dev set with each package as the server does
(`nmt.translate.decoding.translate_sentences`: spans kept, the loop guard's choice), scores each
sentence with sentence-level chrF against its reference (sacreBLEU), and reports how the two
relate: Spearman's and Pearson's correlation, and mean chrF per confidence band (quintiles of
this run, and fixed bands a user can threshold on). Dev sets only (never a test set).

    python -m bench.confidence [--models models/general/de-en/onnx ...] [--split val] [--sentences 1000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common.record import RESULTS, write_result

ROOT = Path(__file__).resolve().parents[1]
BANDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 1.0)  # fixed confidence bands reported beside the quintiles


def ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share theirs), for Spearman's correlation."""
    r = np.empty(len(x))
    r[np.argsort(x, kind="stable")] = np.arange(len(x))
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=r)
    return sums[inverse] / counts[inverse]


def relation(confidence: np.ndarray, chrf: np.ndarray) -> dict[str, Any]:
    """Correlations and mean chrF per band of confidence."""
    spearman = float(np.corrcoef(ranks(confidence), ranks(chrf))[0, 1])
    pearson = float(np.corrcoef(confidence, chrf)[0, 1])
    edges = np.quantile(confidence, [0, .2, .4, .6, .8, 1])
    quintiles = []
    for k in range(5):
        inside = (confidence >= edges[k]) & ((confidence < edges[k + 1]) if k < 4 else (confidence <= edges[k + 1]))
        quintiles.append({"from": round(float(edges[k]), 3), "to": round(float(edges[k + 1]), 3),
                          "sentences": int(inside.sum()), "mean_chrf": round(float(chrf[inside].mean()), 2)})
    bands = []
    for lo, hi in zip(BANDS, BANDS[1:]):
        inside = (confidence >= lo) & ((confidence < hi) if hi < 1 else (confidence <= hi))
        if inside.any():
            bands.append({"from": lo, "to": hi, "sentences": int(inside.sum()),
                          "mean_chrf": round(float(chrf[inside].mean()), 2)})
    return {"spearman": round(spearman, 3), "pearson": round(pearson, 3), "quintiles": quintiles, "bands": bands,
            "mean_confidence": round(float(confidence.mean()), 3), "mean_chrf": round(float(chrf.mean()), 2)}


def measure(package: Path, data: Path, split: str, sentences: int) -> dict[str, Any]:
    import sacrebleu

    from nmt.translate.local import LocalTranslator
    from nmt.translate.models import ModelOptions

    card = json.loads((package / "model.json").read_text(encoding="utf-8"))
    src, tgt = card["languages"]["src"], card["languages"]["tgt"]
    sources = (data / f"{split}.{src}").read_text(encoding="utf-8").splitlines()
    refs = (data / f"{split}.{tgt}").read_text(encoding="utf-8").splitlines()
    step = max(1, len(sources) // sentences)  # evenly spaced: every part of a mixed dev set
    pairs = [(s, r) for s, r in list(zip(sources, refs))[::step][:sentences] if s.strip()]
    local = LocalTranslator.open(package, ModelOptions(device="cpu"))
    t0 = time.monotonic()
    outputs = local.decode([s for s, _ in pairs], 1)  # each sentence as the server's decode step answers it
    took = time.monotonic() - t0
    kept = [(o, r) for o, (_, r) in zip(outputs, pairs) if not np.isnan(o.confidence)]
    confidence = np.array([o.confidence for o, _ in kept])
    chrf = np.array([sacrebleu.sentence_chrf(o.texts[0], [r]).score for o, r in kept])
    report = {"package": str(package.relative_to(ROOT) if package.is_relative_to(ROOT) else package),
              "direction": f"{src}-{tgt}", "split": split, "sentences": len(kept), "every": step,
              "seconds": round(took, 1), **relation(confidence, chrf)}
    print(f"{src}-{tgt}: {len(kept)} sentences of {split}; Spearman {report['spearman']}, Pearson "
          f"{report['pearson']}; mean chrF by quintile {[q['mean_chrf'] for q in report['quintiles']]}", flush=True)
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", type=Path, nargs="+", default=[ROOT / "models/general/de-en/onnx",
                                                             ROOT / "models/general/en-de/onnx"],
                   help="packages to measure (default: the general de-en and en-de packages)")
    p.add_argument("--data", type=Path, default=ROOT / "data/general/validated", help="folder with <split>.<lang>")
    p.add_argument("--split", default="val", help="a dev split (default: val, the general mix's dev set)")
    p.add_argument("--sentences", type=int, default=1000, help="sentences per direction, evenly spaced")
    p.add_argument("--out", type=Path, default=RESULTS, help="write <out>/confidence.json (default: bench/results)")
    args = p.parse_args(argv)
    if "test" in args.split:
        raise SystemExit(f"--split {args.split}: a test set; relate confidence to quality on a dev set only")
    results = {"directions": [measure(m.resolve(), args.data, args.split, args.sentences) for m in args.models]}
    write_result("confidence", results, repeats=1, out_dir=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
