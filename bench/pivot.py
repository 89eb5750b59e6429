"""A pair without a package of its own, translated through English as the server does it (issue 65): French
-> German with the fr-en package, then the en-de package, scored against Multi30k's German side.

Multi30k's sides are translations of the same English captions, so test_2016_flickr's French and German
lines are aligned through the English one. Each hop is `nmt.translate.local.LocalTranslator` (the one text
path: sentences, spans, the loop guard; the server's chain runs the same steps, `tests/serve/test_pivot.py`),
with its package's card defaults (beam, length penalty). Beside it, when `--direct` names a fr-de package,
that package on the same lines.

    python -m bench.pivot --first models/pairs/fr-en/onnx --second models/pairs/en-de/onnx [--data ../shared/data]

Results (`bench/results/pivot.json`, key `results`): rows of route, packages, test set, sentences,
sacreBLEU, chrF and seconds; the sacreBLEU signature.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
from pathlib import Path

from bench.common.record import RESULTS, ROOT, write_result

TEST_SET = "test_2016_flickr"


def sides(data: Path, src: str, tgt: str) -> tuple[list[str], list[str]]:
    def read(lang: str) -> list[str]:
        for folder in ("multi30k", "multi30k-fr-cs"):
            path = data / folder / f"{TEST_SET}.{lang}.gz"
            if path.is_file():
                return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
        raise SystemExit(f"no {TEST_SET}.{lang}.gz under {data}")

    return read(src), read(tgt)


def main(argv: list[str] | None = None) -> int:
    from sacrebleu.metrics import BLEU, CHRF

    from nmt.translate.local import LocalTranslator

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--first", type=Path, required=True, help="the package into English (fr-en)")
    p.add_argument("--second", type=Path, required=True, help="the package out of English (en-de)")
    p.add_argument("--direct", type=Path, help="a package of the pair itself, scored beside (optional)")
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="the corpus mirror folder")
    p.add_argument("--results", type=Path, default=RESULTS, help="where pivot.json goes (bench/results)")
    args = p.parse_args(argv)
    first, second = LocalTranslator.open(args.first), LocalTranslator.open(args.second)
    src, tgt = first.model.languages[0], second.model.languages[1]
    if first.model.languages[1] != "en" or second.model.languages[0] != "en":
        raise SystemExit(f"--first must translate into English and --second out of it: got "
                         f"{first.model.direction} and {second.model.direction}")
    sources, references = sides(args.data, src, tgt)
    bleu, chrf, rows = BLEU(), CHRF(), []
    started = time.perf_counter()
    english = first.translate(sources).texts
    output = second.translate(english).texts
    routes = [(f"{src} -> en -> {tgt}", [args.first, args.second], output, time.perf_counter() - started)]
    if args.direct is not None:
        direct = LocalTranslator.open(args.direct)
        started = time.perf_counter()
        hyps = direct.translate(sources).texts
        routes.append((f"{src} -> {tgt}", [args.direct], hyps, time.perf_counter() - started))
    for route, packages, hyps, seconds in routes:
        rows.append({"route": route, "packages": [str(p) for p in packages], "test_set": TEST_SET,
                     "sentences": len(hyps), "sacrebleu": round(bleu.corpus_score(hyps, [references]).score, 2),
                     "chrf": round(chrf.corpus_score(hyps, [references]).score, 2), "seconds": round(seconds, 1)})
        print(f"{route}: sacreBLEU {rows[-1]['sacrebleu']}, chrF {rows[-1]['chrf']} ({seconds:.0f} s)")
    write_result("pivot", {"rows": rows, "signature": str(bleu.get_signature())}, repeats=1, out_dir=args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
