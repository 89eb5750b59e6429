"""docs/training.md's fine-tune blocks (tools/publish/finetune.py): each fine-tune beside its parent, from
the compare stage's compare.json and the finetune stage's gate, and the replay bench's table; "not run
yet" with the command until they exist; only what finetune/dvc.yaml's publish stage depends on is read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from nmt.config.data import DataConfig
from nmt.config.finetune import FinetuneConfig
from nmt.config.loader import from_dict
from nmt.errors import DataError
from nmt.finetune.compare import ComparePaths, compare_stage
from tools.publish.finetune import FINETUNES, replay, results, schedule
from tools.publish.sources import Sources
from tools.publish.stage import PublishPaths

ROOT = Path(__file__).resolve().parents[1]
NAME = FINETUNES[0]  # multi30k-de-en
SRC, REF = ["Ein Hund läuft.", "Eine Frau liest."], ["A dog runs.", "A woman reads."]


def compared(reports: Path, tmp: Path) -> None:
    """reports/finetune/<NAME>/compare/ written by the compare stage: news a general set, own the domain's."""
    data = from_dict(DataConfig, {"corpus": "c", "direction": "de-en", "corpora": {"c": {
        "languages": ["de", "en"], "files": [{"name": "x", "url": "file:///x", "sha256": "0" * 64}],
        "splits": {"train": {"de": "x", "en": "x"}, "val": {"de": "x", "en": "x"}}}}}, key="data")
    (tmp / "validated").mkdir(parents=True)
    for name in ("newstest2014", "test_2016_flickr"):
        (tmp / "validated" / f"{name}.de").write_text("".join(s + "\n" for s in SRC))
        (tmp / "validated" / f"{name}.en").write_text("".join(s + "\n" for s in REF))
    for who, scores in (("parent", {"newstest2014": 20.0, "test_2016_flickr": 38.7}),
                        ("child", {"newstest2014": 19.6, "test_2016_flickr": 42.4})):
        (tmp / who / "translations").mkdir(parents=True)
        metrics = {k: {"sacrebleu": v, "chrf": v + 20} for k, v in scores.items()}
        (tmp / who / "metrics.json").write_text(json.dumps(metrics))
        for name in scores:
            (tmp / who / "translations" / f"{name}.txt").write_text("".join(r + "\n" for r in REF))
    (tmp / "curves.png").write_bytes(b"\x89PNG")
    out = reports / "finetune" / NAME
    compare_stage(FinetuneConfig(general_sets=("newstest2014",), max_general_drop=1.0), data,
                  ComparePaths(tmp / "parent", tmp / "child", tmp / "validated", tmp / "curves.png", out / "compare",
                               out / "validation"))
    gate = {"stage": "finetune", "success": True, "checks": [], "stats": {
        "stopped": "finetune.max_minutes (20) reached at update 1500", "updates": 1500, "epochs": 3, "train_s": 1201.8}}
    (out / "validation" / "finetune.json").write_text(json.dumps(gate))


def test_before_a_run_the_blocks_name_the_commands(tmp_path: Path) -> None:
    text = results(Sources(tmp_path, tmp_path))
    assert f"| {NAME} | not run yet: `make finetune FINETUNE={NAME}` |" in text
    assert "`python -m bench.finetune_replay --key news-de-en` writes" in replay(Sources(tmp_path, tmp_path))


