"""The training data's profile: the counts the server keeps of its traffic (`nmt.translate.traffic`),
made over a sample of the train split and of the dev split, what the drift check compares the
served traffic with (nmt/drift/report.py, flows/drift.py; docs/lifecycle.md: Drift check).

`build_profile()` turns the sentences' records (pieces, <unk> pieces, confidence, detected
language: `nmt.translate.traffic.Record`) into a `Profile`, one direction's: the train sample's
`Aggregate` (lengths, <unk> share, languages; not decoded, so no confidence) and the dev sample's
(the same, and the confidence of its translations). `Profile.reference()` is what traffic is
compared with: both summed. The profile stage (`nmt.drift.stage`) makes the records with
the package the server serves and writes `to_json()`; `read_profile()` reads it back. No text is
in a profile, only counts.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nmt.errors import DataError
from nmt.translate.traffic import Aggregate, Record, aggregate

FORMAT = 1  # the profile's layout version


@dataclass
class Profile:
    """One direction's profile: the train and dev samples' aggregates, and where they came from."""

    direction: str  # "de-en": the package's source and target language
    train: Aggregate  # the train sample: lengths, <unk> share, detected languages (confidence not measured)
    dev: Aggregate  # the dev sample: the same, and the confidence of its translations
    about: dict[str, Any] = field(default_factory=dict)  # the package, the splits and the samples (no text)

    @property
    def source(self) -> str:
        return self.train.source

    def reference(self) -> Aggregate:
        """What the traffic of this direction is compared with: the train and dev samples' counts summed
        (the confidence histogram is the dev sample's alone)."""
        total = copy.deepcopy(self.train)
        total.merge(self.dev)
        return total

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "direction": self.direction, **self.about,
                "train": self.train.to_json(), "dev": self.dev.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Profile:
        if data.get("format") != FORMAT:
            raise DataError(f"profile format {data.get('format')!r}, this version reads {FORMAT}")
        about = {k: v for k, v in data.items() if k not in ("format", "direction", "train", "dev")}
        return cls(str(data["direction"]), Aggregate.from_json(data["train"]), Aggregate.from_json(data["dev"]), about)


def build_profile(direction: str, source: str, train: Iterable[Record | tuple], dev: Iterable[Record | tuple],
                  about: dict[str, Any] | None = None) -> Profile:
    """The profile of `direction` (its package reading `source`) from the train and dev samples' records."""
    return Profile(direction, aggregate(train, source), aggregate(dev, source), dict(about or {}))


def sample(lines: Sequence[str], n: int, seed: int) -> list[str]:
    """Up to `n` of the non-empty `lines`, drawn without replacement with `seed`, in their order."""
    kept = [line for line in lines if line.strip()]
    if len(kept) <= n:
        return kept
    return [kept[i] for i in sorted(random.Random(seed).sample(range(len(kept)), n))]


def read_profile(path: Path) -> Profile:
    """The profile written to `path` by the profile stage; a `DataError` saying how to make it."""
    path = Path(path)
    try:
        return Profile.from_json(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise DataError(f"{path}: not found; the profile stage writes it (`dvc repro profile`)") from None
    except (OSError, ValueError, KeyError, TypeError, DataError) as exc:
        raise DataError(f"{path}: not a profile of this version ({exc}); run the profile stage again") from None
