"""`nmt serve` with both directions in one process, under mixed traffic.

Loopback only, bounded in requests and time; the client, server process and steps are
bench/serve_load.py's (`bench/common/load.py`, `bench/common/server.py`). The offline baseline
first: each package alone in this process (batch 32, random order, the server's path for a
batch), whose rates give the offline rate of a mix (a share f of German->English sentences costs
f / r_de-en + (1 - f) / r_en-de seconds a sentence). Then:

- **shared**: one server with both packages (one queue, each batch one direction's: the
  design shipped), at 1 client and 32 clients for half-and-half and 90/10 traffic, a run where
  half of the requests say `source: auto` (routed by detection), an open loop at 2x the
  half-and-half capacity, parity (every sentence once from 32 clients, both directions: fp32
  must equal the offline output) and a reload of both packages under 32 clients;
- **separate**: the alternative design, one server per direction with the cores shared out
  (`--threads` halved each), driven by the same clients (each request to its direction's server),
  at 1 client and 32 clients for the same two mixes.

The serving criteria are computed for the shared server (ratios against this run's offline rates,
reported, not asserted), and the two designs compared at 32 clients.

    python -m bench.serve_mixed [--models models/general/de-en/onnx models/general/en-de/onnx] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from bench.common.load import Connection, Step, closed_loop, open_loop, parity, pct, under_32
from bench.common.record import RESULTS, write_result
from bench.common.server import Server

ROOT = Path(__file__).resolve().parents[1]

Line = tuple[str, str, str]  # text, source language, target language ("auto": detect it)


def request(lines: list[Line]) -> dict[str, Any]:
    """The JSON body of one request: its texts share one source and target."""
    texts = [text for text, _, _ in lines]
    return {"q": texts[0] if len(texts) == 1 else texts, "source": lines[0][1], "target": lines[0][2]}


def mixed(by_direction: dict[str, list[str]], share: float, auto: float = 0.0, seed: int = 0) -> list[Line]:
    """A shuffled stream: `share` of its lines from the first direction, the rest from the second;
    a share `auto` of them asks `source: auto`."""
    (first, a), (second, b) = by_direction.items()
    n = len(a) + len(b)
    take_a = round(share * n)
    rng = random.Random(seed)
    chosen = [(t, first) for t in (a * (1 + take_a // max(1, len(a))))[:take_a]]
    chosen += [(t, second) for t in (b * (1 + (n - take_a) // max(1, len(b))))[:n - take_a]]
    rng.shuffle(chosen)
    out = []
    for text, direction in chosen:
        src, tgt = direction.split("-")
        out.append((text, "auto" if rng.random() < auto else src, tgt))
    return out


def offline(models: dict[str, Path], int8: bool, threads: int, by_direction: dict[str, list[str]]
            ) -> dict[str, Any]:
    """Each package alone: batch 32 in random order on the server's path; the outputs for parity."""
    from nmt.translate.local import LocalTranslator
    from nmt.translate.models import ModelOptions

    report: dict[str, Any] = {}
    for direction, path in models.items():
        local = LocalTranslator.open(path, ModelOptions(device="cpu", int8=int8, threads=threads))
        translator = local.model.translator
        lines = by_direction[direction]

        def translate(batch: list[str], local=local) -> list[str]:  # the server's own path
            return local.translate(batch).texts

        translate(lines[:8])  # warm-up
        translator.batch_size = 32
        shuffled = random.Random(1).sample(lines, len(lines))
        t0 = time.monotonic()
        for start in range(0, len(shuffled), 32):
            translate(shuffled[start:start + 32])
        rate = len(lines) / (time.monotonic() - t0)
        outputs = dict(zip(lines, [o for start in range(0, len(lines), 32)
                                   for o in translate(lines[start:start + 32])]))
        report[direction] = {"batch32_random_sentences_per_s": round(rate, 2), "beam_size": translator.beam_size,
                             "outputs": outputs}
        print(f"offline {direction}: batch 32 random {rate:.2f} sent/s (beam {translator.beam_size})", flush=True)
    return report


def mix_rate(off: dict[str, Any], share: float) -> float:
    """Offline sentences/s of a mix with `share` of the first direction's sentences."""
    r = [off[d]["batch32_random_sentences_per_s"] for d in off]
    return 1 / (share / r[0] + (1 - share) / r[1])


