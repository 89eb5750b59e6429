"""`nmt serve` under load, against the offline speed of the same package measured in the same run.

Loopback only (127.0.0.1), bounded in requests and time. The offline baseline first (this
process, the server's thread count): batch 1 (latency per sentence), batch 32 in random order
and batch 64 length-sorted (`translate()`, whose outputs are the parity reference). Then the
server (`nmt serve`, its own process, torch blocked: `bench/common/server.py`) and an asyncio
client of our own (HTTP/1.1 keep-alive on asyncio streams: cheap, so the client takes little of
the cores the server needs; its steps and loops: `bench/common/load.py`):

- 1 client, then closed loops of 1..64 clients, single-sentence requests;
- bulk: 4 clients sending 32 texts per request;
- parity: every sentence once from 32 clients; fp32 must equal the offline output, int8 is
  scored (sacreBLEU against the references) beside the offline int8 output;
- open loop (Poisson arrivals) at 0.5x / 0.9x / 1.5x / 2x the 32-client capacity;
- slowloris: 200 connections held without a whole request head (`bench/common/held_sockets.py`)
  while 32 clients run: their rate against the 32-client step, and how many held sockets the
  server closed (`--header-timeout`, 10 s here);
- soak at 0.7x capacity for `--soak-s`;
- SIGTERM under 32 clients (a fresh server): every request accepted before the signal must be
  answered 200, and the process must exit 0;
- reload under 32 clients (POST /admin/reload of the same folder): no failure, and every request
  sent after the switch answered by the new generation (the X-Nmt-Model-Generation header);
- `--variants`: other server options (each a fresh server: `--max-wait-ms` values, decoder
  layouts such as `--decoders 2 --threads 1`), measured at 1 client and 32 clients, which is how
  the defaults were chosen.

Per step: offered load, requests/s, sentences/s, p50/p95/p99/max latency, status counts, mean
batch size (from /metrics), server CPU and RSS. The issue's acceptance ratios are computed and
reported (`criteria`), not asserted. `--smoke` is a short version (a minute or two) that a test
runs on the test package; it records ratios only and writes nothing unless `--out` is given.

    python -m bench.serve_load [--model models/onnx] [--int8] [--soak-s 600] [--smoke] [--out bench/results]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

from bench.common.held_sockets import hold_heads
from bench.common.load import Step, closed_loop, open_loop, parity, pct, under_32
from bench.common.record import RESULTS, write_result
from bench.common.server import Server
from nmt.serve.api.options import ServeConfig

ROOT = Path(__file__).resolve().parents[1]


# --- the offline baseline -----------------------------------------------------------------------------

def offline(model: Path, int8: bool, threads: int, lines: list[str], batch1: int) -> dict[str, Any]:
    """The same package without the server, in this process: batch 1, 32 random, 64 length-sorted."""
    from nmt.translate.local import LocalTranslator
    from nmt.translate.models import ModelOptions

    local = LocalTranslator.open(model, ModelOptions(device="cpu", int8=int8, threads=threads))
    translator = local.model.translator

    def translate(batch: list[str]) -> list[str]:  # the server's own path (sentences, spans kept, loop guard)
        return local.translate(batch).texts

    translate(lines[:8])  # warm-up
    latencies = []
    for line in lines[:batch1]:
        t0 = time.monotonic()
        translate([line])
        latencies.append((time.monotonic() - t0) * 1000)
    shuffled = random.Random(1).sample(lines, len(lines))
    translator.batch_size = 32
    t0 = time.monotonic()
    for start in range(0, len(shuffled), 32):
        translate(shuffled[start:start + 32])
    random32 = len(lines) / (time.monotonic() - t0)
    translator.batch_size = 64
    t0 = time.monotonic()
    outputs = translate(lines)
    sorted64 = len(lines) / (time.monotonic() - t0)
    report = {"batch1": {"sentences": len(latencies), "p50_ms": pct(latencies, .5), "p99_ms": pct(latencies, .99),
                         "sentences_per_s": round(len(latencies) / (sum(latencies) / 1000), 2)},
              "batch32_random_sentences_per_s": round(random32, 2),
              "batch64_sorted_sentences_per_s": round(sorted64, 2),
              "beam_size": translator.beam_size, "alpha": translator.alpha}
    print(f"offline: batch 1 p50 {report['batch1']['p50_ms']} ms p99 {report['batch1']['p99_ms']} ms; "
          f"batch 32 random {report['batch32_random_sentences_per_s']} sent/s; "
          f"batch 64 sorted {report['batch64_sorted_sentences_per_s']} sent/s (beam {translator.beam_size})",
          flush=True)
    return report | {"outputs": outputs}


# --- the run ------------------------------------------------------------------------------------------

def criteria(res: dict[str, Any], max_wait_ms: float) -> dict[str, Any]:
    """The issue's acceptance ratios (this run's figures against this run's offline ones)."""
    off, steps = res["offline"], {s["step"]: s for s in res["steps"]}
    c32, one, over = steps["32 clients"], steps["1 client"], steps["open loop 2x"]
    soak, slow = steps.get("soak"), steps.get("slowloris")
    out = {
        "served_32_over_offline_batch32": round(c32["sentences_per_s"] / off["batch32_random_sentences_per_s"], 3),
        "mean_batch_32_clients": c32["mean_batch"],
        "p50_1_client_minus_offline_p50_ms": round(one["latency_ms"]["p50"] - off["batch1"]["p50_ms"], 2),
        "p50_allowed_ms": round(max_wait_ms + 5, 2),
        "p99_1_client_over_allowed": round(one["latency_ms"]["p99"] / (1.5 * off["batch1"]["p99_ms"] + 15), 3),
        "goodput_2x_over_32_clients": round(over["sentences_per_s"] / c32["sentences_per_s"], 3),
        "rejected_p99_ms_2x": over["rejected_p99_ms"],
        "other_5xx_2x": sum(v for k, v in over["statuses"].items() if k.startswith("5") and k != "503"),
        "rss_2x_over_32_clients": round(over["rss_mib"]["max"] / c32["rss_mib"]["max"], 3),
        "sigterm_failed": res["sigterm"]["failed_among_accepted"], "sigterm_exit_code": res["sigterm"]["exit_code"],
        "reload_failed": res["reload"]["failed"],
        "reload_after_switch_from_new": res["reload"]["after_switch_from_new"],
        "parity_identical": res["parity"]["identical"],
    }
    if slow is not None:
        out["slowloris_32_over_32_clients"] = round(slow["sentences_per_s"] / c32["sentences_per_s"], 3)
        out["slowloris_other_than_200"] = sum(v for k, v in slow["statuses"].items() if k != "200")
        out["slowloris_held_closed"] = round(slow["held"]["closed_by_server"] / slow["held"]["held"], 3)
    if soak is not None:
        out["soak_errors"] = sum(v for k, v in soak["statuses"].items() if k != "200")
        out["soak_rss_growth"] = round(soak["rss_mib"]["end"] / soak["rss_mib"]["start"] - 1, 4)
    return out