def test_a_fine_tune_is_shown_beside_its_parent_on_every_set_with_its_time(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    compared(tmp_path / "reports", tmp_path / "work")
    read: list[Path] = []
    original = Sources._read
    monkeypatch.setattr(Sources, "_read", lambda self, path, remedy: read.append(path) or original(self, path, remedy))
    text = results(Sources(tmp_path / "reports", tmp_path / "bench"))
    assert "| multi30k-de-en | `newstest2014` | yes | 20.00 | **19.60** | -0.40 | kept (the compare gate) |" in text
    assert "| multi30k-de-en | `test_2016_flickr` | no | 38.70 | **42.40** | +3.70 | >= 42 |" in text
    assert "| multi30k-de-en | 1,500 | 3 | 20.0 | finetune.max_minutes (20) reached at update 1500 |" in text
    assert "| multi30k-en-de | not run yet: `make finetune FINETUNE=multi30k-en-de` |" in text
    deps = yaml.safe_load((ROOT / "finetune" / "dvc.yaml").read_text())["stages"]["publish"]["deps"]
    rel = [p.relative_to(tmp_path).as_posix() for p in read]
    assert rel and all(any(r == d or r.startswith(d + "/") for d in deps) for r in rel), rel


def test_the_replay_table_has_the_parent_and_each_share(tmp_path: Path) -> None:
    sets = {"newstest2014": {"sacrebleu": 20.0, "chrf": 50.0}, "test_2016_flickr": {"sacrebleu": 38.7, "chrf": 60.0}}
    rows = [{"replay": share, "updates": 1500, "stopped": "max_minutes", "seconds": 1200.0,
             "sets": {"newstest2014": {"sacrebleu": 18.0 + 5 * share, "chrf": 49.0},
                      "test_2016_flickr": {"sacrebleu": 42.5 - share, "chrf": 61.0}}} for share in (0.0, 0.1, 0.3)]
    result = {"bench": "finetune_replay", "date": "2026-11-29T00:00:00+00:00", "repeats": 1,
              "command": "python -m bench.finetune_replay --key multi30k-de-en",
              "machine": {"cpu": {"model": "cpu", "cores": 2, "flags": []}},
              "results": {"key": NAME, "general_sets": ["newstest2014"], "parent": sets, "rows": rows}}
    (tmp_path / "finetune_replay.json").write_text(json.dumps(result))
    text = replay(Sources(tmp_path, tmp_path))
    assert "| model | updates | minutes | `newstest2014` (general) | `test_2016_flickr` |" in text
    assert "| the parent | - | - | 20.00 | 38.70 |" in text
    assert "| replay 0% | 1,500 | 20.0 | 18.00 | 42.50 |" in text
    assert "| replay 30% | 1,500 | 20.0 | 19.50 | 42.20 |" in text
    assert "Source: `bench/results/finetune_replay.json`" in text


def test_the_schedule_table_marks_the_chosen_candidate(tmp_path: Path) -> None:
    assert "`python -m bench.finetune_schedule --key multi30k-de-en" in schedule(Sources(tmp_path, tmp_path))
    rows = [{"changes": {"finetune.lr": 1e-4, "finetune.replay": 0.3}, "updates": 1200, "stopped": "max_steps",
             "minutes": 7.5, "scores": {"val": 42.1, "newstest2013": 17.0}},
            {"changes": {"finetune.lr": 5e-5, "train.device": "cpu"}, "updates": 1800, "stopped": "max_steps",
             "minutes": 11.0, "scores": {"val": 41.8, "newstest2013": 18.4}}]
    result = {"bench": "finetune_schedule", "date": "2026-11-29T00:00:00+00:00", "repeats": 1,
              "command": "python -m bench.finetune_schedule --key multi30k-de-en",
              "machine": {"cpu": {"model": "cpu", "cores": 2, "flags": []}},
              "results": {"key": NAME, "decoding": {"beam_size": 1, "alpha": 1.4}, "max_general_drop": 1.0,
                          "dev": {"val": {"sentences": 1014}, "newstest2013": {"sentences": 3000}},
                          "parent": {"val": 39.0, "newstest2013": 18.9}, "rows": rows, "chosen": 1}}
    (tmp_path / "finetune_schedule.json").write_text(json.dumps(result))
    text = schedule(Sources(tmp_path, tmp_path))
    assert "| the parent | - | - | - | 39.00 | 18.90 |" in text
    assert "| `finetune.lr=0.0001`, `finetune.replay=0.3` | 1,200 | 7.5 | max_steps | 42.10 | 17.00 |" in text
    assert ("| `finetune.lr=5e-05`, `train.device=cpu` (chosen) | 1,800 | 11.0 | max_steps | **41.80** | **18.40** |"
            in text)
    assert "dev sets only (`val` (1,014 sentences), `newstest2013` (3,000 sentences); sacreBLEU, greedy)" in text
    assert "Source: `bench/results/finetune_schedule.json`" in text


def test_one_set_of_blocks_per_run() -> None:
    paths = PublishPaths(Path("README.md"), Path("docs"), Path("reports"), Path("bench"), Path("out.json"),
                         pairs=True, finetune=True)
    with pytest.raises(DataError, match="--pairs and --finetune: pass one"):
        _ = paths.which
    assert PublishPaths(Path("R"), Path("d"), Path("r"), Path("b"), Path("o"), finetune=True).which == "finetune"


def test_the_blocks_list_every_fine_tune_of_the_graph() -> None:
    """A fine-tune added to finetune/dvc.yaml gets its rows (a missing one would vanish from the page)."""
    stages = yaml.safe_load((ROOT / "finetune" / "dvc.yaml").read_text())["stages"]
    each = {tuple(stages[name]["foreach"]) for name in ("parent", "binarize", "finetune", "compare")}
    assert each == {FINETUNES}


def test_a_run_its_compare_gate_failed_is_shown_failed_with_its_scores(tmp_path: Path) -> None:
    """The compare gate keeps its previous outputs when it fails (no compare.json then): the block reads the
    gate's report, so the failed run's scores and the failing check are on the page, not 'not run yet'."""
    folder = tmp_path / "finetune" / NAME / "validation"
    folder.mkdir(parents=True)
    row = {"set": "newstest2014", "general": True, "parent_sacrebleu": 15.27, "parent_chrf": 42.0,
           "finetuned_sacrebleu": 11.67, "finetuned_chrf": 36.4, "change": -3.6}
    check = {"name": "newstest2014: sacreBLEU kept", "success": False, "expected": ">= parent - 1 (14.27)",
             "observed": "11.67 (-3.60)"}
    (folder / "finetune-compare.json").write_text(json.dumps(
        {"stage": "finetune-compare", "success": False, "checks": [check], "stats": {"sets": [row]}}))
    (folder / "finetune.json").write_text(json.dumps(
        {"stage": "finetune", "success": True, "checks": [],
         "stats": {"updates": 2415, "epochs": 4, "train_s": 760.0, "stopped": "early stopping"}}))
    text = results(Sources(tmp_path, tmp_path))
    assert f"| {NAME} | `newstest2014` | yes | 15.27 | **11.67** | -3.60 |" in text
    assert f"- `{NAME}`: **FAILED**, newstest2014: sacreBLEU kept: 11.67 (-3.60) (expected >= parent - 1" in text
