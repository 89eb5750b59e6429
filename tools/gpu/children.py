"""A bench's child processes end with it: a run cut by SIGKILL (a timeout, an operator's kill -9) must not leave
a training child writing into a scratch folder, holding the cores, long after the bench that waited for it."""

from __future__ import annotations

import ctypes
import signal

PR_SET_PDEATHSIG = 1  # linux/prctl.h: the signal a process gets when its parent thread ends
try:  # resolved here, in the parent: a forked child of a threaded parent should not dlopen
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _PRCTL = None


def die_with_parent() -> None:
    """Run in the child (a `preexec_fn`, a pool's `initializer`): SIGKILL it when its parent ends. Linux only;
    elsewhere the child ends with its own work."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL)
