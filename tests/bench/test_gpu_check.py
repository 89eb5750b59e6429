"""`make gpu-check` on the CPU: the bundle built here from the data stages' outputs, then the
device half in its smoke mode (tiny model, a few updates) in a process where DVCLive, spaCy,
DVC and Prefect cannot be imported, as on the GPU image; then its figures collected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nmt.text.tokenizer import read_tokenized, restore_text
from support.train import binarized, copy_corpus

ROOT = Path(__file__).resolve().parents[2]
ABSENT = ("dvclive", "spacy", "dvc", "prefect", "great_expectations")  # not on the GPU image


def tiny_data(root: Path) -> Path:
    """data/ as the pipeline leaves it after `dvc repro binarize`, with `val` as the scored set."""
    tokens, vocab = copy_corpus(root / "tokens-src", n_train=120, n_val=16)
    (root / "tokens").mkdir(parents=True)
    for path in tokens.iterdir():
        (root / "tokens" / path.name).write_bytes(path.read_bytes())
    (root / "vocab").mkdir()
    for path in vocab.iterdir():
        (root / "vocab" / path.name).write_bytes(path.read_bytes())
    binarized(root / "tokens", root / "vocab", root / "bin")
    (root / "validated").mkdir()
    for lang in ("de", "en"):
        lines = [restore_text(t, f) for t, f in read_tokenized(root / "tokens" / f"val.{lang}.tsv")]
        (root / "validated" / f"val.{lang}").write_text("".join(line + "\n" for line in lines))
    return root


def run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, env=env)


@pytest.mark.slow
def test_the_bundle_runs_the_device_half_without_the_pipeline_packages(tmp_path: Path) -> None:
    data = tiny_data(tmp_path / "data")
    bundle = tmp_path / "bundle"
    built = run(["tools.gpu.check", "bundle", "--data", str(data), "--out", str(bundle), "--test-set", "val"])
    assert built.returncode == 0, built.stderr
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["test_set"] == "val" and "multi30k/bin/detokenizer.json" in manifest["sizes"]
    assert "multi30k/tokens/val.de.tsv" in manifest["sizes"] and "multi30k/params.yaml" in manifest["sizes"]

    blocked = tmp_path / "blocked"
    blocked.mkdir()
    for name in ABSENT:
        (blocked / f"{name}.py").write_text(f"raise ImportError('{name} is not on the GPU image')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocked), str(ROOT)])}
    out, work = tmp_path / "out", tmp_path / "work"
    device = run(["tools.gpu.device", "--part", "ab", "--smoke", "--bundle", str(bundle), "--out", str(out),
                  "--work", str(work)], env=env)
    assert device.returncode == 0, device.stdout[-3000:] + device.stderr[-3000:]
    assert "DVCLive is not installed" in (out / "gpu-base.train.log").read_text()  # the stage's log, as it ran

    tests = json.loads((out / "gpu_tests.json").read_text())["cuda_tests"]
    assert tests["tests"] == 7 and tests["failed"] == []  # skipped without CUDA, run on a GPU
    mfu = json.loads((out / "gpu_mfu.json").read_text())["results"]
    assert mfu["smoke"] and mfu["variants"][0]["tokens_per_s"] > 0
    assert mfu["sweep"][0]["target_tokens"] == 512 and mfu["profile_top"][0]["self_ms"] > 0
    epochs = json.loads((out / "gpu_epochs.json").read_text())
    assert set(epochs["runs"]) == {"default", "cuda_graphs", "cudnn_attention", "selected_positions"}
    graphs = epochs["runs"]["cuda_graphs"]  # compiled on the GPU only (compiling on a CPU takes minutes)
    assert (graphs["compile_mode"], graphs["pad_multiple"], graphs["loss_positions"]) == ("reduce-overhead", 8, "all")
    assert epochs["runs"]["cudnn_attention"]["cudnn_attention"] and not epochs["runs"]["default"]["cudnn_attention"]
    assert epochs["runs"]["selected_positions"]["loss_positions"] == "real"
    for run_ in epochs["runs"].values():
        (first,) = run_["epochs"]
        assert first["epoch_s"] > 0 and first["val_s"] > 0 and first["step"] > 0 and run_["epoch1_over_later"] is None
    assert epochs["profile"]["updates"] == 3 and epochs["profile"]["top"][0]["self_ms"] > 0
    preset = json.loads((out / "gpu_presets.json").read_text())["presets"]["gpu-base"]
    assert preset["exit"] == 0 and preset["train"]["updates"] == 4
    assert preset["sentences"] == 16 and preset["sacrebleu_signature"].startswith("nrefs:1")
    assert len((out / preset["translations"]).read_text().splitlines()) == 16
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == sorted(
        ["cuda_tests.xml", "gpu_tests.json", "gpu_mfu.json", "gpu_epochs.json", "gpu_presets.json",
         "gpu-base.train.log", preset["translations"]])  # all come back: at most 8 files, none in folders
    assert not list(out.rglob("*.pt"))

    results = tmp_path / "results"
    collected = run(["tools.gpu.check", "collect", "--from", str(out), "--results", str(results)])
    assert collected.returncode == 0, collected.stderr
    assert sorted(p.name for p in results.iterdir()) == sorted(
        ["gpu_tests.json", "gpu_mfu.json", "gpu_epochs.json", "gpu_presets.json",
         f"gpu_translations.{preset['translations']}"])


@pytest.mark.slow
def test_skip_leaves_out_the_steps_already_measured(tmp_path: Path) -> None:
    """`--skip` (a lease is too short for part a whole): only what is still to measure runs and is written."""
    bundle = tmp_path / "bundle"
    built = run(["tools.gpu.check", "bundle", "--data", str(tiny_data(tmp_path / "data")), "--out", str(bundle),
                 "--test-set", "val"])
    assert built.returncode == 0, built.stderr
    out = tmp_path / "out"
    device = run(["tools.gpu.device", "--part", "a", "--smoke", "--bundle", str(bundle), "--out", str(out),
                  "--work", str(tmp_path / "work"), "--skip", "tests", "mfu", "default", "profile", "cudnn_attention"])
    assert device.returncode == 0, device.stdout[-3000:] + device.stderr[-3000:]
    assert sorted(p.name for p in out.iterdir()) == ["gpu_epochs.json"]
    epochs = json.loads((out / "gpu_epochs.json").read_text())
    assert set(epochs["runs"]) == {"selected_positions", "cuda_graphs"} and "profile" not in epochs
    wrong = run(["tools.gpu.device", "--part", "a", "--smoke", "--bundle", str(bundle), "--out", str(out),
                 "--skip", "cuda-graphs"])
    assert wrong.returncode == 2 and "invalid choice: 'cuda-graphs'" in wrong.stderr


def test_the_makefile_names_every_run_of_part_a() -> None:
    from tools.gpu.device import EPOCH_RUNS

    line = next(s for s in (ROOT / "Makefile").read_text().splitlines() if s.startswith("GPU_RUNS :="))
    assert tuple(line.split(":=")[1].split()) == EPOCH_RUNS


@pytest.mark.slow
def test_part_c_trains_the_general_preset_scores_every_test_set_and_translates_the_blind_sets(tmp_path: Path) -> None:
    """The general configuration on the device: its binarised direction, test sets and blind sources
    (tokenized here: no spaCy there) in the bundle; trained, scored and translated in one part; the blind
    translations collected into reports/blind/gpu/, one line out per line in."""
    data = tiny_data(tmp_path / "data")
    general = tmp_path / "general"
    (general / "de-en").mkdir(parents=True)
    for name in ("vocab", "tokens", "validated"):
        (data / name).rename(general / name)
    (data / "bin").rename(general / "de-en" / "bin")
    reports = tmp_path / "reports"
    (reports / "de-en").mkdir(parents=True)
    (reports / "de-en" / "metrics.json").write_text(json.dumps({"val": {"sacrebleu": 1.0}}))
    blind = tmp_path / "blind"
    blind.mkdir()
    (blind / "de-en.1.de").write_text("Ein Hund läuft.\nZwei Männer sitzen auf einer Bank.\nEin Kind spielt.\n")
    (blind / "en-de.1.en").write_text("A dog runs.\n")  # the other direction's: not carried
    built = run(["tools.gpu.check", "bundle", "--data", str(tiny_data(tmp_path / "m30k")), "--out",
                 str(tmp_path / "bundle"), "--test-set", "val", "--general", "de-en", "--general-data", str(general),
                 "--general-reports", str(reports), "--blind", str(blind)])
    assert built.returncode == 0, built.stderr
    manifest = json.loads((tmp_path / "bundle" / "manifest.json").read_text())
    assert manifest["corpora"]["general-de-en"] == {"direction": "de-en", "test_sets": ["val"],
                                                    "blind": ["blind-de-en.1"]}
    assert "general-de-en/tokens/blind-de-en.1.de.tsv" in manifest["sizes"]

    blocked = tmp_path / "blocked"
    blocked.mkdir()
    for name in ABSENT:
        (blocked / f"{name}.py").write_text(f"raise ImportError('{name} is not on the GPU image')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocked), str(ROOT)])}
    out = tmp_path / "out"
    device = run(["tools.gpu.device", "--part", "c", "--smoke", "--bundle", str(tmp_path / "bundle"), "--out",
                  str(out), "--work", str(tmp_path / "work")], env=env)
    assert device.returncode == 0, device.stdout[-3000:] + device.stderr[-3000:]
    entry = json.loads((out / "gpu_general.json").read_text())["presets"]["gpu-general-base"]
    assert entry["exit"] == 0 and entry["scores"]["val"]["sentences"] == 16 and "sacrebleu" in entry["scores"]["val"]
    assert entry["blind"]["blind-de-en.1"]["sentences"] == 3 and "sacrebleu" not in entry["blind"]["blind-de-en.1"]
    assert len([p for p in out.iterdir()]) <= 8

    results, blind_out = tmp_path / "results", tmp_path / "reports-blind-gpu"
    collected = run(["tools.gpu.check", "collect", "--from", str(out), "--results", str(results),
                     "--blind-out", str(blind_out)])
    assert collected.returncode == 0, collected.stderr
    assert (results / "gpu_general.json").is_file() and not (results / "gpu_general_translations.json").exists()
    assert len((blind_out / "de-en.1.en").read_text().splitlines()) == 3
    from tools.publish.gpu import general_rows

    (row,) = general_rows(json.loads((results / "gpu_general.json").read_text()))
    assert row[0].startswith("`gpu-general-base` on general-de-en: ") and "4 updates" in row[0]
    assert "sacreBLEU val " in row[1] and "1 blind sets translated" in row[1]


def test_a_bundle_without_the_data_stages_says_which_command_makes_them(tmp_path: Path) -> None:
    built = run(["tools.gpu.check", "bundle", "--data", str(tmp_path / "nothing"), "--out", str(tmp_path / "b")])
    assert built.returncode == 1 and "dvc repro binarize" in built.stderr and "Traceback" not in built.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("preset", sorted(p.stem for p in (ROOT / "presets").glob("*.yaml")))
def test_every_preset_over_params_yaml_is_a_valid_train_stage_config(preset: str, tmp_path: Path) -> None:
    import yaml

    from nmt.config.loader import load_sections
    from nmt.train.stage import TrainParams
    from tools.gpu.device import merged

    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    over = yaml.safe_load((ROOT / "presets" / f"{preset}.yaml").read_text())
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(merged(params, over)))
    loaded = load_sections(tmp_path / "params.yaml", TrainParams)
    for section, values in over.items():
        for key, value in values.items():
            assert getattr(getattr(loaded, section), key) == value, (section, key)
