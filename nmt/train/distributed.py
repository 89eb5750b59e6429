"""Multi-process training through torchrun + DistributedDataParallel.

torchrun sets RANK / WORLD_SIZE / LOCAL_RANK; without them training is a single process.
NCCL on CUDA, gloo on CPU (so the distributed path is tested on CPU machines too).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class Dist:
    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world > 1


def init_distributed(device_kind: str) -> Dist:
    """Join the process group torchrun describes, if any."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Dist()
    backend = "nccl" if device_kind == "cuda" else "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend=backend)
    return Dist(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))


def all_sum(values: list[float], info: Dist, device: torch.device) -> list[float]:
    """Sum floats over all ranks (identity on one process)."""
    if not info.enabled:
        return values
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return t.tolist()


def all_sum_tensor(value: torch.Tensor, info: Dist) -> torch.Tensor:
    """Sum a device tensor over all ranks, on the device (no host synchronisation)."""
    if info.enabled:
        dist.all_reduce(value)
    return value


def shutdown(info: Dist) -> None:
    if info.enabled and dist.is_initialized():
        dist.destroy_process_group()
