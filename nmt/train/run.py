"""What one training run works with (`Run`), built once by `nmt.train.loop.setup()` and read by
the loop and by the update step (`nmt.train.step`)."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch

from nmt.config.model import ModelConfig
from nmt.config.train import TrainConfig
from nmt.model import checkpoint
from nmt.model.transformer import Transformer
from nmt.text.vocabularies import Vocabularies
from nmt.train.batching import Pairs, TokenPair
from nmt.train.distributed import Dist
from nmt.train.loss import LabelSmoothingKL


@dataclass(frozen=True)
class Run:
    """What one training run works with, built once by `setup()` and only read afterwards
    (the run's mutable state is its `Progress`)."""

    model_cfg: ModelConfig
    cfg: TrainConfig
    vocabs: Vocabularies
    token_pairs: list[TokenPair]  # training tokens, segmented afresh each epoch under BPE-dropout ([] without)
    train_pairs: Pairs  # training ids (deterministic segmentation, at most train.max_len per side; data/bin: mapped)
    val_pairs: Pairs  # validation ids
    model: Transformer  # the weights that are checkpointed and returned
    net: torch.nn.Module  # what updates call: `model`, wrapped by DDP and torch.compile when enabled
    criterion: LabelSmoothingKL
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    ckpts: checkpoint.CheckpointDir
    device: torch.device
    info: Dist  # this process's rank and the world size
    bf16: bool  # forward passes under bf16 autocast
    lazy_checks: bool  # losses read back at log points, not after every update (an accelerator: no waiting on it)
    all_positions: bool  # every target position reaches the output layer, padding masked in the loss
    live: Any  # DVCLive logger (rank 0 with a live_dir), else None


def attention_kernels(device: torch.device, cudnn: bool) -> AbstractContextManager[Any]:
    """The scaled-dot-product attention kernels a run may use (`train.cudnn_attention`): on CUDA without
    cuDNN's fused attention unless asked for (flash, memory-efficient, then the math fallback); elsewhere,
    and with `cudnn`, torch's own choice."""
    if device.type != "cuda" or cudnn:
        return nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])
