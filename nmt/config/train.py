"""The `train` section of params.yaml: optimisation, batching, checkpoints, stopping."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nmt.config.loader import require


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 1234  # seeds weights, dropout and the batch order
    max_tokens: int = 4096  # token budget of one batch: rows x longest side, per side (paper: 25000)
    accum_steps: int = 1  # batches per optimizer update (effective budget = max_tokens x accum_steps x GPUs)
    epochs: int = 20  # upper bound on passes over the training data
    max_steps: int | None = None  # stop after this many updates (null: no limit)
    warmup: int = 4000  # Noam warm-up updates (paper: 4000)
    lr_factor: float = 1.0  # Noam scale factor
    cooldown: float = 0.0  # share of the planned updates (epochs x an epoch's updates, or max_steps if fewer) at
    # the end over which the Noam rate is annealed linearly to 0 (warmup-stable-decay); 0: the paper's schedule
    label_smoothing: float = 0.1  # eps_ls (paper: 0.1)
    bpe_dropout: float = 0.0  # BPE-dropout (Provilkov et al. 2020): each merge skipped with this probability
    # while segmenting the training pairs, a fresh sample every epoch (0: off; needs vocab.kind: bpe)
    clip_norm: float | None = None  # clip the global gradient norm to this (null: no clipping)
    max_len: int = 128  # training pairs with more ids on a side are skipped
    val_bleu_sentences: int = 200  # validation sentences decoded greedily for BLEU each epoch (0: none)
    early_stop_metric: Literal["val_bleu", "val_loss"] = "val_bleu"  # what early stopping watches (val_bleu:
    # higher is better, needs val_bleu_sentences > 0; val_loss: lower is better)
    patience: int = 5  # epochs without improvement before stopping
    save_every: int = 0  # also checkpoint every N updates (0: at epoch ends only)
    keep_last: int = 5  # epoch checkpoints kept (plus the best)
    average_last: int = 5  # final model = average of the last K epoch checkpoints (paper 6.1); 1: last; 0: best
    device: Literal["auto", "cpu", "cuda"] = "auto"  # auto: CUDA when available
    compile: bool = False  # torch.compile the model (CUDA)
    compile_mode: Literal["default", "reduce-overhead", "max-autotune"] = "default"  # torch.compile's mode
    # (reduce-overhead: CUDA graphs, one per batch shape: pair it with pad_multiple and loss_positions: all)
    pad_multiple: int = 1  # batch lengths padded up to a multiple of this (8 on a GPU: few distinct shapes for
    # torch.compile and CUDA graphs, tensor-core-aligned); 1: to the longest pair only (least work)
    loss_positions: Literal["auto", "real", "all"] = "auto"  # which target positions reach the output layer.
    # real: only non-pad ones (least work; selecting them waits on the device); all: every position, padding
    # masked in the loss (fixed shapes, no host synchronisation); auto: real on a CPU, all on CUDA
    loss_chunk: int = 0  # output layer and loss run together this many target positions at a time, their
    # gradients made on the way (the whole tokens x vocab logits never exist: the step's largest activation);
    # 0: the whole logits at once
    cudnn_attention: bool = False  # let torch pick cuDNN's fused attention on CUDA (its first pick on Hopper). Off:
    # flash / memory-efficient kernels, built ahead; cuDNN makes an execution plan for each new batch shape, the
    # suspect for a first epoch several times a later one on an H200 (bench/gpu_device.py measures both)
    precision: Literal["auto", "fp32", "bf16"] = "auto"  # bf16 autocast, fp32 weights; auto: on CUDA and on CPUs
    # with native bf16 matmuls (AVX512-BF16 / AMX: ~2x the fp32 step), fp32 elsewhere
    num_threads: int = 0  # CPU threads for torch (0: all cores)
    log_every: int = 20  # updates between progress-bar refreshes of loss / lr / tokens per second
    max_val_loss: float = 6.0  # gate: validation loss (per token) must end below this

    def __post_init__(self) -> None:
        require(self.max_tokens > 0 and self.accum_steps >= 1, "max_tokens", "must be > 0 (and accum_steps >= 1)")
        require(self.warmup >= 1 and self.lr_factor > 0, "warmup", "warmup >= 1 and lr_factor > 0 required")
        require(0.0 <= self.cooldown < 1.0, "cooldown", "must be in [0, 1) (a share of the planned updates; 0: off)")
        require(0.0 <= self.label_smoothing < 1.0, "label_smoothing", "must be in [0, 1)")
        require(0.0 <= self.bpe_dropout < 1.0, "bpe_dropout", "must be in [0, 1)")
        require(self.keep_last >= max(self.average_last, 1), "keep_last", "must be >= average_last")
        require(self.epochs >= 1 and self.patience >= 1, "epochs", "epochs and patience must be >= 1")
        require(self.max_steps is None or self.max_steps >= 1, "max_steps", "must be >= 1 or null")
        require(self.loss_chunk >= 0, "loss_chunk", "must be >= 0 (0: the whole logits at once)")
        require(self.pad_multiple >= 1, "pad_multiple", "must be >= 1 (1: no rounding)")
        require(self.early_stop_metric != "val_bleu" or self.val_bleu_sentences > 0, "early_stop_metric",
                "val_bleu needs train.val_bleu_sentences > 0 (it is 0: no BLEU is computed); set "
                "train.val_bleu_sentences > 0 or train.early_stop_metric: val_loss")
