"""Fine-tune stage 2, finetune: continue a trained model on a new corpus (params: train, finetune), then
write the fine-tuned model file, gated, with its curves (docs/training.md, Fine-tuning).

It starts from `--parent` (a model file or a training checkpoint) and trains on the new corpus's
binarized pairs (`--bin`, made with the parent's vocabularies: the finetune-parent stage's `--vocab`),
with `finetune.replay` of each epoch drawn from the parent's own training pairs (`--replay`, its
data/bin), on the fine-tune's schedule and budget (nmt/finetune/loop.py). The model file holds the
weights at the end of training, the parent's text settings (lowercasing, detokenizer) and where it
came from (`parent`: file, SHA-256, direction); the same gate as the train stage's checks it: finite
training loss, validation loss on the new corpus below `train.max_val_loss`, a file that loads with
the vocabularies of `--vocab`. An interrupted fine-tune resumes with the same settings (other
settings: an error naming them).
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nmt.command import arg, stage_main
from nmt.config.finetune import FinetuneConfig
from nmt.config.train import TrainConfig
from nmt.errors import DataError
from nmt.files.atomic import staging_path
from nmt.files.killpoints import kill_point
from nmt.gates.gate import Gate

if TYPE_CHECKING:  # torch loads when the stage runs, not for `nmt finetune --help`
    from nmt.finetune.loop import Parent
    from nmt.model.transformer import Transformer
    from nmt.train.resume import Progress

log = logging.getLogger(__name__)

REPORT_NAME = "finetune"


@dataclass(frozen=True)
class FinetuneParams:
    """The sections of the fine-tune's params file this stage reads."""

    train: TrainConfig  # batching, label smoothing, validation, checkpoints (its max_steps: finetune's)
    finetune: FinetuneConfig  # schedule, budget, replay


@dataclass(frozen=True)
class FinetunePaths:
    parent: Path = arg("the model file or training checkpoint to start from (e.g. models/general/de-en/model.pt)")
    vocab: Path = arg("the parent's vocabularies (the finetune-parent stage's output)")
    bin: Path = arg("the new corpus binarized with them (its binarize stage's output): train and val pairs")
    checkpoints: Path = arg("checkpoint directory; an interrupted fine-tune resumes from it")
    model: Path = arg("fine-tuned model file to write")
    reports: Path = arg("directory for the gate report")
    train_reports: Path = arg("directory for curves and DVCLive metrics")
    replay: Path | None = arg("the parent's binarized training data, replayed (needed when finetune.replay > 0)",
                              default=None)


def finish(model: Transformer, prog: Progress, why: str, parent: Parent, cfg: TrainConfig,
           paths: FinetunePaths) -> Gate:
    """Gate the fine-tuned weights and write them as a model file (staged, checked, then renamed)."""
    from nmt.model import checkpoint
    from nmt.text.vocabularies import load_vocabularies
    from nmt.train.loss import LabelSmoothingKL
    from nmt.train.monitor import plot_curves, validation_loss
    from nmt.train.pairs import bin_direction, open_split

    vocabs = load_vocabularies(paths.vocab, bin_direction(paths.bin))
    device = next(model.parameters()).device
    val_loss = validation_loss(model, open_split(paths.bin, "val", vocabs),
                               LabelSmoothingKL(len(vocabs.tgt), cfg.label_smoothing), cfg.max_tokens, device,
                               device.type == "cuda")
    gate = Gate(REPORT_NAME)
    losses = [h["train_loss"] for h in prog.history if "train_loss" in h]
    gate.check("training loss finite", bool(losses) and all(math.isfinite(x) for x in losses),
               "every logged training loss finite", f"{len(losses)} logged, last {losses[-1] if losses else None}")
    gate.check("final validation loss", math.isfinite(val_loss) and val_loss < cfg.max_val_loss,
               f"< {cfg.max_val_loss:g} per token", f"{val_loss:.4f}", "train.max_val_loss")
    state = checkpoint.model_payload(model, parent.model_cfg, vocabs)
    origin = {"path": str(parent.path), "sha256": parent.sha256, "direction": vocabs.direction,
              "final": parent.state.get("final")}
    state.update(final={"how": f"weights at the end of the fine-tune ({why})", "step": prog.step, "epoch": prog.epoch,
                        "val_loss": val_loss},
                 history=prog.history, text=parent.state.get("text"), parent=origin)
    staged = staging_path(Path(paths.model))
    checkpoint.save(staged, state)
    kill_point("model-staged")
    try:
        checkpoint.check_vocab_hashes(checkpoint.load(staged), vocabs, staged)
        ok, observed = True, "loads with weights_only=True; vocab SHA-256 match"
    except (DataError, OSError, KeyError) as exc:
        ok, observed = False, str(exc)
    gate.check("model file", ok, "loadable, vocabularies match the parent's", observed)
    seconds = sum(r.get("epoch_s", 0.0) + r.get("val_s", 0.0) for r in prog.history)  # resumed runs: all of it
    gate.stats.update(parent=origin["path"], parent_sha256=parent.sha256, stopped=why, updates=prog.step,
                      epochs=prog.epoch, val_loss=val_loss, train_s=round(seconds, 1))
    plot_curves(prog.history, Path(paths.train_reports) / "curves.png")
    try:
        gate.finish(paths.reports)
    except Exception:
        staged.unlink(missing_ok=True)
        raise
    staged.replace(paths.model)
    log.info("fine-tuned model written to %s (%s); validation loss %.4f", paths.model, why, val_loss)
    return gate


def finetune_stage(cfg: TrainConfig, ft: FinetuneConfig, paths: FinetunePaths) -> Gate:
    from nmt.finetune.loop import finetune, load_parent

    parent = load_parent(paths.parent)
    model, prog, why = finetune(parent, ft, cfg, paths.vocab, paths.bin, paths.replay, paths.checkpoints,
                                live_dir=Path(paths.train_reports) / "live")
    return finish(model, prog, why, parent, cfg, paths)


def run(params: FinetuneParams, paths: FinetunePaths) -> Gate:
    return finetune_stage(params.train, params.finetune, paths)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("finetune", __doc__.split("\n\n")[0], FinetunePaths, FinetuneParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