class Split:
    """The separate design's front: each request goes to its direction's own server."""

    def __init__(self, servers: dict[str, Server]) -> None:
        self.servers = servers

    async def closed_loop(self, step: Step, lines: list[Line], clients: int, duration_s: float) -> None:
        """`clients` clients in all, shared out in proportion to each direction's lines (one client:
        it sends each line of the stream to its direction's server in turn)."""
        if clients == 1:
            conns = {d: Connection(s.port) for d, s in self.servers.items()}
            deadline, n = time.monotonic() + duration_s, 0
            while time.monotonic() < deadline:
                line = lines[n % len(lines)]
                step.answers.append(await conns[f"{line[1]}-{line[2]}"].request("/translate", request([line])))
                step.texts.append(1)
                n += 1
            for conn in conns.values():
                conn.close()
            return
        groups = {d: [ln for ln in lines if f"{ln[1]}-{ln[2]}" == d] for d in self.servers}
        counts = {d: max(1, round(clients * len(g) / len(lines))) if g else 0 for d, g in groups.items()}
        await asyncio.gather(*(closed_loop(step, self.servers[d].port, groups[d], counts[d], duration_s,
                                           request=request) for d in self.servers if counts[d]))


async def measure_split(split: Split, name: str, lines: list[Line], clients: int, duration_s: float
                        ) -> dict[str, Any]:
    """Step.measure over the two servers: rates and latencies of all answers, CPU and RSS summed."""
    step, t0 = Step(name, f"separate, {clients} clients"), time.monotonic()
    cpu0 = sum(s.cpu_s() for s in split.servers.values())
    await split.closed_loop(step, lines, clients, duration_s)
    wall = time.monotonic() - t0
    ok = [a for a in step.answers if a.status == 200]
    report = {"step": name, "requests": len(step.answers), "sentences_per_s": round(len(ok) / wall, 2),
              "latency_ms": {"p50": pct([a.ms for a in ok], .5), "p99": pct([a.ms for a in ok], .99)},
              "failed": len(step.answers) - len(ok),
              "server_cpu": round((sum(s.cpu_s() for s in split.servers.values()) - cpu0) / wall, 2),
              "rss_mib": round(sum(s.rss_mib() for s in split.servers.values()), 1)}
    print(f"{name:<28} {report['sentences_per_s']:>8} sent/s  p50 {report['latency_ms']['p50']} "
          f"p99 {report['latency_ms']['p99']} ms  failed {report['failed']}  cpu {report['server_cpu']}", flush=True)
    return report


