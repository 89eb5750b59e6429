"""The `drift` section of params.yaml: when the served traffic has drifted from the training data's
profile (the drift check, flows/drift.py; the statistic: nmt/drift/report.py).

Read by the Prefect flow, not by any DVC stage: the check watches what the server is asked, it does
not change what a stage produces. A population stability index (PSI) above its aggregate's
`max_psi` is drift; 0.1-0.2 is commonly read as a moderate shift, above 0.2 as a significant one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from nmt.config.loader import require


@dataclass(frozen=True)
class DriftThresholds:
    """The PSI above which each aggregate has drifted."""

    pieces: float = 0.2  # histogram of the sentences' lengths in source pieces
    unknown: float = 0.2  # histogram of the sentences' share of <unk> pieces
    confidence: float = 0.2  # histogram of the translations' confidence
    language: float = 0.2  # shares of the detected languages

    def __post_init__(self) -> None:
        for name in ("pieces", "unknown", "confidence", "language"):
            value = getattr(self, name)
            require(math.isfinite(value) and value > 0.0, name, "must be a positive number (0.2: a significant shift)")


@dataclass(frozen=True)
class DriftConfig:
    """The `drift` section of params.yaml."""

    max_psi: DriftThresholds = field(default_factory=DriftThresholds)  # per aggregate: PSI above this is drift
    epsilon: float = 1e-4  # share given to an empty bucket (PSI takes the log of shares: no zero)
    min_sentences: int = 200  # fewer translated sentences in the window: "not enough data", not drift
    min_detected: int = 50  # fewer texts with a detected language: the language shares are "not enough data"
    hours: float = 24.0  # the window: the server's snapshots of the last this many hours
    retrain_on_drift: bool = False  # on drift, also start a run of the retraining deployment
    retrain_deployment: str = "nmt-pipeline/weekly-retrain"  # FLOW/DEPLOYMENT started then (prefect.yaml)

    def __post_init__(self) -> None:
        require(math.isfinite(self.epsilon) and 0.0 < self.epsilon < 0.01, "epsilon",
                "must be above 0 and below 0.01 (a share standing in for an empty bucket)")
        require(self.min_sentences >= 1, "min_sentences", "must be >= 1")
        require(self.min_detected >= 1, "min_detected", "must be >= 1")
        require(math.isfinite(self.hours) and self.hours > 0.0, "hours", "must be a positive number of hours")
        flow_name, _, deployment = self.retrain_deployment.partition("/")
        require(bool(flow_name.strip()) and bool(deployment.strip()), "retrain_deployment",
                "must name a deployment as FLOW/DEPLOYMENT, e.g. nmt-pipeline/weekly-retrain")