async def run(args: argparse.Namespace, lines: list[str], refs: list[str] | None, off: dict[str, Any],
              log_dir: Path) -> dict[str, Any]:
    d = args.step_s
    extra = ["--header-timeout", f"{args.header_timeout:g}", *args.serve.split()]
    server = Server(args.model, args.int8, args.threads, extra, log_dir / "serve.log")
    steps = []
    try:
        step = Step("1 client", "closed, 1 client")
        steps.append(await step.measure(server, closed_loop(step, server.port, lines, 1, d)))
        for n in args.clients:
            step = Step(f"{n} clients", f"closed, {n} clients")
            steps.append(await step.measure(server, closed_loop(step, server.port, lines, n, d)))
        capacity = next(s for s in steps if s["step"] == "32 clients")["sentences_per_s"]
        step = Step("bulk 32 texts", "closed, 4 clients")
        steps.append(await step.measure(server, closed_loop(step, server.port, lines, 4, d, bulk=32)))
        parity_report = await parity(server, lines, off["outputs"], refs, args.int8)
        for factor in args.factors:
            step = Step(f"open loop {factor:g}x", f"{factor * capacity:.1f} req/s")
            steps.append(await step.measure(server, open_loop(step, server.port, lines, factor * capacity, d)))
        step = Step("slowloris", f"{args.held} held + 32 clients")  # heads never finished, beside real clients
        held = asyncio.create_task(hold_heads(server.port, args.held, args.header_timeout + 5))
        steps.append(await step.measure(server, closed_loop(step, server.port, lines, 32, d)))
        steps[-1]["held"] = await held
        if args.soak_s > 0:
            step = Step("soak", f"{0.7 * capacity:.1f} req/s")
            steps.append(await step.measure(server, open_loop(step, server.port, lines, 0.7 * capacity, args.soak_s)))
    finally:
        server.stop()
    server = Server(args.model, args.int8, args.threads, extra, log_dir / "serve-sigterm.log")
    try:
        sigterm = await under_32(server, lines, 2 * d, "sigterm")
    finally:
        server.stop()
    server = Server(args.model, args.int8, args.threads, extra, log_dir / "serve-reload.log")
    try:
        reload = await under_32(server, lines, 2 * d, "reload")
    finally:
        server.stop()
    return {"capacity_sentences_per_s": capacity, "steps": steps, "parity": parity_report, "sigterm": sigterm,
            "reload": reload}


