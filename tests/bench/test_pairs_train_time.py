"""bench/pairs_train_time.py: every direction is timed on the data and parameters its own train stage reads
(dvc.yaml's and pairs/dvc.yaml's commands), on an even sample of an epoch's batches, and its epoch is
estimated from them; a child builds its run as the train stage does."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import yaml

from bench.pairs_train_time import DEFAULT, directions, estimate, even_sample, stage_args, time_direction
from support.train import TINY_MODEL, binarized, copy_corpus, tiny_train
from tools.publish.pairs import DIRECTIONS

ROOT = Path(__file__).resolve().parents[2]


def test_each_direction_reads_what_its_train_stage_reads() -> None:
    found = directions(ROOT)
    assert list(found) == [DEFAULT, *DIRECTIONS]
    assert found[DEFAULT] == {"params": "params.yaml", "vocab": "data/vocab", "tokens": "data/tokens",
                              "bin": "data/bin"}
    assert found["en-fr"] == {"params": "pairs/fr-en.yaml", "vocab": "data/pairs/fr-en/vocab",
                              "tokens": "data/pairs/fr-en/tokens", "bin": "data/pairs/en-fr/bin"}
    assert found["en-de"]["params"] == "pairs/de-en.yaml" and found["en-de"]["bin"] == "data/pairs/en-de/bin"


def test_a_train_command_without_its_data_is_named() -> None:
    with pytest.raises(SystemExit, match="--bin"):
        stage_args("python -m nmt.train.stage --vocab v --tokens t")


@pytest.mark.parametrize("n, fraction", [(543, 0.15), (10, 0.5), (7, 1.0), (3, 0.01)])
def test_the_sample_is_spread_over_the_whole_epoch(n: int, fraction: float) -> None:
    picked = even_sample(n, fraction)
    assert picked[0] == 0 and picked[-1] == n - 1 or len(picked) == 1
    assert len(picked) == max(1, round(n * fraction)) and len(set(picked.tolist())) == len(picked)
    gaps = np.diff(picked)
    assert len(gaps) == 0 or gaps.max() - gaps.min() <= 1


def test_an_epoch_is_its_timed_updates_scaled_plus_its_validation() -> None:
    row = {"update_s": 10.0, "batches": 500, "timed_batches": 50, "val_s": 4.0, "epochs": 20}
    assert estimate(row) == {"epoch_s": 104.0, "training_min": 20 * 104.0 / 60}


def test_a_child_times_updates_and_validation_as_the_train_stage_runs_them(tmp_path: Path) -> None:
    tokens, vocab = copy_corpus(tmp_path, 120, 12, length=(3, 9))
    bins = binarized(tokens, vocab)
    params = tmp_path / "params.yaml"
    train = asdict(tiny_train(max_tokens=64, epochs=7))
    params.write_text(yaml.safe_dump({"model": asdict(TINY_MODEL), "train": train}, sort_keys=False))
    row = time_direction({"params": str(params), "vocab": str(vocab), "tokens": str(tokens), "bin": str(bins)},
                         fraction=0.25, warmup=2)
    assert row["epochs"] == 7 and row["batches"] > 4 and row["updates"] == row["batches"]
    assert row["timed_batches"] == len(even_sample(row["batches"], 0.25))
    assert row["update_s"] > 0 and row["val_s"] > 0 and row["device"] == "cpu"
    assert 120 * 3 <= row["target_tokens"] <= 120 * 11  # every training pair's target ids, once
    assert not list(tmp_path.glob("**/*.pt"))  # nothing checkpointed beside the data
