"""The ONNX package against CTranslate2 at its best, on our own weights, side by side in one run.

For each decoding (greedy, beam 4 / length penalty 1.0, and the shipped settings of the
package's card: beam 16 / 2.2) and each precision (fp32, int8), every thread layout each engine
offers on the cores here is timed, and each engine's best layout is compared:

- ONNX package (`models/onnx`, `OnnxTranslator`): one session with 1 thread, one session with
  2 threads, and the runtime's decoder pool (`workers=2`, `nmt translate --workers 2`): 2 decoder
  processes with 1 thread each, fed the length-sorted batches from one queue, the text side
  (tokenization, detokenization) in the calling process;
- CTranslate2 (`models/ct2`, the ctranslate2 stage's conversion of the same weights, int8 by its
  own quantisation at load time): `intra_threads` 1 and 2, and `inter_threads=2` x
  `intra_threads=1` (two replicas side by side) over the whole input with `max_batch_size=64`.

Every measurement runs in a process of its own that imports only its engine (torch is never
loaded there: checked, and recorded), warms up on one batch, then times `--repeats` passes
over the input; the best pass counts. What is timed: ours text to text (spaCy tokenization,
BPE, search, detokenization); CTranslate2 only its `translate_batch` over source pieces
prepared beforehand (tokenization and detokenization untimed), which favours it.

Outputs are checked: the torch model decodes the same input first (its own process), and an
ONNX fp32 cell must give 100% of torch's lines, an int8 or CTranslate2 cell a sacreBLEU within
`export.max_ct2_bleu_gap` of torch's (CTranslate2's length penalty differs from ours); a cell
that fails is marked and the bench exits non-zero. Results: `bench/results/decode_peers.json`.

    python -m bench.decode_peers [--sentences 1000] [--repeats 2] [--modes greedy beam4 shipped]
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

from bench.common.record import RESULTS, write_result
from nmt import ranking

ROOT = Path(__file__).resolve().parents[1]
BATCH = 64
# layout name -> (intra threads, decoders side by side: CTranslate2's inter_threads, our runtime's workers)
LAYOUTS = {"1 thread": (1, 1), "2 threads": (2, 1), "2 x 1 thread": (1, 2)}
ENGINES = (("onnx", "fp32"), ("ct2", "fp32"), ("onnx", "int8"), ("ct2", "int8"))
NAMES = {"onnx": "ONNX package", "ct2": "CTranslate2", "torch": "torch"}


# --- child: one engine, one layout share; only that engine is imported ----------------------------

def child(spec: dict[str, Any]) -> None:
    """Load, warm up, say "ready", then time one pass per "go" line on stdin; write the outputs."""
    lines = json.loads(Path(spec["input"]).read_text(encoding="utf-8"))
    beam, alpha, threads = spec["beam"], spec["alpha"], spec["threads"]
    if spec["engine"] == "torch":
        from nmt.translate.models import ModelOptions, open_model
        engine = open_model(Path(spec["model"]), ModelOptions(beam_size=beam, alpha=alpha, device="cpu",
                                                              threads=threads)).translator
        run, finish = engine.translate, (lambda out: out)
    elif spec["engine"] == "onnx":
        from nmt.translate.models import ModelOptions, open_model
        options = ModelOptions(beam_size=beam, alpha=alpha, device="cpu", threads=threads,
                               int8=spec["precision"] == "int8", workers=spec["inter"])
        engine = open_model(Path(spec["model"]), options).translator
        run = engine.translate

        def finish(out: list[str]) -> list[str]:
            engine.close()  # the decoder processes, if any
            return out
    else:
        from nmt.translate.models import ModelOptions, open_model
        # CTranslate2's "default" compute type is the converted weights' own: float32 here, as before
        ct2 = open_model(Path(spec["model"]), ModelOptions(beam_size=beam, alpha=alpha, threads=threads,
                                                           int8=spec["precision"] == "int8",
                                                           workers=spec["inter"])).translator
        pieces = [ct2.vocabs.src.decode(ct2.source_ids(tokens)) for tokens, _ in ct2.tokenize(lines)]  # untimed
        lines = pieces
        tgt = ct2.vocabs.tgt

        def run(sources: list[list[str]]) -> list[list[str]]:
            return ct2.decode_pieces(sources, max_batch_size=BATCH)

        def finish(out: list[list[str]]) -> list[str]:  # untimed: pieces -> text as `nmt translate` does
            return [ct2.detokenizer(ct2.vocabs.output_tokens([tgt.stoi[p] for p in hyp])) for hyp in out]
    run(lines[:BATCH])  # warm-up: first-call allocations, lazy initialisation
    print("ready", flush=True)
    out: Any = None
    seconds = []
    for command in sys.stdin:
        if command.strip() != "go":
            break
        start = time.perf_counter()
        out = run(lines)
        seconds.append(time.perf_counter() - start)
        print(seconds[-1], flush=True)
    Path(spec["output"]).write_text(json.dumps({"lines": finish(out), "seconds": seconds,
                                                "torch_loaded": "torch" in sys.modules}), encoding="utf-8")


# --- parent: start the process of one cell, time it -------------------------------------------------

def measure(engine: str, precision: str, layout: str, mode: dict[str, Any], sources: list[str],
            args: argparse.Namespace, tmp: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """One cell: its process loads (with its decoder processes or replicas) and warms up, then
    times each pass. Returns sentences/s of the best pass, every pass, the outputs."""
    threads, inter = LAYOUTS[layout]  # inter: CTranslate2's replicas, or the ONNX runtime's decoder processes
    spec = {"engine": engine, "precision": precision, "beam": mode["beam"], "alpha": mode["alpha"], "threads": threads,
            "inter": 1 if engine == "torch" else inter, "input": str(tmp / "in.json"), "output": str(tmp / "out.json"),
            "model": str({"torch": args.model, "onnx": args.onnx, "ct2": args.ct2}[engine])}
    (tmp / "in.json").write_text(json.dumps(sources), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "bench.decode_peers", "--child", json.dumps(spec)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": str(threads), **(env or {})})
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit(f"{engine} {precision} {layout}: the child failed to start (see its error above)")
    passes = []
    for _ in range(1 if engine == "torch" else args.repeats):
        proc.stdin.write("go\n")
        proc.stdin.flush()
        passes.append(float(proc.stdout.readline()))
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit(f"{engine} {precision} {layout}: the child exited with {proc.returncode}")
    result = json.loads((tmp / "out.json").read_text(encoding="utf-8"))
    return {"sentences_per_s": round(len(sources) / min(passes), 1), "passes_s": [round(s, 3) for s in passes],
            "torch_loaded": result["torch_loaded"], "lines": result["lines"]}


def sacrebleu(hypotheses: list[str], references: list[str]) -> float:
    import sacrebleu as sb

    return round(float(sb.corpus_bleu(hypotheses, [references]).score), 2)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, default=ROOT / "models/model.pt",
                   help="torch model file: the reference outputs")
    p.add_argument("--onnx", type=Path, default=ROOT / "models/onnx", help="ONNX package (export stage)")
    p.add_argument("--ct2", type=Path, default=ROOT / "models/ct2", help="CTranslate2 model folder (ctranslate2 stage)")
    p.add_argument("--data", type=Path, default=ROOT / "data/validated", help="folder with <split>.<lang> files")
    p.add_argument("--split", default="test_2016_flickr")
    p.add_argument("--sentences", type=int, default=1000, help="first sentences of the split")
    p.add_argument("--repeats", type=int, default=2, help="timed passes per cell after the warm-up; the best counts")
    p.add_argument("--modes", nargs="+", choices=("greedy", "beam4", "shipped"), default=["greedy", "beam4", "shipped"])
    p.add_argument("--out", type=Path, default=RESULTS, help="folder for decode_peers.json")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(json.loads(args.child))
        return

    import yaml

    card = json.loads((args.onnx / "model.json").read_text(encoding="utf-8"))
    max_gap = float(yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["export"]["max_ct2_bleu_gap"])
    src_lang, tgt_lang = card["languages"]["src"], card["languages"]["tgt"]
    sources = (args.data / f"{args.split}.{src_lang}").read_text(encoding="utf-8").splitlines()[: args.sentences]
    refs = (args.data / f"{args.split}.{tgt_lang}").read_text(encoding="utf-8").splitlines()[: args.sentences]
    shipped = card["decoding"]
    modes = {"greedy": {"label": "greedy", "beam": 1, "alpha": 1.0, "shipped": False},
             "beam4": {"label": "beam 4, length penalty 1.0", "beam": 4, "alpha": 1.0, "shipped": False},
             "shipped": {"label": f"beam {shipped['beam_size']}, length penalty {shipped['alpha']:g} (shipped)",
                         "beam": shipped["beam_size"], "alpha": shipped["alpha"], "shipped": True}}
    has_int8 = "int8" in card["graphs"]
    engines = [e for e in ENGINES if e[1] == "fp32" or has_int8]
    print(f"{args.split}: {len(sources)} sentences, batch {BATCH}, best of {args.repeats} passes after a warm-up, "
          f"each cell in processes of its own that import only their engine; {os.cpu_count()} cores")
    print("timed: ours text to text (spaCy tokenization, BPE, search, detokenization); "
          "CTranslate2 translate_batch on source pieces prepared beforehand (tokenization untimed)")
    results: list[dict[str, Any]] = []
    failed = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for key in args.modes:
            mode = modes[key]
            torch_cell = measure("torch", "fp32", "2 threads", mode, sources, args, tmp)
            reference = torch_cell.pop("lines")
            torch_bleu = sacrebleu(reference, refs)
            print(f"\n{mode['label']}: torch (2 threads, the reference) {torch_cell['sentences_per_s']} sentences/s, "
                  f"sacreBLEU {torch_bleu}", flush=True)
            rows = []
            for engine, precision in engines:
                cells = {}
                for layout in LAYOUTS:
                    cell = measure(engine, precision, layout, mode, sources, args, tmp)
                    lines = cell.pop("lines")
                    cell["sacrebleu"] = sacrebleu(lines, refs)
                    cell["identical_to_torch"] = round(sum(a == b for a, b in zip(lines, reference)) / len(sources), 4)
                    exact = engine == "onnx" and precision == "fp32"
                    cell["check"] = ("100% of lines identical to torch" if exact else
                                     f"sacreBLEU within {max_gap:g} of torch's {torch_bleu}")
                    cell["ok"] = (cell["identical_to_torch"] == 1.0 if exact
                                  else abs(cell["sacrebleu"] - torch_bleu) <= max_gap) and not cell["torch_loaded"]
                    if not cell["ok"]:
                        failed.append(f"{mode['label']} {NAMES[engine]} {precision} {layout}")
                    cells[layout] = cell
                    print(f"  {NAMES[engine]:<13}{precision:<5} {layout:<13}"
                          f"{cell['sentences_per_s']:8.1f} sentences/s  "
                          f"sacreBLEU {cell['sacrebleu']:6.2f}  identical to torch {cell['identical_to_torch']:6.1%}"
                          f"{'' if cell['ok'] else '  FAILED: ' + cell['check']}", flush=True)
                best = ranking.best(cells, lambda name, cells=cells: cells[name]["sentences_per_s"])
                rows.append({"engine": engine, "precision": precision, "cells": cells, "best_layout": best,
                             "best_sentences_per_s": cells[best]["sentences_per_s"]})
            ratios = {}
            for precision in ("fp32", "int8") if has_int8 else ("fp32",):
                ours = next(r for r in rows if r["engine"] == "onnx" and r["precision"] == precision)
                peer = next(r for r in rows if r["engine"] == "ct2" and r["precision"] == precision)
                ratios[precision] = {
                    "best": round(ours["best_sentences_per_s"] / peer["best_sentences_per_s"], 2),
                    "one_thread": round(ours["cells"]["1 thread"]["sentences_per_s"]
                                        / peer["cells"]["1 thread"]["sentences_per_s"], 2)}
                print(f"  {precision}: ONNX package best ({ours['best_layout']}) / CTranslate2 best "
                      f"({peer['best_layout']}): {ratios[precision]['best']:.2f}x; at 1 thread "
                      f"{ratios[precision]['one_thread']:.2f}x")
            results.append({"mode": key, "label": mode["label"], "beam_size": mode["beam"], "alpha": mode["alpha"],
                            "shipped": mode["shipped"], "torch": {**torch_cell, "sacrebleu": torch_bleu},
                            "rows": rows, "ratios": ratios})
        # CTranslate2's other GEMM backend on this CPU: Intel MKL, which it uses by default on Intel CPUs only
        probe = []
        if "beam4" in args.modes:
            for precision in ("fp32", "int8"):
                cell = measure("ct2", precision, "1 thread", modes["beam4"], sources, args, tmp, {"CT2_USE_MKL": "1"})
                cell.pop("lines")
                default = next(r for m in results if m["mode"] == "beam4" for r in m["rows"]
                               if r["engine"] == "ct2" and r["precision"] == precision)["cells"]["1 thread"]
                probe.append({"env": "CT2_USE_MKL=1", "precision": precision, "layout": "1 thread",
                              "sentences_per_s": cell["sentences_per_s"],
                              "default_sentences_per_s": default["sentences_per_s"]})
                print(f"  CTranslate2 {precision} 1 thread with CT2_USE_MKL=1: {cell['sentences_per_s']} sentences/s "
                      f"(default backend {default['sentences_per_s']})")
    write_result("decode_peers", {
        "split": args.split, "sentences": len(sources), "batch": BATCH, "layouts": list(LAYOUTS),
        "max_bleu_gap": max_gap,
        "timed": {"ours": "text to text: spaCy tokenization, BPE, search, detokenization",
                  "ctranslate2": "translate_batch over source pieces prepared beforehand; tokenization and "
                                 "detokenization untimed"},
        "modes": results, "ct2_backend_probe": probe, "failed": failed}, args.repeats, args.out)
    if failed:
        raise SystemExit("cells that failed their output check: " + "; ".join(failed))


if __name__ == "__main__":
    main()
