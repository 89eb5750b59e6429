"""The load benches' client side (bench/serve_load.py, bench/serve_mixed.py): a small HTTP/1.1
client on asyncio streams (keep-alive, one request at a time per connection: cheap, so the client
takes little of the cores the server needs), a measured step (requests/s, sentences/s, latency
percentiles, status counts, the server's mean batch, CPU and RSS), closed and open loops, parity
against offline outputs, and SIGTERM or a reload under 32 clients. Standard library only
(sacreBLEU when parity is scored)."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.common.server import HOST, TOKEN, Server

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
    """A German->English request (bench/serve_load.py's one package; bench/serve_mixed.py asks both ways)."""
    return {"q": texts[0] if len(texts) == 1 else texts, "source": "de", "target": "en"}


Request = Callable[[list[Any]], dict[str, Any]]  # the lines one request carries -> its JSON body


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
                              "differences": [{"line": i + 1, "source": lines[i], "offline": expected[i],
                                               "served": served[i]}
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
