"""The runs tools/gpu/device.py's part a measures, each in a fresh process: the training loop's epochs
timed (`timed_epochs`) and its first updates profiled (`profile`), spawned by `fresh_process` with
nothing loaded, no CUDA context and no caches, and ended with the process that waits for them. A
spawned process imports this module to find the function it runs."""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from tools.gpu.children import die_with_parent


def log_here() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")


def _die_with_parent() -> None:
    """A spawned run ends when the process that waits for it does: a part cut at its `timeout` must not leave
    a run holding the call's output open until the call's limit."""
    die_with_parent()
    log_here()


def fresh_process(fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """fn(*args) in a new Python process (spawned: nothing loaded, no CUDA context, no caches)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_die_with_parent) as pool:
        return pool.submit(fn, *args).result()


def timed_epochs(model_cfg, cfg, data: Path, ckpt: Path) -> dict[str, Any]:
    """Seconds per epoch and per validation of a fresh run, and the first epoch against the later ones."""
    from nmt.train.loop import train

    shutil.rmtree(ckpt, ignore_errors=True)  # a rerun on a warm machine starts afresh
    started = time.perf_counter()
    _, prog = train(model_cfg, cfg, data / "vocab", data / "tokens", ckpt, bin_dir=data / "bin")
    per_epoch = [{k: h[k] for k in ("epoch", "step", "epoch_s", "val_s", "val_loss", "val_bleu") if k in h}
                 for h in prog.history if "epoch_s" in h]
    later = [e["epoch_s"] for e in per_epoch[1:]]
    return {"epochs": per_epoch, "seconds_total": time.perf_counter() - started,
            "loss_positions": cfg.loss_positions, "pad_multiple": cfg.pad_multiple,
            "cudnn_attention": cfg.cudnn_attention, "compile": cfg.compile, "compile_mode": cfg.compile_mode,
            "epoch1_over_later": per_epoch[0]["epoch_s"] / (sum(later) / len(later)) if later else None}


def profile(model_cfg, cfg, data: Path, ckpt: Path, top: int = 20) -> dict[str, Any]:
    """torch.profiler over a fresh run's first updates and its validation: top operators by device
    (CUDA) or CPU self time, and the share the top ones take."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    from nmt.train.loop import train

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    shutil.rmtree(ckpt, ignore_errors=True)
    started = time.perf_counter()
    with torch_profile(activities=activities) as prof:
        train(model_cfg, cfg, data / "vocab", data / "tokens", ckpt, bin_dir=data / "bin")
    wall = time.perf_counter() - started
    key = "self_device_time_total" if torch.cuda.is_available() else "self_cpu_time_total"
    events = [e for e in prof.key_averages() if getattr(e, key, 0) > 0]
    events.sort(key=lambda e: getattr(e, key), reverse=True)
    total = sum(getattr(e, key) for e in events) or 1.0
    rows = [{"name": e.key, "calls": e.count, "self_ms": getattr(e, key) / 1e3, "share": getattr(e, key) / total,
             "cpu_total_ms": e.cpu_time_total / 1e3} for e in events[:top]]
    return {"updates": cfg.max_steps, "wall_s": wall, "time_kind": key, "device_ms_total": total / 1e3,
            "top": rows}
