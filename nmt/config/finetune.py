"""The `finetune` section of a fine-tune's params file (finetune/<name>.yaml; docs/training.md, Fine-tuning).

A fine-tune continues a trained model (the parent) on a corpus of the user's own: the parent's model
section and vocabularies are kept, the `train` section of the same file gives batching, label
smoothing, validation and checkpoints, and this section the schedule (a short linear warm-up to `lr`,
held, then annealed to 0 over the last `cooldown` share of `max_steps`), the budget (`max_steps`
updates, at most `max_minutes` of training) and the share of the parent's own training pairs replayed
against forgetting. Not re-exported from nmt/config/__init__.py: only the fine-tune stages read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nmt.config.loader import require


@dataclass(frozen=True)
class FinetuneConfig:
    lr: float = 1e-4  # Adam's peak learning rate (the parent's Noam rate at its end is ~1e-4 to 3e-4)
    warmup: int = 50  # updates of linear warm-up from 0 to `lr` (Adam's moments start afresh)
    cooldown: float = 0.3  # share of `max_steps` at the end over which the rate falls linearly to 0
    max_steps: int = 1000  # updates of the fine-tune
    max_minutes: float | None = 20.0  # stop (checkpointed, then finished as usual) once training has run this
    # long in this process, even before max_steps (null: no clock); a run stopped by it depends on the host
    replay: float = 0.1  # share of each epoch's training pairs drawn afresh from the parent's training pairs
    # (0: the new corpus only); needs the parent's binarized training data (the stage's --replay)
    general_sets: tuple[str, ...] = ()  # test sets that stand for what the parent could do
    # (e.g. newstest2014): the compare gate fails a fine-tune that loses more than max_general_drop on one
    max_general_drop: float = 1.0  # sacreBLEU (0-100) a general set may fall below the parent's

    def __post_init__(self) -> None:
        require(math.isfinite(self.lr) and 0.0 < self.lr <= 0.01, "lr",
                "must be above 0 and at most 0.01 (a fine-tune's rate is ~1e-5 to 1e-3)")
        require(self.warmup >= 0, "warmup", "must be >= 0 (0: the full rate from the first update)")
        require(0.0 <= self.cooldown < 1.0, "cooldown", "must be in [0, 1) (a share of max_steps; 0: none)")
        require(self.max_steps >= 1, "max_steps", "must be >= 1")
        require(self.warmup < self.max_steps, "warmup", f"must be below max_steps ({self.max_steps})")
        require(self.max_minutes is None or (math.isfinite(self.max_minutes) and self.max_minutes > 0),
                "max_minutes", "must be a positive number of minutes, or null for no clock")
        require(0.0 <= self.replay < 1.0, "replay", "must be in [0, 1): the share of replayed pairs (0.1 = 10%)")
        require(len(set(self.general_sets)) == len(self.general_sets), "general_sets", "names a test set twice")
        require(math.isfinite(self.max_general_drop) and 0.0 <= self.max_general_drop <= 100.0,
                "max_general_drop", "must be 0 to 100 (sacreBLEU points)")

