"""`nmt serve` in a process of its own for the load benches (bench/serve_load.py, bench/serve_mixed.py,
bench/hostile.py): started on a free loopback port with torch blocked, its CPU time and RSS read from
/proc and its batches from /metrics, stopped with SIGTERM. Standard library only."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
TOKEN = "serve-load-bench-admin-token"  # the server's --admin-token: POST /admin/reload under load
TORCH_BLOCKED = ("import sys; sys.modules['torch'] = None; from nmt.cli import main; "
                 "sys.exit(main(['serve', *sys.argv[1:]]))")


class Server:
    """`nmt serve` in its own process; its CPU time and RSS from /proc, its batches from /metrics."""

    def __init__(self, model: Path | list[Path], int8: bool, threads: int, extra: list[str], log: Path,
                 root: Path = ROOT) -> None:
        """`root`: the checkout whose `nmt` serves (the process's working directory, so its own `nmt` is
        imported first): this one, or an earlier commit's worktree (bench/serve_latency.py)."""
        with socket.socket() as s:
            s.bind((HOST, 0))
            self.port = s.getsockname()[1]
        models = [m for path in (model if isinstance(model, list) else [model]) for m in ("--model", str(path))]
        args = [*models, "--port", str(self.port), "--threads", str(threads), "--admin-token", TOKEN,
                *(["--int8"] if int8 else []), *extra]
        self.log = log.open("w")
        self.proc = subprocess.Popen([sys.executable, "-c", TORCH_BLOCKED, *args], cwd=root, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 300
        while self.get("/readyz")[0] != 200:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start; its log: {log}")
            time.sleep(0.2)

    def get(self, path: str) -> tuple[int, str]:
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