async def variants(args: argparse.Namespace, lines: list[str], log_dir: Path) -> list[dict[str, Any]]:
    """Each of `args.variants` (server options) on a fresh server: 1 client and 32 clients."""
    out = []
    for k, options in enumerate(args.variants):
        server = Server(args.model, args.int8, args.threads, [*args.serve.split(), *options.split()],
                        log_dir / f"serve-variant-{k}.log")
        try:
            row: dict[str, Any] = {"options": options}
            for clients in (1, 32):
                step = Step(f"{clients} client{'s' if clients > 1 else ''}", options)
                got = await step.measure(server, closed_loop(step, server.port, lines, clients, args.step_s))
                row[step.name] = {key: got[key] for key in ("sentences_per_s", "latency_ms", "mean_batch", "statuses")}
        finally:
            server.stop()
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, default=ROOT / "models/onnx", help="package to serve (default: models/onnx)")
    p.add_argument("--int8", action="store_true", help="serve (and decode offline) with the int8 graphs")
    p.add_argument("--data", type=Path, default=ROOT / "data/validated", help="folder with <split>.<lang> files")
    p.add_argument("--split", default="test_2016_flickr")
    p.add_argument("--sentences", type=int, default=1000, help="first sentences of the split (default: 1000)")
    p.add_argument("--threads", type=int, default=0, help="ONNX Runtime threads, server and offline (default: 0, all)")
    p.add_argument("--serve", default="", help="more `nmt serve` options, e.g. \"--max-wait-ms 2 --max-queue 256\"")
    p.add_argument("--soak-s", type=float, default=600, help="soak at 0.7x capacity, seconds; 0: none (default: 600)")
    p.add_argument("--variants", nargs="*", default=[], metavar="OPTIONS",
                   help='other server options to compare at 1 and 32 clients, e.g. "--max-wait-ms 0" '
                        '"--decoders 2 --threads 1"')
    p.add_argument("--smoke", action="store_true", help="a short run (a minute or two): fewer, shorter steps, no soak")
    p.add_argument("--out", type=Path, default=None, help="write <out>/serve.json (default: bench/results, not for "
                                                          "--smoke)")
    args = p.parse_args(argv)
    args.model = args.model.resolve()
    args.step_s, args.clients, args.factors, batch1 = 20.0, [2, 4, 8, 16, 32, 64], [0.5, 0.9, 1.5, 2.0], 200
    args.held, args.header_timeout = 200, 10.0  # the slowloris step: sockets held, the server's --header-timeout
    if args.smoke:
        args.step_s, args.clients, args.factors, batch1 = 3.0, [8, 32], [0.5, 2.0], 30
        args.held, args.header_timeout = 20, 1.0
        args.soak_s = min(args.soak_s, 4.0)
    out = args.out if args.out is not None else (None if args.smoke else RESULTS)
    card = json.loads((args.model / "model.json").read_text(encoding="utf-8"))
    src, tgt = card["languages"]["src"], card["languages"]["tgt"]
    lines = (args.data / f"{args.split}.{src}").read_text(encoding="utf-8").splitlines()[: args.sentences]
    ref_file = args.data / f"{args.split}.{tgt}"
    refs = ref_file.read_text(encoding="utf-8").splitlines()[: len(lines)] if ref_file.is_file() else None
    print(f"{args.split}: {len(lines)} sentences; {args.model} ({'int8' if args.int8 else 'fp32'}); steps of "
          f"{args.step_s:g} s", flush=True)
    off = offline(args.model, args.int8, args.threads, lines, batch1)
    log_dir = Path(os.environ.get("TMPDIR", "/tmp")) / f"serve_load-{os.getpid()}"
    log_dir.mkdir(parents=True, exist_ok=True)
    served = asyncio.run(run(args, lines, refs, off, log_dir))
    if args.variants:
        served["variants"] = asyncio.run(variants(args, lines, log_dir))
    given = re.search(r"--max-wait-ms[\s=]+(\S+)", args.serve)
    max_wait = float(given.group(1)) if given else ServeConfig().max_wait_ms
    results = {"model": str(args.model.relative_to(ROOT) if args.model.is_relative_to(ROOT) else args.model),
               "precision": "int8" if args.int8 else "fp32", "split": args.split, "sentences": len(lines),
               "smoke": args.smoke, "step_s": args.step_s, "serve_options": args.serve, "max_wait_ms": max_wait,
               "offline": {k: v for k, v in off.items() if k != "outputs"}, **served}
    results["criteria"] = criteria(results, max_wait)
    print("criteria: " + json.dumps(results["criteria"]), flush=True)
    if out is not None:
        write_result("serve" if not args.int8 else "serve_int8", results, repeats=1, out_dir=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
