"""Named points where a fault test kills a stage, as SQLite's test harness crashes it mid-write.

`NMT_KILL_AT=NAME` (or `NAME:N`, the N-th time) makes the process SIGKILL itself when it reaches
`kill_point(NAME)`: no handler, no cleanup, exactly what an out-of-memory kill or a power cut leaves.
The fault suite (tests marked fault) sets it to prove that each write window leaves the previous
outputs whole and that the re-run ends where an uninterrupted run ends. Unset, a point costs one
dictionary lookup. The points: `shard-done` (a data stage has used a shard's result while its pool
holds more: tokenize, vocab, binarize), `train-update` (after an optimizer update), `checkpoint-saved` (a
checkpoint file written, before best.pt and the rotation), `model-staged` (the model file written
beside its target, before the gate), `evaluate-plots` (the report's folders staged), `export-graphs`
(the ONNX graphs written into the staged package), and in every folder swap (`nmt.files.atomic.staged_dir`):
`staged-swap` (before it), `staged-swapped` (after the exchange), `staged-aside` (the two-rename fallback
between its renames).
"""

from __future__ import annotations

import os
import signal
from collections import Counter

ENV = "NMT_KILL_AT"
_reached: Counter[str] = Counter()


def kill_point(name: str) -> None:
    """SIGKILL this process if `NMT_KILL_AT` names this point (and this is its N-th time)."""
    wanted = os.environ.get(ENV)
    if not wanted or wanted.split(":")[0] != name:
        return
    _reached[name] += 1
    times = int(wanted.split(":")[1]) if ":" in wanted else 1
    if _reached[name] == times:
        os.kill(os.getpid(), signal.SIGKILL)
