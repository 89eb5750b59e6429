"""Slowloris for bench/serve_load.py: connections held open that never finish a request head.

`hold_heads(port, held, wait_s)` opens `held` connections to 127.0.0.1:`port` (half send the start
of a request head and stop, half send nothing), holds them while the caller's ordinary clients
run, and reports how many the server closed within `wait_s` (it should close them all after its
`--header-timeout`). Bounded in count and time; loopback only. Standard library only.
"""

from __future__ import annotations

import asyncio
from typing import Any

from bench.common.server import HOST

PARTIAL_HEAD = b"GET /livez HTTP/1.1\r\nHost: x\r\nX-Slow: "


async def _closed_within(reader: asyncio.StreamReader, deadline: float) -> float | None:
    """Seconds until the server closed the connection (EOF or reset), None if not by `deadline`."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        while await asyncio.wait_for(reader.read(4096), timeout=max(deadline - loop.time(), 0.0)):
            pass
    except TimeoutError:
        return None
    except ConnectionError:
        pass
    return loop.time() - started


async def hold_heads(port: int, held: int, wait_s: float) -> dict[str, Any]:
    """Hold `held` connections without a whole request head for at most `wait_s` seconds."""
    loop = asyncio.get_running_loop()
    conns = []
    for i in range(held):
        reader, writer = await asyncio.open_connection(HOST, port)
        if i % 2:
            writer.write(PARTIAL_HEAD)
            await writer.drain()
        conns.append((reader, writer))
    deadline = loop.time() + wait_s
    closed = await asyncio.gather(*(_closed_within(reader, deadline) for reader, _ in conns))
    for _, writer in conns:
        writer.close()
    times = sorted(t for t in closed if t is not None)
    return {"held": held, "closed_by_server": len(times), "wait_s": wait_s,
            "closed_after_s_max": round(times[-1], 2) if times else None}
