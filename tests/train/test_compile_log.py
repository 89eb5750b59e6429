"""torch.compile under pytest: the captured log stays readable (issue: ~2,700 DEBUG "torch.__trace"
records in one compiled training test's report). Runs on the CPU: the trace logger is the same."""

from __future__ import annotations

import logging

import torch


def test_a_compilation_leaves_no_torch_debug_records_in_the_captured_log(caplog) -> None:
    compiled = torch.compile(lambda x: torch.sin(x) * 2 + 1)
    x = torch.randn(8)
    assert torch.allclose(compiled(x), torch.sin(x) * 2 + 1)
    noisy = [r for r in caplog.records if r.name.startswith("torch") and r.levelno < logging.INFO]
    assert not noisy, f"{len(noisy)} torch debug records, e.g. {noisy[0].name}: {noisy[0].getMessage()[:80]}"
