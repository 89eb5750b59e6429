"""The `profile` section of params.yaml: the training data's profile (nmt/drift/profile.py), the
counts the served traffic is compared with by the drift check (flows/drift.py, docs/lifecycle.md)."""

from __future__ import annotations

from dataclasses import dataclass

from nmt.config.loader import require


@dataclass(frozen=True)
class ProfileConfig:
    """The `profile` section of params.yaml."""

    train_split: str = "train"  # validated split sampled for lengths, <unk> share and language (not decoded)
    train_sentences: int = 5000  # lines of it sampled (all of them when it has fewer)
    dev_split: str = "val"  # the dev split: the same counts, and decoded as the server decodes for confidence
    dev_sentences: int = 1000  # lines of it sampled and decoded (all of them when it has fewer)
    seed: int = 0  # seed of both samples: the same lines every run
    threads: int = 0  # ONNX Runtime intra-op threads while the dev sample is decoded (0: its default)
    batch_size: int = 32  # sentences decoded together (the server's --max-batch default; the output is the same)

    def __post_init__(self) -> None:
        for name in ("train_split", "dev_split"):
            split = getattr(self, name)
            require(bool(split) and "/" not in split and not split.startswith("."), name,
                    "must be a split name of the validated corpus, e.g. train or val")
        require(self.train_sentences >= 1, "train_sentences", "must be >= 1")
        require(self.dev_sentences >= 1, "dev_sentences", "must be >= 1")
        require(self.seed >= 0, "seed", "must be >= 0")
        require(self.threads >= 0, "threads", "must be >= 0 (0: ONNX Runtime's default)")
        require(self.batch_size >= 1, "batch_size", "must be >= 1")