async def run(args: argparse.Namespace, by_direction: dict[str, list[str]], off: dict[str, Any],
              log_dir: Path) -> dict[str, Any]:
    d, models = args.step_s, list(args.models.values())
    half, ninety, auto = mixed(by_direction, 0.5), mixed(by_direction, 0.9), mixed(by_direction, 0.5, auto=0.5)
    server = Server(models, args.int8, args.threads, args.serve.split(), log_dir / "serve-mixed.log")
    shared = []
    try:
        for name, lines, clients in (("1 client, half and half", half, 1), ("32 clients, half and half", half, 32),
                                     ("1 client, 90/10", ninety, 1), ("32 clients, 90/10", ninety, 32),
                                     ("32 clients, half auto", auto, 32)):
            step = Step(name, f"closed, {clients} client{'s' if clients > 1 else ''}")
            shared.append(await step.measure(server, closed_loop(step, server.port, lines, clients, d,
                                                                  request=request)))
        capacity = next(s for s in shared if s["step"] == "32 clients, half and half")["sentences_per_s"]
        step = Step("open loop 2x, half and half", f"{2 * capacity:.1f} req/s")
        shared.append(await step.measure(server, open_loop(step, server.port, half, 2 * capacity, d, request=request)))
        both = [(t, *dn.split("-")) for dn, texts in by_direction.items() for t in texts]
        expected = [off[f"{s}-{t}"]["outputs"][text] for text, s, t in both]
        parity_report = await parity(server, both, expected, None, args.int8, request=request)
        reload = await under_32(server, half, 2 * d, "reload", request=request)
    finally:
        server.stop()
    threads = max(1, (args.threads or os.cpu_count() or 2) // 2)
    servers = {dn: Server(path, args.int8, threads, [], log_dir / f"serve-{dn}.log")
               for dn, path in args.models.items()}
    separate = []
    try:
        split = Split(servers)
        for name, lines, clients in (("1 client, half and half", half, 1), ("32 clients, half and half", half, 32),
                                     ("1 client, 90/10", ninety, 1), ("32 clients, 90/10", ninety, 32)):
            separate.append(await measure_split(split, name, lines, clients, d))
    finally:
        for s in servers.values():
            s.stop()
    return {"shared": shared, "separate": separate, "separate_threads": threads, "serve_options": args.serve,
            "parity": parity_report,
            "reload": reload}


def criteria(res: dict[str, Any], off: dict[str, Any]) -> dict[str, Any]:
    """The serving criteria's ratios for the shared server under mixed traffic, and the two designs compared."""
    shared = {s["step"]: s for s in res["shared"]}
    separate = {s["step"]: s for s in res["separate"]}
    out: dict[str, Any] = {}
    for mix, share in (("half and half", 0.5), ("90/10", 0.9)):
        c32 = shared[f"32 clients, {mix}"]
        key = mix.replace(" ", "_").replace("/", "_")
        out[f"served_32_over_offline_{key}"] = round(c32["sentences_per_s"] / mix_rate(off, share), 3)
        out[f"shared_over_separate_32_{key}"] = round(
            c32["sentences_per_s"] / separate[f"32 clients, {mix}"]["sentences_per_s"], 3)
        out[f"p50_1_client_shared_minus_separate_ms_{key}"] = round(
            shared[f"1 client, {mix}"]["latency_ms"]["p50"] - separate[f"1 client, {mix}"]["latency_ms"]["p50"], 2)
    over, c32 = shared["open loop 2x, half and half"], shared["32 clients, half and half"]
    auto = shared["32 clients, half auto"]
    out |= {"auto_over_explicit_32": round(auto["sentences_per_s"] / c32["sentences_per_s"], 3),
            "auto_non_200": sum(v for k, v in auto["statuses"].items() if k != "200"),
            "goodput_2x_over_32_clients": round(over["sentences_per_s"] / c32["sentences_per_s"], 3),
            "other_5xx_2x": sum(v for k, v in over["statuses"].items() if k.startswith("5") and k != "503"),
            "parity_identical": res["parity"]["identical"], "reload_failed": res["reload"]["failed"],
            "reload_after_switch_from_new": res["reload"]["after_switch_from_new"]}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", type=Path, nargs=2, default=[ROOT / "models/general/de-en/onnx",
                                                            ROOT / "models/general/en-de/onnx"],
                   help="the two packages, one per direction (default: the general de-en and en-de packages)")
    p.add_argument("--int8", action="store_true", help="serve (and decode offline) with the int8 graphs")
    p.add_argument("--data", type=Path, default=ROOT / "data/general/validated", help="folder with <split>.<lang>")
    p.add_argument("--split", default="test_2016_flickr")
    p.add_argument("--sentences", type=int, default=500, help="first sentences of the split per direction")
    p.add_argument("--threads", type=int, default=0, help="ONNX Runtime threads of the shared server (0: all)")
    p.add_argument("--serve", default="", help="more options of the shared server, e.g. \"--decoders 0\" (one "
                                               "decoder thread per core, as the separate servers have)")
    p.add_argument("--smoke", action="store_true", help="a short run (a minute or two)")
    p.add_argument("--out", type=Path, default=None, help="write <out>/serve_mixed.json (default: bench/results, "
                                                          "not for --smoke)")
    args = p.parse_args(argv)
    args.step_s = 3.0 if args.smoke else 20.0
    models: dict[str, Path] = {}
    for path in args.models:
        card = json.loads((path / "model.json").read_text(encoding="utf-8"))
        models[f"{card['languages']['src']}-{card['languages']['tgt']}"] = path.resolve()
    if len(models) != 2:
        raise SystemExit(f"--models: two packages of different directions expected, got {sorted(models)}")
    args.models = models
    by_direction = {dn: list(dict.fromkeys((args.data / f"{args.split}.{dn[:2]}").read_text(encoding="utf-8")
                                           .splitlines()[: args.sentences])) for dn in models}
    print(f"{args.split}: {', '.join(f'{len(v)} {k}' for k, v in by_direction.items())} sentences; steps of "
          f"{args.step_s:g} s", flush=True)
    off = offline(models, args.int8, args.threads, by_direction)
    log_dir = Path(os.environ.get("TMPDIR", "/tmp")) / f"serve_mixed-{os.getpid()}"
    log_dir.mkdir(parents=True, exist_ok=True)
    served = asyncio.run(run(args, by_direction, off, log_dir))
    results = {"models": {dn: str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
                          for dn, path in models.items()},
               "precision": "int8" if args.int8 else "fp32", "split": args.split, "smoke": args.smoke,
               "step_s": args.step_s, "offline": {dn: {k: v for k, v in r.items() if k != "outputs"}
                                                  for dn, r in off.items()}, **served}
    results["criteria"] = criteria(results, off)
    print("criteria: " + json.dumps(results["criteria"]), flush=True)
    out = args.out if args.out is not None else (None if args.smoke else RESULTS)
    if out is not None:
        write_result("serve_mixed", results, repeats=1, out_dir=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
