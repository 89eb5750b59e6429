"""Which weights a finished run should ship, measured on dev: its last epoch checkpoint against the
average of its last k epoch checkpoints (k = 2 .. --last), each scored as the train stage scores its
final model on a CPU: the label-smoothed validation loss over the whole val split (fp32), and greedy BLEU on
the first val sentences (sacreBLEU on output tokens, tokenize=none: a training signal, not a test score).

Nothing is trained: the run's checkpoints (`train.keep_last` of them) are read as they are. It is
how `train.average_last` is chosen for a schedule (general/params.yaml: with `train.cooldown` the last,
annealed checkpoint against averages that mix it with unannealed ones).

    python -m bench.final_weights --checkpoints models/general/en-de/checkpoints \\
        --bin data/general/en-de/bin --vocab data/general/vocab --last 3
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import Any

import torch

from bench.common.record import write_result
from nmt.model import checkpoint
from nmt.model.transformer import build_model
from nmt.text.vocabularies import Vocabularies, load_vocabularies
from nmt.train.loss import LabelSmoothingKL
from nmt.train.monitor import greedy_bleu, validation_loss
from nmt.train.pairs import PairArrays, bin_direction, open_split

log = logging.getLogger("bench.final_weights")


def candidates(paths: list[Path], last: int) -> list[tuple[str, list[Path]]]:
    """The last checkpoint alone, then the averages of the last 2 .. `last` (as many as there are)."""
    out = [("last epoch", paths[-1:])]
    out += [(f"average of the last {k}", paths[-k:]) for k in range(2, min(last, len(paths)) + 1)]
    return out


def score(paths: list[Path], state: dict[str, Any], vocabs: Vocabularies, val: PairArrays,
          bleu_sentences: int) -> dict[str, Any]:
    """Val loss and greedy val BLEU of the mean of `paths`' weights (one path: that checkpoint, `state`'s
    weights); `state` is the newest checkpoint, whose model and train settings the run shares."""
    model = build_model(checkpoint.model_config_of(state), vocabs.src, vocabs.tgt)
    model.load_state_dict(checkpoint.average(paths) if len(paths) > 1 else state["model"])
    train_cfg = state["train_config"]
    started = time.perf_counter()
    loss = validation_loss(model, val, LabelSmoothingKL(len(vocabs.tgt), train_cfg["label_smoothing"]),
                           train_cfg["max_tokens"], torch.device("cpu"), autocast=False)
    bleu = greedy_bleu(model, val[:bleu_sentences], vocabs, torch.device("cpu")) if bleu_sentences else None
    return {"checkpoints": [p.name for p in paths], "val_loss": round(loss, 4),
            "val_bleu_greedy": None if bleu is None else round(bleu, 2),
            "seconds": round(time.perf_counter() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--checkpoints", type=Path, required=True, help="the run's checkpoint folder")
    p.add_argument("--bin", type=Path, required=True, help="the binarize stage's output the run trained on")
    p.add_argument("--vocab", type=Path, required=True, help="the vocab stage's output")
    p.add_argument("--last", type=int, default=3, help="largest k of the averages tried (default 3)")
    p.add_argument("--bleu-sentences", type=int, default=200, help="val sentences decoded greedily (0: none)")
    p.add_argument("--out", type=Path, default=None, help="results folder (default bench/results)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    paths = checkpoint.CheckpointDir(args.checkpoints, keep=max(args.last, 1)).epochs()
    if not paths:
        p.error(f"--checkpoints {args.checkpoints}: no epoch checkpoints there (epoch-*.pt); is it a run's folder?")
    state = checkpoint.load(paths[-1])
    vocabs = load_vocabularies(args.vocab, bin_direction(args.bin))
    checkpoint.check_vocab_hashes(state, vocabs, paths[-1])
    val = open_split(args.bin, "val", vocabs)
    rows = []
    for label, chosen in candidates(paths, args.last):
        row = {"weights": label, **score(chosen, state, vocabs, val, args.bleu_sentences)}
        log.info("%s: val_loss %.4f, greedy val BLEU %s", label, row["val_loss"], row["val_bleu_greedy"])
        rows.append(row)
    kwargs = {} if args.out is None else {"out_dir": args.out}
    write_result("final_weights", {"checkpoints": str(args.checkpoints), "step": state.get("step"),
                                    "train": {k: state["train_config"].get(k) for k in
                                              ("epochs", "cooldown", "warmup", "lr_factor", "average_last")},
                                    "rows": rows}, repeats=1, **kwargs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
