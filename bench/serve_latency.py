"""One client's latency on this checkout's server against an earlier commit's, side by side on one host.

bench/serve_load.py's "1 client" step (a closed loop of single-sentence requests on one keep-alive
connection) against two servers of the same package: this checkout's `nmt serve` and that of
`--against` (the commit checked out as a git worktree, whose own `nmt` serves), each in a process
of its own with torch blocked, one at a time. The sides alternate for `--rounds` rounds, each
side's server started afresh every round, so a drift of the host falls on both. Per round and
side: p50, p99 and requests answered. Then each side's median p50 over the rounds, the difference
now - before (ms), and each side's spread (its largest round p50 minus its smallest): the noise
of this host. "Within noise" is a difference no larger than the larger spread. Loopback only,
bounded in time (`--rounds` x 2 x `--step-s`, plus start-ups).

    python -m bench.serve_latency --against f2d6f11^ [--model models/onnx] [--rounds 3] [--step-s 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common.checkout import short_commit, worktree
from bench.common.load import Step, closed_loop
from bench.common.record import RESULTS, write_result
from bench.common.server import Server

ROOT = Path(__file__).resolve().parents[1]


async def one_client(server: Server, lines: list[str], step_s: float, label: str) -> dict[str, Any]:
    """The "1 client" step on `server`: its latency percentiles and counts."""
    step = Step("1 client", label)
    got = await step.measure(server, closed_loop(step, server.port, lines, 1, step_s))
    return {key: got[key] for key in ("requests", "latency_ms", "statuses", "server_cpu")}


def summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Each side's median round p50 and spread; the difference now - before and whether it is within noise."""
    sides: dict[str, Any] = {}
    for side in ("before", "now"):
        p50s = [r[side]["latency_ms"]["p50"] for r in rounds]
        sides[side] = {"p50_ms_median": round(statistics.median(p50s), 2),
                       "p50_ms_spread": round(max(p50s) - min(p50s), 2),
                       "p99_ms_median": round(statistics.median(r[side]["latency_ms"]["p99"] for r in rounds), 2)}
    difference = round(sides["now"]["p50_ms_median"] - sides["before"]["p50_ms_median"], 2)
    noise = max(sides["before"]["p50_ms_spread"], sides["now"]["p50_ms_spread"])
    return {"sides": sides, "p50_difference_ms": difference, "noise_ms": noise,
            "within_noise": abs(difference) <= noise,
            "p50_ratio": round(sides["now"]["p50_ms_median"] / sides["before"]["p50_ms_median"], 3)}


async def run(args: argparse.Namespace, lines: list[str], old: Path, logs: Path) -> list[dict[str, Any]]:
    rounds = []
    for r in range(args.rounds):
        row: dict[str, Any] = {}
        for side, root in (("before", old), ("now", ROOT)):
            server = Server(args.model, False, args.threads, args.serve.split(), logs / f"{side}-{r}.log", root=root)
            try:
                row[side] = await one_client(server, lines, args.step_s, f"{side}, round {r + 1}")
            finally:
                server.stop()
            print(f"round {r + 1} {side:<6} p50 {row[side]['latency_ms']['p50']} ms, "
                  f"p99 {row[side]['latency_ms']['p99']} ms, {row[side]['requests']} requests", flush=True)
        rounds.append(row)
    return rounds


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--against", required=True, help="the earlier commit, e.g. f2d6f11^ (any git revision)")
    p.add_argument("--model", type=Path, default=ROOT / "models/onnx", help="package both serve (default: models/onnx)")
    p.add_argument("--data", type=Path, default=ROOT / "data/validated", help="folder with <split>.<lang> files")
    p.add_argument("--split", default="test_2016_flickr")
    p.add_argument("--sentences", type=int, default=1000, help="first sentences of the split (default: 1000)")
    p.add_argument("--threads", type=int, default=0, help="ONNX Runtime threads of both servers (default: 0, all)")
    p.add_argument("--serve", default="", help="more `nmt serve` options for both sides (both must know them)")
    p.add_argument("--rounds", type=int, default=3, help="rounds, each side once a round (default: 3)")
    p.add_argument("--step-s", type=float, default=20.0, help="seconds of each 1-client step (default: 20)")
    p.add_argument("--out", type=Path, default=RESULTS, help="folder for serve_latency.json (default: bench/results)")
    args = p.parse_args(argv)
    if args.rounds < 1 or args.step_s <= 0:
        p.error("--rounds must be at least 1 and --step-s positive")
    commit = short_commit(args.against)
    args.model = args.model.resolve()
    if not (args.model / "model.json").is_file():
        p.error(f"--model {args.model}: no model.json there (an exported package: the export stage's models/onnx)")
    src = json.loads((args.model / "model.json").read_text(encoding="utf-8"))["languages"]["src"]
    source = args.data / f"{args.split}.{src}"
    if not source.is_file():
        p.error(f"--data/--split: {source} not found (the validate stage writes data/validated)")
    lines = source.read_text(encoding="utf-8").splitlines()[: args.sentences]
    with tempfile.TemporaryDirectory(prefix="serve-latency-") as tmp, worktree(commit, Path(tmp)) as old:
        rounds = asyncio.run(run(args, lines, old, Path(tmp)))
    results = {"against": commit, "model": str(args.model.relative_to(ROOT) if args.model.is_relative_to(ROOT)
                                               else args.model),
               "split": args.split, "sentences": len(lines), "step_s": args.step_s, "serve_options": args.serve,
               "rounds": rounds, **summary(rounds)}
    print(f"p50 now {results['sides']['now']['p50_ms_median']} ms, before {results['sides']['before']['p50_ms_median']}"
          f" ms: {results['p50_difference_ms']:+} ms (noise {results['noise_ms']} ms, "
          f"{'within' if results['within_noise'] else 'outside'} it)", flush=True)
    write_result("serve_latency", results, repeats=args.rounds, out_dir=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
