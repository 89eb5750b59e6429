"""Translation speed of the ONNX package vs torch eager on the CPU, greedy and beam 4.

Loads models/model.pt (torch, `nmt.decode.translator.Translator`) and models/onnx (ONNX Runtime,
`nmt.runtime.OnnxTranslator`, fp32 and int8) and translates the first sentences of a
validated test split text to text with each, in the same length-sorted batches. Prints
sentences/s side by side with the ratio to torch, the share of lines identical to torch,
and the size of the fp32 and int8 graph files. If the package has no int8 graphs
(export.quantize: false), they are quantised into a temporary folder for the comparison.

    python bench/onnx_vs_torch.py [--model models/model.pt] [--onnx models/onnx] [--sentences 300] [--threads 0]
                                  [--repeats 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

from nmt.decode.translator import Translator  # noqa: E402
from nmt.export.package import quantize  # noqa: E402
from nmt.files.lines import read_lines, split_file  # noqa: E402
from nmt.runtime.session import OnnxModel  # noqa: E402
from nmt.runtime.translator import OnnxTranslator


def timed(translator, lines: list[str], beam: int, repeats: int) -> tuple[float, list[str]]:
    """Best sentences/s of `repeats` runs (the machine may be shared), and the output."""
    translator.beam_size = beam
    translator.translate(lines[:8])  # warm-up: first-run allocations, spaCy
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        out = translator.translate(lines)
        best = min(best, time.perf_counter() - start)
    return len(lines) / best, out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, default=ROOT / "models/model.pt")
    p.add_argument("--onnx", type=Path, default=ROOT / "models/onnx")
    p.add_argument("--data", type=Path, default=ROOT / "data/validated")
    p.add_argument("--split", default="test_2016_flickr")
    p.add_argument("--sentences", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=0, help="torch and ORT intra-op threads (0: each one's default)")
    p.add_argument("--repeats", type=int, default=3, help="runs per measurement; the fastest counts")
    args = p.parse_args()

    if args.threads:
        torch.set_num_threads(args.threads)
    ort.set_default_logger_severity(3)
    pt = Translator.from_file(args.model, batch_size=args.batch_size)
    fp32 = OnnxTranslator.from_dir(args.onnx, device="cpu", threads=args.threads, batch_size=args.batch_size)
    lines = read_lines(split_file(args.data, args.split, pt.vocabs.manifest["src_lang"]))[: args.sentences]
    graphs = {name: fp32.package.graph(name) for name in ("encoder", "decoder_step")}
    with tempfile.TemporaryDirectory() as tmp:
        if "int8" in fp32.package.card["graphs"]:
            int8_graphs = {name: fp32.package.graph(name, int8=True) for name in graphs}
            where = "from the package"
        else:
            int8_graphs = {name: quantize(path, Path(tmp) / f"{name}.int8.onnx") for name, path in graphs.items()}
            where = "quantised here (package exported with quantize: false)"
        int8 = dataclasses.replace(fp32, model=OnnxModel(int8_graphs["encoder"], int8_graphs["decoder_step"],
                                                         fp32.model.max_len, "cpu", args.threads))
        results = {}
        for name, translator in (("torch eager", pt), ("ONNX fp32", fp32), ("ONNX int8", int8)):
            results[name] = {beam: timed(translator, lines, beam, args.repeats) for beam in (1, 4)}
        size = {v: sum(p.stat().st_size for p in g.values()) / 1e6 for v, g in (("fp32", graphs), ("int8", int8_graphs))}

    ort_threads = args.threads or "default"
    print(f"{len(lines)} sentences of {args.split}, batch {args.batch_size}, best of {args.repeats}, CPU threads: torch "
          f"{torch.get_num_threads()}, ONNX Runtime {ort_threads}; int8 graphs {where}")
    print(f"{'':12} {'greedy sent/s':>14} {'vs torch':>9} {'beam 4 sent/s':>14} {'vs torch':>9} "
          f"{'identical lines (greedy / beam)':>32}")
    base = results["torch eager"]
    for name, res in results.items():
        same = [sum(a == b for a, b in zip(res[b][1], base[b][1])) / len(lines) for b in (1, 4)]
        print(f"{name:12} {res[1][0]:14.1f} {res[1][0] / base[1][0]:8.2f}x {res[4][0]:14.1f} "
              f"{res[4][0] / base[4][0]:8.2f}x {same[0]:15.1%} / {same[1]:.1%}")
    print(f"graph files (encoder + decoder step): fp32 {size['fp32']:.1f} MB, int8 {size['int8']:.1f} MB "
          f"({size['int8'] / size['fp32']:.2f}x)")


if __name__ == "__main__":
    main()
