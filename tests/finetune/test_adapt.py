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

from support.pairs import FR_CS
from support.scratch import url_env
from support.stages import train_smoke

pytestmark = pytest.mark.slow
STEPS = ("download", "validate", "tokenize", "finetune-parent", "binarize", "finetune", "evaluate", "evaluate-parent",
         "finetune-compare", "export")


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
    (root / "parent").mkdir()
    recipe, model = train_smoke(root / "parent")
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


def test_a_second_run_does_nothing_and_a_changed_gate_reruns_only_what_reads_it(adapted) -> None:
    """The same command again: every step up to date. --max-drop (finetune.max_general_drop, read by the compare
    gate only) changed: the compare gate and the export after it run, the fine-tune is not touched."""
    model, out, _ = adapted
    params = yaml.safe_load((out / "params.yaml").read_text())
    args = ["adapt", "--model", str(model), "--recipe", str(out / params["recipe"]), "--train", str(out.parent /
            "mine.tsv"), "--replay", str(out.parent / "parent" / "data" / "bin"), "--max-steps", "20", "--lr", "0.001",
            "--out", str(out)]
    again = nmt(*args, "--max-drop", "100")
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stderr.count(": up to date") == len(STEPS) and "compare gate: PASSED" in again.stderr
    weights = (out / "models" / "model.pt").read_bytes()
    changed = nmt(*args, "--max-drop", "50")
    assert changed.returncode == 0, changed.stderr[-3000:]
    assert changed.stderr.count(": up to date") == STEPS.index("finetune-compare")
    assert "step 9 of 10, finetune-compare\n" in changed.stderr and "expected >= parent - 50" in changed.stderr
    assert (out / "models" / "model.pt").read_bytes() == weights
    back = nmt(*args, "--max-drop", "100")  # as the fixture left it, for the other tests
    assert back.returncode == 0 and "compare gate: PASSED" in back.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--train", "nowhere.tsv"], "nowhere.tsv: no such file"),
    (["--train", "{mine}", "--general", "newstest2014"],
     "--general: ['newstest2014'] are not test sets of the recipe (it has: ['test_2016_flickr'])"),
    (["--train", "{mine}", "--columns", "fr"], "--columns 'fr': expected two language codes"),
    (["--train", "{mine}", "--columns", "de,en"], "--columns de,en: "),
    (["--train", "{small}"], "lines; nmt adapt needs at least 93 without --dev and --test"),
    (["--train", "{mine}", "--replay", "{small}"], "no manifest.json; pass the model's binarized training data"),
])
def test_a_wrong_input_is_one_line_before_any_stage(adapted, tmp_path: Path, args: list[str], message: str) -> None:
    model, out, _ = adapted
    params = yaml.safe_load((out / "params.yaml").read_text())
    small = tmp_path / "small.tsv"
    small.write_bytes(b"".join(line + b"\n" for line in (out.parent / "mine.tsv").read_bytes().split(b"\n")[:60]))
    args = [a.format(mine=out.parent / "mine.tsv", small=small) for a in args]
    run = nmt("adapt", "--model", str(model), "--recipe", str(out / params["recipe"]), *args, "--out",
              str(tmp_path / "run"))
    assert run.returncode == 1 and message in run.stderr and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert "adapt: step 1" not in run.stderr and run.stderr.rstrip().endswith("before its first step, before the "
                                                                             "compare gate")
