"""`nmt check-params`: a params file checked whole, and the rules across sections, before any stage runs
(issue 78: a typo in train found 40 minutes in)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from nmt.cli import main
from nmt.config.check import check
from nmt.errors import ConfigError
from support.corpus import ROOT

FILES = [ROOT / "params.yaml", ROOT / "general" / "params.yaml",
         *sorted(p for p in (ROOT / "pairs").glob("*.yaml") if p.name != "dvc.yaml"),
         *sorted(p for p in (ROOT / "finetune").glob("*.yaml") if p.name != "dvc.yaml"),
         ROOT / "examples" / "first-try" / "pair.yaml"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_committed_params_file_passes(path: Path) -> None:
    check(path)


def _edited(tmp_path: Path, edit) -> Path:
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    edit(data)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["train"].update(max_step=d["train"].pop("max_steps")),
     r"params\.yaml: train\.max_step: unknown key \(did you mean max_steps\?"),
    (lambda d: d["evaluate"].update(test_sets=["test_2016_flickr", "newstest2014"]),
     r"evaluate\.test_sets: \['newstest2014'\] are not test splits of data\.corpus 'multi30k'"),
    (lambda d: d["export"].update(parity_split="dev"), r"export\.parity_split: 'dev' is not a split"),
    (lambda d: (d["model"].update(tie_source=True), d["vocab"].update(joint=False)),
     r"model\.tie_source: .* set vocab\.joint: true"),
    (lambda d: d["train"].update(max_len=d["model"]["max_len"] + 1), r"train\.max_len: \d+ is longer"),
])
def test_a_mistake_in_any_section_is_named_before_a_run(tmp_path: Path, edit, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check(_edited(tmp_path, edit))


def test_a_fine_tunes_general_sets_are_among_its_test_sets(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "general", tmp_path / "general")
    (tmp_path / "finetune").mkdir()
    text = (ROOT / "finetune" / "multi30k.yaml").read_text().replace(
        "general_sets: [newstest2014, newstest2019-ende]", "general_sets: [newstest2014, newstest2020-ende]")
    (tmp_path / "finetune" / "multi30k.yaml").write_text(text)
    with pytest.raises(ConfigError, match=r"finetune\.general_sets: \['newstest2020-ende'\] are not in"):
        check(tmp_path / "finetune" / "multi30k.yaml")


def test_the_command_checks_each_file_and_fails_if_one_fails(tmp_path: Path, caplog) -> None:
    bad = _edited(tmp_path, lambda d: d["vocab"].update(min_freq="two"))
    assert main(["check-params", str(ROOT / "params.yaml")]) == 0
    assert main(["check-params", str(ROOT / "params.yaml"), str(bad)]) == 1
    assert f"{bad}: vocab.min_freq: expected int, got str ('two')" in caplog.text


def test_make_checks_the_params_before_dvc_runs() -> None:
    for target, files in (("repro", "params.yaml"), ("repro-general", "general/params.yaml"),
                          ("repro-pairs PAIR=fr-en", "pairs/fr-en.yaml"),
                          ("finetune", "finetune/multi30k.yaml finetune/news.yaml")):
        out = subprocess.run(["make", "-n", *target.split()], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.splitlines()
        check_line = next(i for i, line in enumerate(out) if "nmt check-params" in line)
        assert out[check_line].endswith(f"check-params {files}")
        assert check_line < next(i for i, line in enumerate(out) if "dvc repro" in line)


def test_the_first_try_is_the_pair_with_the_recipe_cut_short() -> None:
    """examples/first-try/pair.yaml (docs/pairs.md: A first try) is pairs/fr-en.yaml with a short run: it
    states only the train and evaluate keys that cut it (the blocks a new pair's file copies)."""
    first = yaml.safe_load((ROOT / "examples" / "first-try" / "pair.yaml").read_text())
    assert first["recipe"] == "../../pairs/fr-en.yaml" and set(first) == {"recipe", "train", "evaluate"}
    params, _ = check(ROOT / "examples" / "first-try" / "pair.yaml")
    assert params.data == check(ROOT / "pairs" / "fr-en.yaml")[0].data
    assert params.train.max_steps == 2500 and params.model == check(ROOT / "params.yaml")[0].model
