"""The `promote` section of params.yaml: when a newly trained model replaces the one in
production (champion / challenger, `flows/registry.py`).

Read by the Prefect flow and `python -m flows.registry promote`, not by any DVC stage: the
rule decides which model consumers get, it does not change what a stage produces.
"""

from __future__ import annotations

from dataclasses import dataclass

from nmt.config.loader import require


@dataclass(frozen=True)
class PromoteConfig:
    stage: str = "prod"  # GTO stage the champion holds; consumers fetch the model at this stage
    max_bleu_drop: float = 0.0  # sacreBLEU (0-100) a challenger may lose against the champion on any test set

    def __post_init__(self) -> None:
        require(bool(self.stage) and self.stage.replace("-", "").replace("_", "").isalnum(), "stage",
                "must be a name of letters, digits, '-' or '_' (a GTO stage, e.g. prod)")
        require(0.0 <= self.max_bleu_drop <= 100.0, "max_bleu_drop", "must be 0 to 100 (sacreBLEU points)")
