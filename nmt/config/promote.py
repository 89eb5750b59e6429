"""The `promote` section of params.yaml: when a newly trained model replaces the one in
production (champion / challenger, `flows/registry.py`).

Read by the Prefect flow and `python -m flows.registry promote`, not by any DVC stage: the
rule decides which model consumers get, it does not change what a stage produces. The rule is
promotion by evidence (flows/promotion.py) wherever the champion's ONNX package can be decoded:
non-inferiority within `bleu_margin` / `chrf_margin` on every set, no set significantly worse, then
the speed budget. `max_bleu_drop` is the fallback's, the point-score rule where the project
declares no champion package (or, with `--allow-point-score`, where it cannot be fetched).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nmt.config.loader import require


@dataclass(frozen=True)
class PromoteConfig:
    stage: str = "prod"  # GTO stage the champion holds; consumers fetch the model at this stage
    max_bleu_drop: float = 0.0  # fallback rule only: sacreBLEU (0-100) a challenger may lose on any test set
    alpha: float = 0.05  # family-wise level of the Holm-corrected paired bootstrap tests (one per test set)
    bleu_margin: float = 1.0  # non-inferiority: each set's 95% lower bound of challenger - champion BLEU above -this
    chrf_margin: float = 0.75  # the same for chrF (0-100); both metrics, every set, before any speed trade
    min_speed_ratio: float = 0.9  # challenger sentences/s over the champion's, measured side by side, at least
    resamples: int = 1000  # paired bootstrap resamples per test set (Koehn 2004; sacreBLEU's paired-bs: 1000)
    seed: int = 12345  # seed of the resampling, the same every run (sacreBLEU's default)
    threads: int = 0  # ONNX Runtime intra-op threads of both packages while they decode (0: the machine's cores)

    def __post_init__(self) -> None:
        require(bool(self.stage) and self.stage.replace("-", "").replace("_", "").isalnum(), "stage",
                "must be a name of letters, digits, '-' or '_' (a GTO stage, e.g. prod)")
        require(0.0 <= self.max_bleu_drop <= 100.0, "max_bleu_drop", "must be 0 to 100 (sacreBLEU points)")
        require(0.0 < self.alpha < 1.0, "alpha", "must be between 0 and 1 (exclusive), e.g. 0.05")
        for name in ("bleu_margin", "chrf_margin"):
            value = getattr(self, name)
            require(math.isfinite(value) and 0.0 <= value <= 100.0, name,
                    "must be 0 to 100 (metric points the challenger may be shown to lose at most; 0: shown not worse)")
        require(math.isfinite(self.min_speed_ratio) and self.min_speed_ratio > 0.0, "min_speed_ratio",
                "must be a positive number (1.0: at least as fast as the champion)")
        require(self.resamples >= 100, "resamples", "must be at least 100 (1000 as sacreBLEU's paired-bs)")
        require(self.seed >= 0, "seed", "must be >= 0")
        require(self.threads >= 0, "threads", "must be >= 0 (0: the machine's cores)")
