"""`nmt adapt` end to end: a smoke French->English model (trained here by the stages themselves on a tiny
cut of Multi30k's French mirror) adapted to a 500-line TSV of other Multi30k pairs, three of its lines
malformed, with no dev or test file given. One command runs the fine-tune's stages and gates, shows the
fine-tune's progress in updates with the time left, and ends with the comparison page and the compare
gate's verdict; the malformed lines are skipped and counted; a second run does nothing; a wrong input is one
line before any stage runs."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from nmt.data import binarize, download, tokenize, validate, vocab
from nmt.train import stage as train
from support.pairs import FR_CS, smoke, tiny_corpus
from support.scratch import url_env

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
STEPS = ("download", "validate", "tokenize", "finetune-parent", "binarize", "finetune", "evaluate", "evaluate-parent",
         "finetune-compare", "export")


def build_parent(root: Path) -> tuple[Path, Path]:
    """(the recipe, the model file): the smoke fr-en model, trained by the stages on the tiny corpus."""
    params = smoke(yaml.safe_load((ROOT / "params.yaml").read_text()))
    params["data"].update(corpus="tiny", direction="fr-en", corpora={"tiny": tiny_corpus(root / "srv")})
    recipe = root / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True))
    d, r, p = root / "data", root / "reports", ["--params", str(recipe)]
    for module, argv in ((download, ["--out", f"{d}/raw"]),
                         (validate, ["--raw", f"{d}/raw", "--out", f"{d}/validated", "--reports", str(r)]),
                         (tokenize, ["--in", f"{d}/validated", "--out", f"{d}/tokens", "--reports", str(r),
                                     "--cache-dir", f"{root}/cache"]),
                         (vocab, ["--tokens", f"{d}/tokens", "--out", f"{d}/vocab", "--reports", str(r)]),
                         (binarize, ["--tokens", f"{d}/tokens", "--vocab", f"{d}/vocab", "--out", f"{d}/bin",
                                     "--reports", str(r)]),
                         (train, ["--vocab", f"{d}/vocab", "--tokens", f"{d}/tokens", "--bin", f"{d}/bin",
                                  "--checkpoints", f"{root}/models/checkpoints", "--model", f"{root}/models/model.pt",
                                  "--reports", str(r), "--train-reports", f"{r}/train"])):
        assert module.main([*p, *argv]) == 0, module.__name__
    return recipe, root / "models" / "model.pt"


def own_tsv(path: Path) -> Path:
    """500 French-English pairs the parent never saw (Multi30k train), three lines malformed."""
    fr, en = (gzip.decompress((FR_CS / f"train.{lang}.gz").read_bytes()).decode().splitlines()[2000:2500]
              for lang in ("fr", "en"))
    rows = [f"{f}\t{e}".encode() for f, e in zip(fr, en)]
    rows[7] = rows[7].replace(b"\t", b" ")  # one column
    rows[99] = rows[99] + b" \xe9t\xe9"  # Latin-1, not UTF-8
    rows[300] = fr[300].encode()  # the French side only
    path.write_bytes(b"\n".join(rows) + b"\n")
    return path


def nmt(*args: str) -> subprocess.CompletedProcess:
    env = url_env()
    exe = str(Path(shutil.which("nmt", path=env["PATH"])))
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=1200, env=env)


@pytest.fixture(scope="module")
def adapted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    if not (FR_CS / "train.fr.gz").is_file():
        pytest.skip(f"the French-Czech Multi30k mirror is not at {FR_CS}")
    root = tmp_path_factory.mktemp("adapt")
    recipe, model = build_parent(root / "parent")
    out = root / "run"
    run = nmt("adapt", "--model", str(model), "--recipe", str(recipe), "--train", str(own_tsv(root / "mine.tsv")),
              "--replay", str(root / "parent" / "data" / "bin"), "--max-steps", "20", "--lr", "0.001", "--max-drop",
              "100", "--out", str(out))
    return model, out, run


def test_one_command_runs_every_stage_and_ends_with_the_verdict(adapted) -> None:
    model, out, run = adapted
    assert run.returncode == 0, run.stderr[-4000:]
    for i, step in enumerate(STEPS, start=1):
        assert f"adapt: step {i} of {len(STEPS)}, {step}" in run.stderr
    assert "compare gate: PASSED" in run.stderr and f"comparison page: {out}/reports/compare/finetune.md" in run.stderr
    assert "  test_2016_flickr " in run.stderr and "general" in run.stderr  # the table, the general set marked
    page = (out / "reports" / "compare" / "finetune.md").read_text()
    assert "| own_test | no |" in page and "| test_2016_flickr | yes |" in page
    import torch

    state = torch.load(out / "models" / "model.pt", weights_only=True)
    assert state["parent"]["path"] == str(model) and state["final"]["step"] == 20
    assert (out / "models" / "onnx" / "model.json").is_file()


def test_the_fine_tune_shows_updates_and_the_time_left(adapted) -> None:
    _, _, run = adapted
    assert "fine-tune: update 20 of 20 (100%)" in run.stderr and "min left" in run.stderr
    assert "epoch 0" not in run.stderr  # a first epoch cut by max_steps is epoch 1


def test_malformed_lines_are_skipped_and_counted(adapted) -> None:
    _, out, _ = adapted
    report = json.loads((out / "reports" / "data" / "raw.json").read_text())
    dropped = {}
    for label in ("own.train", "own.dev", "own_test"):
        for kind, n in report["stats"]["sources"][label]["dropped"].items():
            dropped[kind] = dropped.get(kind, 0) + n
    assert dropped.get("malformed: fewer than 2 tab-separated columns") == 2
    assert dropped.get("malformed: invalid UTF-8") == 1


def test_a_second_run_does_nothing(adapted) -> None:
    model, out, _ = adapted
    params = yaml.safe_load((out / "params.yaml").read_text())
    again = nmt("adapt", "--model", str(model), "--recipe", str(out / params["recipe"]), "--train",
                str(out.parent / "mine.tsv"), "--replay", str(out.parent / "parent" / "data" / "bin"), "--max-steps",
                "20", "--lr", "0.001", "--max-drop", "100", "--out", str(out))
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stderr.count(": up to date") == len(STEPS) and "compare gate: PASSED" in again.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--train", "nowhere.tsv"], "nowhere.tsv: no such file"),
    (["--train", "{mine}", "--general", "newstest2014"],
     "--general: ['newstest2014'] are not test sets of the recipe (it has: ['test_2016_flickr'])"),
    (["--train", "{mine}", "--columns", "fr"], "--columns 'fr': expected two language codes"),
])
def test_a_wrong_input_is_one_line_before_any_stage(adapted, tmp_path: Path, args: list[str], message: str) -> None:
    model, out, _ = adapted
    params = yaml.safe_load((out / "params.yaml").read_text())
    args = [a.format(mine=out.parent / "mine.tsv") for a in args]
    run = nmt("adapt", "--model", str(model), "--recipe", str(out / params["recipe"]), *args, "--out",
              str(tmp_path / "run"))
    assert run.returncode == 1 and message in run.stderr and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert "adapt: step 1" not in run.stderr
