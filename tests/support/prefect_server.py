"""A real Prefect server on 127.0.0.1 for tests (SQLite, a private PREFECT_HOME), and the
`prefect` CLI against it. Use `running_server(home)` from a module-scoped fixture."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from support.scratch import BIN, prefect_settings

STARTUP_TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    """SIGINT to the server's process group, then SIGKILL if it has not exited."""
    for sig, wait_s in ((signal.SIGINT, 30), (signal.SIGKILL, 10)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue


def drain_prefect_services() -> None:
    """Stop Prefect's in-process background services. Each keeps a client bound to the API URL
    of the server it first talked to (the `nmt-pipeline` concurrency-slot service, the events
    worker): a test module against another server would reuse it and fail with ConnectError.
    Called when a module's server (or test harness) goes away, so no test depends on the order
    of the modules that talk to Prefect."""
    from prefect.concurrency.services import (
        ConcurrencySlotAcquisitionService,
        ConcurrencySlotAcquisitionWithLeaseService,
    )
    from prefect.events.worker import EventsWorker

    for service in (ConcurrencySlotAcquisitionWithLeaseService, ConcurrencySlotAcquisitionService, EventsWorker):
        service.drain_all(timeout=30)


@contextmanager
def running_server(home: Path) -> Iterator[dict[str, str]]:
    """A `prefect server start` of our own; yields the environment that talks to it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(prefect_settings(home))
    port = free_port()
    log_path = home / "server.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"prefect server exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"prefect server not healthy after {STARTUP_TIMEOUT_S} s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield {**env, "PREFECT_API_URL": url}
    finally:
        drain_prefect_services()
        _stop(proc)


def prefect_cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m prefect ARGS` against the server in `env`; fails the test on a non-zero exit."""
    result = subprocess.run([sys.executable, "-m", "prefect", *args], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=300, check=False)
    assert result.returncode == 0, f"prefect {' '.join(args)}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result
