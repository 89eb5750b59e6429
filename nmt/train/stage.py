"""Stage 5, train: train the Transformer (params: model, train), then write the final model, gated.

The loop is `nmt.train.loop.train()`, on the train and val pairs memory-mapped from data/bin
(the binarize stage); with `train.bpe_dropout` it also reads the training tokens of data/tokens,
which it segments afresh every epoch. After it, the final weights are the average of the
last `average_last` epoch checkpoints (paper 6.1), or the best / last. They are written as a
self-contained model file (weights, config, vocabularies, tokenizer settings and the
detokenizer the binarize stage learned from the training targets) and gated: the training loss stayed finite,
the validation loss of the final model is below `train.max_val_loss`, and the file loads
with `torch.load(weights_only=True)` with vocabularies matching data/vocab (a file that does not
is the gate's finding; any other exception in the check is a bug and propagates).
"""

from __future__ import annotations

import json
import logging
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nmt.command import arg, stage_main
from nmt.config.data import TokenizeConfig
from nmt.config.model import ModelConfig
from nmt.config.train import TrainConfig
from nmt.data.indexed import DETOKENIZER
from nmt.errors import DataError
from nmt.files.atomic import staging_path
from nmt.files.killpoints import kill_point
from nmt.gates.gate import Gate
from nmt.model import checkpoint
from nmt.model.transformer import Transformer
from nmt.text.detokenizer import Detokenizer
from nmt.text.vocabularies import load_vocabularies
from nmt.train.distributed import init_distributed, shutdown
from nmt.train.loop import Progress, train
from nmt.train.loss import LabelSmoothingKL
from nmt.train.monitor import plot_curves, validation_loss
from nmt.train.pairs import bin_direction, open_split

log = logging.getLogger(__name__)

REPORT_NAME = "train"

# what a model file that is unreadable or malformed makes the check raise: DataError from
# `checkpoint.load` (torch.load's unpickling errors included) and `check_vocab_hashes`, OSError
# from reading it, KeyError from a state without the vocabulary manifest
MODEL_FILE_FAULTS = (DataError, OSError, KeyError)


def read_detokenizer(bin_dir: Path) -> Detokenizer:
    """The detokenizer the binarize stage learned (data/bin/detokenizer.json)."""
    path = Path(bin_dir) / DETOKENIZER
    try:
        return Detokenizer.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: cannot read the detokenizer ({type(exc).__name__}: {exc}); "
                        "re-run the binarize stage (`dvc repro binarize`)") from None


def final_weights(model: Transformer, cfg: TrainConfig, ckpt_dir: checkpoint.CheckpointDir,
                  best_step: int | None = None) -> str:
    """Load the configured final weights into `model`; return how they were chosen. The best epoch's
    weights are those of the update the run's records name (`best_step`): `best.pt` when it holds
    that update (a kill between the epoch's checkpoint and best.pt leaves an older one), else that
    epoch's own checkpoint; neither kept and verified is an error, never another epoch's weights."""
    epochs = ckpt_dir.epochs()
    if cfg.average_last > 1 and len(epochs) >= 2:
        chosen = epochs[-cfg.average_last:]
        model.load_state_dict(checkpoint.average(chosen))
        return f"average of {len(chosen)} epoch checkpoints ({chosen[0].name} .. {chosen[-1].name})"
    best = ckpt_dir.root / "best.pt"
    if cfg.average_last == 0 and (best.is_file() or best_step is not None):
        state = checkpoint.load(best) if best.is_file() else None
        if best_step is not None and (state is None or state["step"] != best_step):
            own = ckpt_dir.at_step(best_step)
            if own is None:
                raise DataError(f"{best}: holds update {None if state is None else state['step']}, the run's "
                                f"records name update {best_step} as best and its checkpoint is gone; delete "
                                f"{ckpt_dir.root} and re-run `dvc repro train` to train again")
            log.warning("%s holds update %s, not the best (%d): using %s", best, state and state["step"], best_step,
                        own.name)
            state = checkpoint.load(own)
        assert state is not None
        model.load_state_dict(state["model"])
        return f"best epoch checkpoint (update {state['step']})"
    return "weights at the end of training"


@dataclass(frozen=True)
class TrainParams:
    """The params.yaml sections the train stage reads (only these: nmt.config.loader.load_sections)."""

    model: ModelConfig  # the Transformer's shape
    train: TrainConfig  # optimisation, batching, checkpoints, stopping
    tokenize: TokenizeConfig  # lowercasing, recorded in the model file


