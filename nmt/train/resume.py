"""What makes a training run resumable: its progress, the checkpoint state, and when a
checkpoint may be continued (same settings, vocabularies and training code) or not.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from nmt.config.model import ModelConfig
from nmt.config.train import TrainConfig
from nmt.model import checkpoint
from nmt.model.transformer import Transformer

log = logging.getLogger(__name__)


@dataclass
class Progress:
    """Where training stands; saved in every checkpoint so a resume continues exactly."""

    step: int = 0  # optimizer updates done
    epoch: int = 0  # epochs completed
    batch: int = 0  # batches of the current epoch already consumed (this rank's shard)
    best: float | None = None  # best early-stopping metric so far
    best_step: int | None = None  # the update after which it was measured (best.pt's step)
    bad_epochs: int = 0  # epochs since it last improved
    history: list[dict[str, float]] = field(default_factory=list)


def state_dict(model: Transformer, model_cfg: ModelConfig, cfg: TrainConfig, vocabs, optimizer, scheduler,
               prog: Progress) -> dict[str, Any]:
    state = checkpoint.model_payload(model, model_cfg, vocabs)
    state.update(train_config=asdict(cfg), code=code_fingerprint(),
                 optimizer=optimizer.state_dict(), scheduler=scheduler.state_dict(),
                 rng={"torch": torch.get_rng_state(),
                      "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []},
                 **asdict(prog))
    return state


# train settings that may change between an interrupted run and its resumption (epochs and max_steps not
# with train.cooldown > 0: they move where the rate anneals to, see resume_conflict)
_RESUME_FREE = {"epochs", "max_steps", "patience", "log_every", "save_every", "num_threads", "compile", "device",
                "max_val_loss", "keep_last", "average_last"}


# modules whose code decides the weights: a checkpoint written by other code is not resumed
_TRAINING_CODE = ("model/layers.py", "model/transformer.py", "train/loss.py", "train/schedule.py",
                  "train/batching.py", "train/pairs.py", "train/loop.py", "train/run.py", "train/step.py",
                  "train/resume.py")
_NMT = Path(__file__).resolve().parents[1]


def code_fingerprint() -> str:
    """SHA-256 over the source of the modules that determine training."""
    digest = hashlib.sha256()
    for name in _TRAINING_CODE:
        digest.update((_NMT / name).read_bytes())
    return digest.hexdigest()


def resume_conflict(state: dict[str, Any], model_cfg: ModelConfig, cfg: TrainConfig, vocabs) -> str | None:
    """Why `state` cannot be continued with this configuration and code (None: it can).

    Resuming is for interrupted runs; DVC re-runs the stage after a code change too, and
    then training must start over rather than reuse weights the old code produced."""
    if state.get("code") != code_fingerprint():
        return f"the training code changed (nmt/{{{','.join(_TRAINING_CODE)}}})"
    if state["model_config"] != asdict(model_cfg):
        return "the model section of params.yaml changed"
    mine = {k: v for k, v in asdict(cfg).items() if k not in _RESUME_FREE}
    theirs = {k: v for k, v in state["train_config"].items() if k not in _RESUME_FREE}
    if mine != theirs:
        changed = sorted(k for k in mine if mine[k] != theirs.get(k))
        return f"train settings changed ({', '.join('train.' + k for k in changed)})"
    for side in ("src", "tgt"):
        if state["vocab"]["manifest"][side]["sha256"] != vocabs.manifest[side]["sha256"]:
            return "the vocabulary was rebuilt"
    if cfg.cooldown > 0 and (state["train_config"].get("epochs"), state["train_config"].get("max_steps")) != (
            cfg.epochs, cfg.max_steps):
        return "train.epochs or train.max_steps changed, and with them where train.cooldown anneals to"
    # a shorter budget than the checkpoint has done is another run, not this one continued
    if cfg.max_steps is not None and state.get("step", 0) > cfg.max_steps:
        return f"it is {state['step']} updates in, past train.max_steps={cfg.max_steps}"
    if state.get("epoch", 0) > cfg.epochs:
        return f"it is {state['epoch']} epochs in, past train.epochs={cfg.epochs}"
    return None


def restore(state: dict[str, Any], path: Path, model: Transformer, optimizer, scheduler) -> Progress:
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["rng"]["torch"])
    if state["rng"]["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["rng"]["cuda"])
    log.info("resuming from %s (update %d, epoch %d)", path, state["step"], state["epoch"])
    return Progress(**{k: state[k] for k in Progress.__dataclass_fields__ if k in state})
