"""How many CPU cores this process may use: the one answer every part asks (the data stages'
workers, the runtime's decoder processes, the server's layout), kept in this torch-free base
module so that none of them depends on another's code for it."""

from __future__ import annotations

import os


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS)
        return os.cpu_count() or 1
