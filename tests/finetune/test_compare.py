"""The compare stage: the fine-tune beside its parent on every set, its gate on the general sets, and the
page of the sentences that changed most; a failed gate leaves the previous page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nmt.config.data import DataConfig
from nmt.config.finetune import FinetuneConfig
from nmt.config.loader import from_dict
from nmt.errors import GateError
from nmt.finetune.compare import ComparePaths, changed_sentences, compare_stage

SRC = ["Ein Hund läuft.", "Zwei Männer reden.", "Eine Frau liest."]
REF = ["A dog runs.", "Two men talk.", "A woman reads."]


def data() -> DataConfig:
    return from_dict(DataConfig, {"corpus": "c", "direction": "de-en", "corpora": {"c": {
        "languages": ["de", "en"], "files": [{"name": "x", "url": "file:///x", "sha256": "0" * 64}],
        "splits": {"train": {"de": "x", "en": "x"}, "val": {"de": "x", "en": "x"}}}}}, key="data")


def reports(root: Path, scores: dict[str, float], hyps: list[str]) -> Path:
    (root / "translations").mkdir(parents=True)
    metrics = {name: {"sacrebleu": bleu, "chrf": bleu + 10} for name, bleu in scores.items()}
    (root / "metrics.json").write_text(json.dumps(metrics))
    for name in scores:
        (root / "translations" / f"{name}.txt").write_text("".join(h + "\n" for h in hyps))
    return root


@pytest.fixture
def paths(tmp_path: Path) -> ComparePaths:
    validated = tmp_path / "validated"
    validated.mkdir()
    for name in ("news", "own"):
        (validated / f"{name}.de").write_text("".join(s + "\n" for s in SRC))
        (validated / f"{name}.en").write_text("".join(s + "\n" for s in REF))
    (tmp_path / "curves.png").write_bytes(b"\x89PNG")
    reports(tmp_path / "parent", {"news": 20.0, "own": 30.0}, ["A dog walks.", "Two men talk.", "Woman."])
    reports(tmp_path / "child", {"news": 19.5, "own": 40.0}, ["A dog runs.", "Two men talk.", "A man reads."])
    return ComparePaths(tmp_path / "parent", tmp_path / "child", validated, tmp_path / "curves.png",
                        tmp_path / "out", tmp_path / "gates")


def test_within_the_margin_the_page_shows_every_set_and_the_changed_sentences(paths: ComparePaths) -> None:
    gate = compare_stage(FinetuneConfig(general_sets=("news",), max_general_drop=1.0), data(), paths)
    assert gate.success
    result = json.loads((paths.out / "compare.json").read_text())
    assert [(r["set"], r["general"], r["change"]) for r in result["sets"]] == [("news", True, -0.5),
                                                                               ("own", False, 10.0)]
    own = result["changed"]["own"]
    assert own["changed"] == 2 and own["sentences"] == 3
    assert [r["line"] for r in own["improved"]] == [1, 3] and own["worsened"] == []
    page = (paths.out / "finetune.md").read_text()
    assert "| news | yes | 20.00 | 19.50 | -0.50 |" in page and "line 1" in page
    assert (paths.out / "curves.png").read_bytes() == b"\x89PNG"


def test_a_general_set_lost_past_the_margin_fails_and_keeps_the_previous_page(paths: ComparePaths) -> None:
    compare_stage(FinetuneConfig(general_sets=("news",), max_general_drop=1.0), data(), paths)
    before = (paths.out / "compare.json").read_text()
    with pytest.raises(GateError, match=r"news: sacreBLEU kept: 19.50 \(-0.50\) \(expected >= parent - 0.2 "
                                        r"\(19.80\); set by finetune\.max_general_drop\)"):
        compare_stage(FinetuneConfig(general_sets=("news",), max_general_drop=0.2), data(), paths)
    assert (paths.out / "compare.json").read_text() == before


def test_a_general_set_scored_for_one_model_only_fails(paths: ComparePaths) -> None:
    metrics = json.loads((paths.reports / "metrics.json").read_text())
    del metrics["news"]
    (paths.reports / "metrics.json").write_text(json.dumps(metrics))
    with pytest.raises(GateError, match=r"scored for one only: \['news'\]"):
        compare_stage(FinetuneConfig(general_sets=("news",)), data(), paths)
    gate = compare_stage(FinetuneConfig(general_sets=("other-direction",)), data(), paths)  # neither: not this way
    assert gate.stats["general_sets_of_the_other_direction"] == ["other-direction"]


def test_sentences_changed_most_both_ways_ties_by_line() -> None:
    got = changed_sentences(["a", "b", "c"], ["x y z w", "x y z w", "x y z w"], ["x y z w", "q", "x y z w"],
                            ["q", "x y z w", "q"])
    assert [r["line"] for r in got["improved"]] == [2] and [r["line"] for r in got["worsened"]] == [1, 3]
