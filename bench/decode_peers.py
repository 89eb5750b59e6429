"""Decoding peers on our own weights, side by side in one run: torch, ONNX Runtime, CTranslate2.

Translates a test split text to text with
- torch: `nmt translate --model models/model.pt` (`Translator`),
- ONNX fp32 / int8: the exported package (`OnnxTranslator`; int8 only if the package has it,
  export.quantize: true),
- CTranslate2 fp32 / int8: the same weights converted by `nmt.export.ctranslate2` (int8:
  CTranslate2's own weight quantisation at load time, compute_type="int8"),
for greedy and beam 4 at 1 and 2 threads, each measurement in a process of its own, and prints sentences/s, sacreBLEU (13a, cased,
detokenized) and the share of lines identical to torch's, then the ratios the decoding goals
are stated in. Every system tokenizes, batches (64 sentences) and detokenizes the same way.

    pip install ctranslate2          # or: pip install -e ".[bench]"
    python bench/decode_peers.py [--model models/model.pt] [--onnx models/onnx] [--sentences 1000]
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nmt.config.evaluate import Decoding  # noqa: E402
from nmt.decode.lines import LineTranslator  # noqa: E402
from nmt.decode.translator import Translator  # noqa: E402
from nmt.export.checks import sacrebleu_score  # noqa: E402
from nmt.export.ctranslate2 import Ct2Translator, convert  # noqa: E402
from nmt.runtime.translator import OnnxTranslator  # noqa: E402


def timed(translator: LineTranslator, lines: list[str]) -> tuple[float, list[str]]:
    translator.translate(lines[:64])  # warm-up: first-call allocations, lazy initialisation
    start = time.perf_counter()
    out = translator.translate(lines)
    return len(lines) / (time.perf_counter() - start), out


def make(system: str, args: argparse.Namespace, beam: int, threads: int, ct2_dir: Path) -> LineTranslator:
    """One translator of `system` (torch, onnx fp32, onnx int8, ct2 fp32, ct2 int8)."""
    torch.set_num_threads(threads)
    decoding = Decoding(beam_size=beam, alpha=args.alpha)
    if system == "torch":
        return Translator.from_file(args.model, decoding)
    if system.startswith("onnx"):
        return OnnxTranslator.from_dir(args.onnx, device="cpu", threads=threads, int8=system.endswith("int8"),
                                       beam_size=beam, alpha=args.alpha)
    like = Translator.from_file(args.model, decoding)
    return Ct2Translator.open(ct2_dir, like, like.max_len, "int8" if system.endswith("int8") else "float32", threads)


def measure_in_child(system: str, args: argparse.Namespace, beam: int, threads: int, ct2_dir: Path,
                     sources: list[str]) -> tuple[float, list[str]]:
    """Time one system in a process of its own, so no runtime's idle worker threads (torch's OpenMP
    pool spins after each call) take the cores from another's."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [sys.executable, __file__, "--model", str(args.model), "--onnx", str(args.onnx), "--data", str(args.data),
               "--split", args.split, "--sentences", str(args.sentences), "--alpha", str(args.alpha),
               "--child", system, str(beam), str(threads), str(ct2_dir), out.name]
        subprocess.run(cmd, check=True)
        result = json.loads(Path(out.name).read_text(encoding="utf-8"))
    return result["speed"], result["lines"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, default=ROOT / "models/model.pt", help="model file (train stage)")
    p.add_argument("--onnx", type=Path, default=ROOT / "models/onnx", help="ONNX package (export stage)")
    p.add_argument("--data", type=Path, default=ROOT / "data/validated", help="folder with <split>.<lang> files")
    p.add_argument("--split", default="test_2016_flickr")
    p.add_argument("--sentences", type=int, default=1000, help="first sentences of the split")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--beams", type=int, nargs="+", default=[1, 4], help="1 = greedy")
    p.add_argument("--alpha", type=float, default=1.0, help="length penalty (ours: GNMT; CTranslate2: its own)")
    p.add_argument("--child", nargs=5, metavar=("SYSTEM", "BEAM", "THREADS", "CT2_DIR", "OUT"), help=argparse.SUPPRESS)
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING)

    reference = Translator.from_file(args.model)
    src_lang, tgt_lang = reference.vocabs.manifest["src_lang"], reference.vocabs.manifest["tgt_lang"]
    sources = (args.data / f"{args.split}.{src_lang}").read_text(encoding="utf-8").splitlines()[: args.sentences]
    if args.child:  # one measurement, in this process
        system, beam, threads, ct2_dir, out = args.child
        speed, lines = timed(make(system, args, int(beam), int(threads), Path(ct2_dir)), sources)
        Path(out).write_text(json.dumps({"speed": speed, "lines": lines}), encoding="utf-8")
        return
    refs = (args.data / f"{args.split}.{tgt_lang}").read_text(encoding="utf-8").splitlines()[: args.sentences]
    ct2_dir = Path(tempfile.mkdtemp(prefix="ct2-"))
    convert(reference.model, reference.vocabs.src, reference.vocabs.tgt, ct2_dir)
    has_int8 = "int8" in OnnxTranslator.from_dir(args.onnx, device="cpu").package.card["graphs"]
    print(f"{args.split}: {len(sources)} sentences, batch 64, alpha {args.alpha}; model {args.model}, "
          f"package {args.onnx}{'' if has_int8 else ' (no int8 graphs: export.quantize is false)'}; "
          f"each measurement in a process of its own")
    systems = ["torch", "onnx fp32"] + (["onnx int8"] if has_int8 else []) + ["ct2 fp32", "ct2 int8"]
    rows = []
    for beam in args.beams:
        for threads in args.threads:
            outputs = {}
            for name in systems:
                speed, outputs[name] = measure_in_child(name, args, beam, threads, ct2_dir, sources)
                same = sum(a == b for a, b in zip(outputs[name], outputs["torch"])) / len(sources)
                rows.append((beam, threads, name, speed, sacrebleu_score(outputs[name], refs), same))
                print(f"  {'greedy' if beam == 1 else f'beam {beam}':<7} {threads} thr  {name:<10} {speed:8.1f} sent/s  "
                      f"sacreBLEU {rows[-1][4]:6.2f}  identical to torch {same:6.1%}", flush=True)

    speed = {(b, t, n): s for b, t, n, s, _, _ in rows}
    print("\n| decoding | threads | system | sentences/s | sacreBLEU | lines identical to torch |")
    print("|---|---:|---|---:|---:|---:|")
    for b, t, n, s, bleu, same in rows:
        print(f"| {'greedy' if b == 1 else f'beam {b}'} | {t} | {n} | {s:.1f} | {bleu:.2f} | {same:.1%} |")
    print("\nratios (sentences/s):")
    for b in args.beams:
        for t in args.threads:
            mode = "greedy" if b == 1 else f"beam {b}"
            parts = [f"onnx fp32 / ct2 fp32 {speed[b, t, 'onnx fp32'] / speed[b, t, 'ct2 fp32']:.2f}x",
                     f"onnx fp32 / torch {speed[b, t, 'onnx fp32'] / speed[b, t, 'torch']:.2f}x"]
            if has_int8:
                parts.insert(1, f"onnx int8 / ct2 int8 {speed[b, t, 'onnx int8'] / speed[b, t, 'ct2 int8']:.2f}x")
            print(f"  {mode}, {t} thread{'s' if t > 1 else ''}: " + ", ".join(parts))


if __name__ == "__main__":
    main()
