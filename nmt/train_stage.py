"""The train stage around the loop: final model, its gate, and the training report.

After `train()` the final weights are the average of the last `average_last` epoch
checkpoints (paper 6.1), or the best / last. They are written as a self-contained model
file (weights, config, vocabularies) and gated (with what translation needs besides: tokenizer settings and a detokenizer
learned from the training targets): the training loss stayed finite, the
validation loss of the final model is below `train.max_val_loss`, and the file loads with
`torch.load(weights_only=True)` with vocabularies matching data/vocab.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path


from nmt import checkpoint
from nmt.batching import load_pairs
from nmt.build_vocab import load_vocabularies
from nmt.config import TokenizeConfig
from nmt.corpus import split_file
from nmt.detokenize import Detokenizer
from nmt.distributed import init_distributed, shutdown
from nmt.gates import Gate
from nmt.layers import ModelConfig
from nmt.loss import LabelSmoothingKL
from nmt.model import Transformer
from nmt.monitor import plot_curves, validation_loss
from nmt.train import Progress, train
from nmt.tokenization import SUFFIX, read_tokenized
from nmt.train_config import TrainConfig

log = logging.getLogger(__name__)

REPORT_NAME = "train"


def final_weights(model: Transformer, cfg: TrainConfig, ckpt_dir: checkpoint.CheckpointDir) -> str:
    """Load the configured final weights into `model`; return how they were chosen."""
    epochs = ckpt_dir.epochs()
    if cfg.average_last > 1 and len(epochs) >= 2:
        chosen = epochs[-cfg.average_last:]
        model.load_state_dict(checkpoint.average(chosen))
        return f"average of {len(chosen)} epoch checkpoints ({chosen[0].name} .. {chosen[-1].name})"
    best = ckpt_dir.root / "best.pt"
    if cfg.average_last == 0 and best.is_file():
        model.load_state_dict(checkpoint.load(best)["model"])
        return "best epoch checkpoint"
    return "weights at the end of training"


def train_stage(model_cfg: ModelConfig, cfg: TrainConfig, vocab_dir: Path, tokens_dir: Path, ckpt_dir: Path,
                model_path: Path, report_dir: Path, train_report_dir: Path,
                tokenize_cfg: TokenizeConfig = TokenizeConfig()) -> Gate | None:
    """Train, pick the final weights, gate them, write the model file and curves (rank 0)."""
    model, prog = train(model_cfg, cfg, vocab_dir, tokens_dir, ckpt_dir, live_dir=Path(train_report_dir) / "live")
    info = init_distributed("cpu")  # already initialised by train(); just read rank / world
    try:
        if not info.main:
            return None
        return _finish(model, prog, model_cfg, cfg, vocab_dir, tokens_dir, ckpt_dir, model_path, report_dir,
                       train_report_dir, tokenize_cfg)
    finally:
        shutdown(info)


def _finish(model: Transformer, prog: Progress, model_cfg: ModelConfig, cfg: TrainConfig, vocab_dir: Path,
            tokens_dir: Path, ckpt_dir: Path, model_path: Path, report_dir: Path, train_report_dir: Path,
            tokenize_cfg: TokenizeConfig) -> Gate:
    how = final_weights(model, cfg, checkpoint.CheckpointDir(ckpt_dir, cfg.keep_last))
    vocabs = load_vocabularies(vocab_dir)
    device = next(model.parameters()).device
    val_loss = validation_loss(model, load_pairs(tokens_dir, "val", vocabs),
                               LabelSmoothingKL(len(vocabs.tgt), cfg.label_smoothing), cfg.max_tokens,
                               device, device.type == "cuda")
    gate = Gate(REPORT_NAME)
    losses = [h["train_loss"] for h in prog.history if "train_loss" in h]
    gate.check("training loss finite", bool(losses) and all(math.isfinite(x) for x in losses),
               "every logged training loss finite", f"{len(losses)} logged, last {losses[-1] if losses else None}")
    gate.check("final validation loss", math.isfinite(val_loss) and val_loss < cfg.max_val_loss,
               f"< {cfg.max_val_loss:g} per token", f"{val_loss:.4f}")
    state = checkpoint.model_payload(model, model_cfg, vocabs)
    tgt_lang = vocabs.manifest["tgt_lang"]
    detok = Detokenizer.learn(read_tokenized(split_file(tokens_dir, "train", tgt_lang, SUFFIX)))
    state.update(final={"how": how, "step": prog.step, "epoch": prog.epoch, "val_loss": val_loss},
                 history=prog.history,
                 text={"src_lang": vocabs.manifest["src_lang"], "tgt_lang": tgt_lang,
                       "lowercase": tokenize_cfg.lowercase, "detokenizer": detok.to_dict()})
    staged = Path(model_path).with_suffix(".candidate.pt")
    checkpoint.save(staged, state)
    try:  # the file must load safely and describe the vocabularies on disk
        reloaded = checkpoint.load(staged)
        checkpoint.check_vocab_hashes(reloaded, vocabs, staged)
        ok, observed = True, "loads with weights_only=True; vocab SHA-256 match"
    except Exception as exc:  # any failure here is the gate's finding
        ok, observed = False, str(exc)
    gate.check("model file", ok, "loadable, vocabularies match data/vocab", observed)
    gate.stats.update(final_weights=how, updates=prog.step, epochs=prog.epoch, val_loss=val_loss,
                      last_epoch=next((h for h in reversed(prog.history) if "val_loss" in h), None))
    plot_curves(prog.history, Path(train_report_dir) / "curves.png")
    try:
        gate.finish(report_dir)
    except Exception:
        staged.unlink(missing_ok=True)
        raise
    staged.replace(model_path)
    log.info("final model (%s) written to %s; validation loss %.4f", how, model_path, val_loss)
    return gate
