"""`nmt serve` under load, against the offline speed of the same package measured in the same run.

Loopback only (127.0.0.1), bounded in requests and time. The offline baseline first (this
process, the server's thread count): batch 1 (latency per sentence), batch 32 in random order
and batch 64 length-sorted (`translate()`, whose outputs are the parity reference). Then the
server (`nmt serve`, its own process, torch blocked) and an asyncio client of our own (HTTP/1.1
keep-alive on asyncio streams: cheap, so the client takes little of the cores the server needs):

- 1 client, then closed loops of 1..64 clients, single-sentence requests;
- bulk: 4 clients sending 32 texts per request;
- parity: every sentence once from 32 clients; fp32 must equal the offline output, int8 is
  scored (sacreBLEU against the references) beside the offline int8 output;
- open loop (Poisson arrivals) at 0.5x / 0.9x / 1.5x / 2x the 32-client capacity;
- slowloris: 200 connections held without a whole request head (`bench/held_sockets.py`) while
  32 clients run: their rate against the 32-client step, and how many held sockets the server
  closed (`--header-timeout`, 10 s here);
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

    python bench/serve_load.py [--model models/onnx] [--int8] [--soak-s 600] [--smoke] [--out bench/results]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.held_sockets import hold_heads  # noqa: E402
from bench.record import RESULTS, write_result  # noqa: E402

HOST = "127.0.0.1"
TOKEN = "serve-load-bench-admin-token"
TORCH_BLOCKED = ("import sys; sys.modules['torch'] = None; from nmt.cli import main; "
                 "sys.exit(main(['serve', *sys.argv[1:]]))")


# --- a small HTTP/1.1 client ------------------------------------------------------------------------

@dataclass
class Answer:
    sent_at: float  # time.monotonic() when the request was sent
    status: int  # 0: no answer (connection refused or reset)
    ms: float
    generation: str = ""
    body: bytes = b""


class Connection:
    """One keep-alive connection; one request at a time."""

    def __init__(self, port: int) -> None:
        self.port, self.reader, self.writer = port, None, None

    async def request(self, path: str, payload: Any, headers: dict[str, str] | None = None) -> Answer:
        body = json.dumps(payload).encode()
        head = [f"POST {path} HTTP/1.1", f"Host: {HOST}", "Content-Type: application/json",
                f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in (headers or {}).items())]
        message = ("\r\n".join(head) + "\r\n\r\n").encode() + body
        start = time.monotonic()
        for attempt in (1, 2):
            reused = self.writer is not None
            try:
                if self.writer is None:
                    self.reader, self.writer = await asyncio.open_connection(HOST, self.port)
                self.writer.write(message)
                status_line = await self.reader.readline()
                if not status_line:
                    raise ConnectionError("closed")
                status = int(status_line.split()[1])
                found: dict[str, str] = {}
                while (line := await self.reader.readline()) not in (b"\r\n", b""):
                    key, _, value = line.decode("latin-1").partition(":")
                    found[key.strip().lower()] = value.strip()
                data = await self.reader.readexactly(int(found.get("content-length", "0")))
                if found.get("connection", "").lower() == "close":
                    self.close()
            except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError, IndexError):
                self.close()
                if reused and attempt == 1:  # a keep-alive connection the server closed while idle: as
                    continue  # HTTP clients do, send once more on a new one (nothing was answered)
                return Answer(start, 0, (time.monotonic() - start) * 1000)
            return Answer(start, status, (time.monotonic() - start) * 1000, found.get("x-nmt-model-generation", ""),
                          data)
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def ask(texts: list[str]) -> dict[str, Any]:
    """A German->English request (the one package of the runs here; bench/serve_mixed.py asks both ways)."""
    return {"q": texts[0] if len(texts) == 1 else texts, "source": "de", "target": "en"}


Request = Callable[[list[Any]], dict[str, Any]]  # the lines one request carries -> its JSON body


# --- the server process -----------------------------------------------------------------------------

class Server:
    """`nmt serve` in its own process; its CPU time and RSS from /proc, its batches from /metrics."""

    def __init__(self, model: Path | list[Path], int8: bool, threads: int, extra: list[str], log: Path) -> None:
        import socket

        with socket.socket() as s:
            s.bind((HOST, 0))
            self.port = s.getsockname()[1]
        models = [m for path in (model if isinstance(model, list) else [model]) for m in ("--model", str(path))]
        args = [*models, "--port", str(self.port), "--threads", str(threads), "--admin-token", TOKEN,
                *(["--int8"] if int8 else []), *extra]
        self.log = log.open("w")
        self.proc = subprocess.Popen([sys.executable, "-c", TORCH_BLOCKED, *args], cwd=ROOT, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 300
        while self.get("/readyz")[0] != 200:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start; its log: {log}")
            time.sleep(0.2)

    def get(self, path: str) -> tuple[int, str]:
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.port}{path}", timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, ""
        except OSError:
            return 0, ""

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(r"^VmRSS:\s+(\d+)", status, re.M).group(1)) / 1024

    def batches(self) -> tuple[float, float]:
        text = self.get("/metrics")[1]
        value = lambda name: float(re.search(rf"^{name} (\S+)", text, re.M).group(1))  # noqa: E731
        return value("nmt_serve_batch_size_sum"), value("nmt_serve_batch_size_count")

    def stop(self, timeout_s: float = 120) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=30)
        finally:
            self.log.close()


# --- load steps ---------------------------------------------------------------------------------------

def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


@dataclass
class Step:
    name: str
    offered: str
    answers: list[Answer] = field(default_factory=list)
    texts: list[int] = field(default_factory=list)  # sentences (texts) per request, aligned with answers

    async def measure(self, server: Server, load: Any) -> dict[str, Any]:
        rss, stop = [server.rss_mib()], asyncio.Event()

        async def sample() -> None:
            while not stop.is_set():
                rss.append(server.rss_mib())
                await asyncio.sleep(0.5)

        sampler = asyncio.create_task(sample())
        cpu0, (sum0, count0), t0 = server.cpu_s(), server.batches(), time.monotonic()
        await load
        wall = time.monotonic() - t0
        stop.set()
        await sampler
        cpu1, (sum1, count1) = server.cpu_s(), server.batches()
        ok = [a for a in self.answers if a.status == 200]
        rejected = [a.ms for a in self.answers if a.status == 503]
        sentences = sum(n for a, n in zip(self.answers, self.texts) if a.status == 200)
        report = {"step": self.name, "offered": self.offered, "requests": len(self.answers), "wall_s": round(wall, 2),
                  "requests_per_s": round(len(ok) / wall, 2), "sentences_per_s": round(sentences / wall, 2),
                  "latency_ms": {q: pct([a.ms for a in ok], p) for q, p in (("p50", .5), ("p95", .95), ("p99", .99))}
                  | {"max": round(max((a.ms for a in ok), default=0), 2)},
                  "rejected_p99_ms": pct(rejected, .99),
                  "statuses": {str(k): v for k, v in sorted(Counter(a.status for a in self.answers).items())},
                  "mean_batch": round((sum1 - sum0) / (count1 - count0), 2) if count1 > count0 else None,
                  "server_cpu": round((cpu1 - cpu0) / wall, 2), "rss_mib": {"start": round(rss[0], 1),
                                                                         "max": round(max(rss), 1),
                                                                         "end": round(rss[-1], 1)}}
        print(f"{self.name:<22} {self.offered:<16} {report['requests_per_s']:>8} req/s {report['sentences_per_s']:>8} "
              f"sent/s  p50 {report['latency_ms']['p50']} p99 {report['latency_ms']['p99']} ms  "
              f"batch {report['mean_batch']}  {report['statuses']}  cpu {report['server_cpu']}  "
              f"rss {report['rss_mib']['max']} MiB", flush=True)
        return report


async def closed_loop(step: Step, port: int, lines: list[Any], clients: int, duration_s: float, bulk: int = 1,
                      stop: asyncio.Event | None = None, limit: int = 1_000_000, request: Request = ask) -> None:
    """`clients` clients, each sending its next request when the last is answered, for `duration_s`."""
    deadline = time.monotonic() + duration_s

    async def client(i: int) -> None:
        conn, n = Connection(port), 0
        while time.monotonic() < deadline and n < limit and not (stop and stop.is_set()):
            texts = [lines[(i * 7919 + n * bulk + k) % len(lines)] for k in range(bulk)]
            step.answers.append(await conn.request("/translate", request(texts)))
            step.texts.append(bulk)
            n += 1
            if step.answers[-1].status == 0:
                await asyncio.sleep(0.05)  # the server is gone (SIGTERM): do not spin
        conn.close()

    await asyncio.gather(*(client(i) for i in range(clients)))


async def open_loop(step: Step, port: int, lines: list[Any], rate: float, duration_s: float, seed: int = 0,
                    request: Request = ask) -> None:
    """Requests at Poisson arrivals of `rate` per second for `duration_s`, whatever the answers."""
    rng, free, tasks = random.Random(seed), [], []
    deadline, at, n = time.monotonic() + duration_s, time.monotonic(), 0

    async def one(text: Any) -> None:
        conn = free.pop() if free else Connection(port)
        step.answers.append(await conn.request("/translate", request([text])))
        step.texts.append(1)
        free.append(conn)

    while at < deadline:
        await asyncio.sleep(max(0.0, at - time.monotonic()))
        tasks.append(asyncio.create_task(one(lines[n % len(lines)])))
        n += 1
        at += rng.expovariate(rate)
    await asyncio.gather(*tasks)
    for conn in free:
        conn.close()


# --- the offline baseline -----------------------------------------------------------------------------

def offline(model: Path, int8: bool, threads: int, lines: list[str], batch1: int) -> dict[str, Any]:
    """The same package without the server, in this process: batch 1, 32 random, 64 length-sorted."""
    from nmt.serve.engine import load_model

    from nmt.serve.decoding import translate_sentences

    translator = load_model(model, int8=int8, threads=threads).translator

    def translate(batch: list[str]) -> list[str]:  # the server's own path for a batch (spans kept, loop guard)
        return [out.texts[0] for out in translate_sentences(translator, batch)[0]]

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
              "batch32_random_sentences_per_s": round(random32, 2), "batch64_sorted_sentences_per_s": round(sorted64, 2),
              "beam_size": translator.beam_size, "alpha": translator.alpha}
    print(f"offline: batch 1 p50 {report['batch1']['p50_ms']} ms p99 {report['batch1']['p99_ms']} ms; batch 32 random "
          f"{report['batch32_random_sentences_per_s']} sent/s; batch 64 sorted {report['batch64_sorted_sentences_per_s']}"
          f" sent/s (beam {translator.beam_size})", flush=True)
    return report | {"outputs": outputs}


async def parity(server: Server, lines: list[Any], expected: list[str], refs: list[str] | None,
                 int8: bool, request: Request = ask) -> dict[str, Any]:
    """Every sentence once, from 32 clients; the served outputs against the offline ones."""
    served: list[str | None] = [None] * len(lines)
    queue = list(range(len(lines)))

    async def client() -> None:
        conn = Connection(server.port)
        while queue:
            i = queue.pop()
            answer = await conn.request("/translate", request([lines[i]]))
            if answer.status == 200:
                served[i] = json.loads(answer.body)["translatedText"]
        conn.close()

    await asyncio.gather(*(client() for _ in range(32)))
    same = [i for i, (s, e) in enumerate(zip(served, expected)) if s == e]
    report: dict[str, Any] = {"sentences": len(lines), "identical": round(len(same) / len(lines), 4),
                              "failed": sum(s is None for s in served),
                              "differences": [{"line": i + 1, "source": lines[i], "offline": expected[i], "served": served[i]}
                                              for i in range(len(lines)) if i not in set(same)][:20]}
    if refs is not None:
        import sacrebleu

        report["sacrebleu_served"] = round(sacrebleu.corpus_bleu([s or "" for s in served], [refs]).score, 2)
        report["sacrebleu_offline"] = round(sacrebleu.corpus_bleu(expected, [refs]).score, 2)
    print(f"parity ({'int8' if int8 else 'fp32'}): {report['identical']:.2%} identical to offline, "
          f"{report['failed']} failed; sacreBLEU served {report.get('sacrebleu_served')} offline "
          f"{report.get('sacrebleu_offline')}", flush=True)
    return report


async def under_32(server: Server, lines: list[Any], duration_s: float, action: str,
                   request: Request = ask) -> dict[str, Any]:
    """32 clients; halfway, SIGTERM (`action` "sigterm") or a reload ("reload")."""
    step, stop = Step(action, "32 clients"), asyncio.Event()
    load = asyncio.create_task(closed_loop(step, server.port, lines, 32, duration_s, stop=stop, request=request))
    await asyncio.sleep(duration_s / 2)
    at = time.monotonic()
    report: dict[str, Any] = {"step": action}
    if action == "sigterm":
        server.proc.send_signal(signal.SIGTERM)
        exit_code = await asyncio.get_running_loop().run_in_executor(None, server.proc.wait, 120)
        stop.set()
        await load
        before = [a for a in step.answers if a.sent_at < at]
        refused = [a for a in before if a.status == 503]
        failed = [a for a in before if a.status not in (200, 503)]
        report |= {"exit_code": exit_code, "sent_before_signal": len(before), "refused_503": len(refused),
                   "failed_among_accepted": len(failed), "answered_200": sum(a.status == 200 for a in before)}
    else:
        reload = await Connection(server.port).request("/admin/reload", {}, {"Authorization": f"Bearer {TOKEN}"})
        switched = time.monotonic()
        await load
        after = [a for a in step.answers if a.sent_at > switched]
        report |= {"reload_status": reload.status, "reload_ms": round(reload.ms, 1),
                   "failed": sum(a.status != 200 for a in step.answers), "requests": len(step.answers),
                   "after_switch": len(after),
                   "after_switch_from_new": round(sum(a.generation == "2" for a in after) / max(1, len(after)), 4)}
    report["statuses"] = {str(k): v for k, v in sorted(Counter(a.status for a in step.answers).items())}
    print(f"{action}: {report}", flush=True)
    return report


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
        "reload_failed": res["reload"]["failed"], "reload_after_switch_from_new": res["reload"]["after_switch_from_new"],
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
    from nmt.serve.config import ServeConfig

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
