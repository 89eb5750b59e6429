"""What each kept change to the ONNX package's decoding bought, measured with and without it.

One measured row per kept change of the decoding. Each lever is a setting of the runtime that
this bench can turn back off; for every decoding (greedy, beam 4 / length penalty 1.0, the
shipped beam 16 / 2.2) and precision (fp32, int8), the package (`models/onnx`, `OnnxTranslator`,
1 thread: per-thread efficiency is what a lever is for) translates the test set without the
lever and with it, each in a process of its own that imports no torch, alternating, best of
`--repeats` passes after a warm-up. Recorded: sentences/s both ways, the speed-up, and whether the
output lines are the same (fp32 must be: the export gate holds it to torch's).

Levers:
- `no-skip-layer-norm-fusion`: ONNX Runtime's SkipLayerNormFusion left out on the CPU
  (`nmt.runtime.session.CPU_DISABLED_OPTIMIZERS`); without the lever, the fusion runs.

    python -m bench.decode_levers [--sentences 1000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common.record import RESULTS, write_result

ROOT = Path(__file__).resolve().parents[1]
MODES = {"greedy": (1, 1.0), "beam4": (4, 1.0), "shipped": (16, 2.2)}  # beam size, length penalty
LEVERS = {"no-skip-layer-norm-fusion": {"CPU_DISABLED_OPTIMIZERS": ()}}  # session.py settings without the lever


def child(spec: dict[str, Any]) -> None:
    """One cell: load the package with the runtime's settings overridden by `spec["without"]`, warm
    up, time `repeats` passes; print JSON."""
    from nmt.runtime import session

    for name, value in spec["without"].items():
        setattr(session, name, tuple(value))
    from nmt.translate.models import ModelOptions, open_model

    lines = json.loads(Path(spec["input"]).read_text(encoding="utf-8"))
    tr = open_model(Path(spec["package"]), ModelOptions(device="cpu", threads=1, int8=spec["int8"],
                                                        beam_size=spec["beam"], alpha=spec["alpha"])).translator
    tr.translate(lines[:64])
    passes = []
    for _ in range(spec["repeats"]):
        start = time.perf_counter()
        out = tr.translate(lines)
        passes.append(time.perf_counter() - start)
    print(json.dumps({"sentences_per_s": round(len(lines) / min(passes), 1), "passes_s": [round(p, 3) for p in passes],
                      "output_sha256": hashlib.sha256("\n".join(out).encode()).hexdigest(),
                      "torch_loaded": "torch" in sys.modules}))


def run_cell(spec: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "bench.decode_levers", "--child", json.dumps(spec)],
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"cell {spec} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--package", type=Path, default=ROOT / "models" / "onnx")
    p.add_argument("--source", type=Path, default=ROOT / "data" / "raw" / "test_2016_flickr.de.gz",
                   help="source sentences (gzip or plain)")
    p.add_argument("--sentences", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=2, help="timed passes per cell; the best counts")
    p.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    if not args.source.is_file() or not (args.package / "model.json").is_file():
        raise SystemExit(f"needs {args.source} and the package {args.package}: run `dvc repro export` first")
    raw = args.source.read_bytes()
    lines = (gzip.decompress(raw) if args.source.suffix == ".gz" else raw).decode("utf-8").splitlines()
    lines = lines[:args.sentences]
    results: dict[str, Any] = {"sentences": len(lines), "threads": 1, "levers": {}}
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "lines.json"
        source.write_text(json.dumps(lines), encoding="utf-8")
        for lever, without in LEVERS.items():
            rows = []
            for mode in args.modes:
                beam, alpha = MODES[mode]
                for precision in ("fp32", "int8"):
                    spec = {"input": str(source), "package": str(args.package), "int8": precision == "int8",
                            "beam": beam, "alpha": alpha, "repeats": args.repeats}
                    off, on = run_cell({**spec, "without": without}), run_cell({**spec, "without": {}})
                    if off["torch_loaded"] or on["torch_loaded"]:
                        raise SystemExit("a runtime cell loaded torch")
                    row = {"mode": mode, "precision": precision, "without": off["sentences_per_s"],
                           "with": on["sentences_per_s"],
                           "speedup": round(on["sentences_per_s"] / off["sentences_per_s"], 3),
                           "same_output": off["output_sha256"] == on["output_sha256"]}
                    rows.append(row)
                    print(f"{lever}: {mode:<7} {precision}: without {row['without']:.1f}, with {row['with']:.1f} "
                          f"sentences/s: x{row['speedup']:.2f}, output {'same' if row['same_output'] else 'differs'}",
                          flush=True)
                    if precision == "fp32" and not row["same_output"]:
                        raise SystemExit(f"{lever} changed the fp32 output ({mode}): it would break parity with torch")
            results["levers"][lever] = rows
    write_result("decode_levers", results, args.repeats, args.out)


if __name__ == "__main__":
    main()