@dataclass(frozen=True)
class TrainPaths:
    vocab: Path = arg("vocab stage output (data/vocab)")
    tokens: Path = arg("tokenize stage output (data/tokens): BPE-dropout's tokens (read only with train.bpe_dropout)")
    bin: Path = arg("binarize stage output (data/bin): the train and val ids, memory-mapped")
    checkpoints: Path = arg("checkpoint directory; an interrupted run resumes from it (models/checkpoints)")
    model: Path = arg("final model file to write (models/model.pt)")
    reports: Path = arg("directory for gate reports (reports/validation)")
    train_reports: Path = arg("directory for curves and DVCLive metrics (reports/train)")


def train_stage(model_cfg: ModelConfig, cfg: TrainConfig, tokenize_cfg: TokenizeConfig, paths: TrainPaths
                ) -> Gate | None:
    """Train, pick the final weights, gate them, write the model file and curves (rank 0)."""
    detok = read_detokenizer(paths.bin)  # before training: a missing file is an error now, not after hours
    model, prog = train(model_cfg, cfg, paths.vocab, paths.tokens, paths.checkpoints,
                        live_dir=Path(paths.train_reports) / "live", bin_dir=paths.bin)
    info = init_distributed("cpu")  # already initialised by train(); just read rank / world
    try:
        return _finish(model, prog, detok, model_cfg, cfg, tokenize_cfg, paths) if info.main else None
    finally:
        shutdown(info)


def _finish(model: Transformer, prog: Progress, detok: Detokenizer, model_cfg: ModelConfig, cfg: TrainConfig,
            tokenize_cfg: TokenizeConfig, paths: TrainPaths) -> Gate:
    how = final_weights(model, cfg, checkpoint.CheckpointDir(paths.checkpoints, cfg.keep_last), prog.best_step)
    vocabs = load_vocabularies(paths.vocab, bin_direction(paths.bin))
    device = next(model.parameters()).device
    val_loss = validation_loss(model, open_split(paths.bin, "val", vocabs),
                               LabelSmoothingKL(len(vocabs.tgt), cfg.label_smoothing), cfg.max_tokens,
                               device, device.type == "cuda")
    gate = Gate(REPORT_NAME)
    losses = [h["train_loss"] for h in prog.history if "train_loss" in h]
    gate.check("training loss finite", bool(losses) and all(math.isfinite(x) for x in losses),
               "every logged training loss finite", f"{len(losses)} logged, last {losses[-1] if losses else None}")
    gate.check("final validation loss", math.isfinite(val_loss) and val_loss < cfg.max_val_loss,
               f"< {cfg.max_val_loss:g} per token", f"{val_loss:.4f}", "train.max_val_loss")
    state = checkpoint.model_payload(model, model_cfg, vocabs)
    state.update(final={"how": how, "step": prog.step, "epoch": prog.epoch, "val_loss": val_loss},
                 history=prog.history,
                 text={"src_lang": vocabs.src_lang, "tgt_lang": vocabs.tgt_lang,
                       "lowercase": tokenize_cfg.lowercase, "detokenizer": detok.to_dict()})
    staged = staging_path(Path(paths.model))  # hidden beside models/model.pt; a kill's is swept by the next run
    checkpoint.save(staged, state)
    kill_point("model-staged")
    try:  # the file must load safely and describe the vocabularies on disk
        reloaded = checkpoint.load(staged)
        checkpoint.check_vocab_hashes(reloaded, vocabs, staged)
        ok, observed = True, "loads with weights_only=True; vocab SHA-256 match"
    except MODEL_FILE_FAULTS as exc:  # a bad file is the gate's finding; anything else is a bug and propagates
        ok, observed = False, str(exc) if isinstance(exc, DataError) else f"{type(exc).__name__}: {exc}"
    gate.check("model file", ok, "loadable, vocabularies match data/vocab", observed)
    gate.stats.update(final_weights=how, updates=prog.step, epochs=prog.epoch, val_loss=val_loss,
                      last_epoch=next((h for h in reversed(prog.history) if "val_loss" in h), None))
    plot_curves(prog.history, Path(paths.train_reports) / "curves.png")
    try:
        gate.finish(paths.reports)
    except Exception:
        staged.unlink(missing_ok=True)
        raise
    staged.replace(paths.model)
    log.info("final model (%s) written to %s; validation loss %.4f", how, paths.model, val_loss)
    return gate


def run(params: TrainParams, paths: TrainPaths) -> Gate | None:
    return train_stage(params.model, params.train, params.tokenize, paths)


def main(argv: Sequence[str] | None = None) -> int:
    """Multi-GPU: `torchrun --nproc_per_node N -m nmt.train.stage ...` (the arguments of dvc.yaml)."""
    return stage_main("train", __doc__.split("\n\n")[0], TrainPaths, TrainParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
