"""The general packages' decoding speed beside the Multi30k package's, on the same inputs, in one run.

Every ONNX package found among `--packages` (default: `models/onnx`, the Multi30k de->en package,
and `models/general/{de-en,en-de}/onnx`) translates the first `--sentences` lines of each input
set in its source language (`--sets`, from the general validated data: Multi30k test2016, news,
Tatoeba), text to text as `nmt translate` does, in this process with the cores it has (workers=1),
twice: with its card's decoding (what a user gets) and greedy (the same search for every
package: the cost of the model itself). Each measurement decodes once untimed, then
`--repeats` times; the best time counts. Packages and sets take turns, so a slow spell of the
machine does not fall on one package.

    python -m bench.packages [--sentences 300] [--repeats 2]

Results (`bench/results/packages.json`, key `results`): `decoding` (what the two searches are)
and `rows`: per package, set and search {package, direction, input, search, beam_size,
sentences, sentences_per_s, tokens_per_s (output words split on spaces)}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.common.record import RESULTS, write_result
from nmt.decode.lines import LineTranslator
from nmt.files.lines import read_lines
from nmt.translate.models import ModelOptions, open_model

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("models/onnx", "models/general/de-en/onnx", "models/general/en-de/onnx")
SETS = ("test_2016_flickr", "newstest2014", "tatoeba_test")


def _time(translator: LineTranslator, lines: list[str], repeats: int) -> tuple[float, list[str]]:
    out = translator.translate(lines)  # untimed warm-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        out = translator.translate(lines)
        best = min(best, time.perf_counter() - start)
    return best, out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--packages", nargs="+", default=list(PACKAGES),
                   help="ONNX package folders (missing ones are skipped)")
    p.add_argument("--data", type=Path, default=ROOT / "data" / "general" / "validated",
                   help="validated test sets (the general validate stage's output)")
    p.add_argument("--sets", nargs="+", default=list(SETS), help="test sets whose source side is decoded")
    p.add_argument("--sentences", type=int, default=300, help="first lines of each set")
    p.add_argument("--repeats", type=int, default=2, help="timed repeats; the best counts")
    p.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    args = p.parse_args(argv)
    found = [Path(d) for d in args.packages if (Path(d) / "model.json").is_file()]
    if not found:
        p.error(f"no package among {args.packages}: run the export stages first")
    rows: list[dict[str, Any]] = []
    for search in ("card", "greedy"):
        for name in args.sets:
            for folder in found:
                card = json.loads((folder / "model.json").read_text(encoding="utf-8"))
                src, tgt = card["languages"]["src"], card["languages"]["tgt"]
                path = args.data / f"{name}.{src}"
                if not path.is_file():
                    p.error(f"{path}: not found; run the general data stages (`dvc repro general/dvc.yaml:validate`)")
                lines = read_lines(path)[:args.sentences]
                translator = open_model(folder, ModelOptions(beam_size=1 if search == "greedy" else None)).translator
                seconds, out = _time(translator, lines, args.repeats)
                translator.close()
                rows.append({"package": folder.as_posix(), "direction": f"{src}-{tgt}",
                             "input": name, "search": search, "beam_size": translator.beam_size,
                             "sentences": len(lines), "sentences_per_s": round(len(lines) / seconds, 2),
                             "tokens_per_s": round(sum(len(o.split()) for o in out) / seconds, 1)})
                print(f"{folder} {name} {search}: {rows[-1]['sentences_per_s']:.1f} sentences/s", flush=True)
    decoding = "each package's card decoding, then greedy for every package; ONNX fp32, workers=1, all cores"
    write_result("packages", {"decoding": decoding, "rows": rows}, args.repeats, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
