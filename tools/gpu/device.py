"""The device half of `make gpu-check`: what runs on a lent GPU, from the bundle that
`python -m tools.gpu.check bundle` built here, writing every figure under `--out` ($OUT).

Two parts, each under six minutes on one H100/H200, so both fit one lease on one warm machine:

  a  the CUDA tests (tests/train/test_cuda.py), tools/gpu/mfu.py (base model MFU, eager and
     compiled), and the default configuration's first two epochs, each run in a fresh process:
     seconds per epoch and per validation (`epoch_s`, `val_s`), torch.profiler over the first updates
     and the first validation (the top operators by device time), the same two epochs with cuDNN's
     fused attention allowed, two under CUDA graphs (`train.compile_mode: reduce-overhead`, lengths
     padded to 8, every position), one epoch with the real target positions selected
     (`train.loss_positions: real`); the MFU with output layer and loss in chunks too
                                                   -> cuda_tests.xml, gpu_mfu.json, gpu_epochs.json
  b  the GPU presets (presets/*.yaml): each trained by the train stage as it is
     (`python -m nmt.train.stage`), then scored on the device (sacreBLEU with its signature and
     chrF on the bundle's test set, from its spaCy tokens: the image has no spaCy)
                                                                   -> gpu_presets.json, <preset>.<set>.<lang>
  c  the general presets (presets/gpu-general-*.yaml) on each general corpus the bundle carries
     (`tools.gpu.check bundle --general DIRECTION`): trained as in b, scored on every test set of the
     direction, the blind sources translated          -> gpu_general.json, gpu_general_translations.json

Only torch, numpy, PyYAML, tqdm, matplotlib and sacrebleu are needed (the GPU image's); DVCLive,
spaCy, DVC and Prefect are not. `--smoke` runs the same steps on any device with a tiny model and a
few updates (the test suite runs it on the CPU).

    python -m tools.gpu.device --part a|b|ab|c --bundle .gpu --out "$OUT" [--skip STEP ...] [--smoke]

`--skip` leaves out steps already measured (tests, mfu, or a run of part a by name), so that one lease
can go to what is still unmeasured: part a whole needs more than its 300 s (the CUDA tests alone 71 s).
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import yaml

from tools.gpu.runs import fresh_process, log_here, profile, timed_epochs

ROOT = Path(__file__).resolve().parents[2]
PRESETS = ROOT / "presets"
TINY = {"model": {"n_layers": 1, "d_model": 32, "n_heads": 2, "d_ff": 64},
        "train": {"max_tokens": 256, "warmup": 10, "val_bleu_sentences": 8, "num_threads": 1, "max_val_loss": 50.0}}

log = logging.getLogger("gpu_device")


def merged(base: dict[str, Any], *overrides: dict[str, Any]) -> dict[str, Any]:
    """`base` with each override's sections updated key by key (a preset names only what it changes)."""
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
    for over in overrides:
        for section, values in over.items():
            out[section] = {**out.get(section, {}), **values}
    return out


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    log.info("wrote %s", path)


def device_name() -> str:
    return torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"


def cuda_tests(out: Path) -> dict[str, Any]:
    """tests/train/test_cuda.py under pytest; the counts from its JUnit XML."""
    xml = out / "cuda_tests.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "cuda", "tests/train/test_cuda.py",
                           f"--junitxml={xml}", "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True)
    print(proc.stdout[-3000:], proc.stderr[-2000:], sep="\n", flush=True)
    suite = ET.parse(xml).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    counts = {k: int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}
    counts["passed"] = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    counts["failed"] = [c.get("name") for c in suite.iter("testcase")
                        if c.find("failure") is not None or c.find("error") is not None]
    return counts


def mfu(out: Path, smoke: bool) -> None:
    from tools.gpu import mfu as gpu_mfu

    gpu_mfu.main(["--out", str(out), "--largest-limit", "0"] + (["--smoke"] if smoke else []))  # round 1: 400k fit


def _configs(params: dict[str, Any]):
    from nmt.config.loader import from_dict
    from nmt.config.model import ModelConfig
    from nmt.config.train import TrainConfig

    return from_dict(ModelConfig, params["model"], key="model"), from_dict(TrainConfig, params["train"], key="train")


EPOCH_RUNS = ("default", "profile", "cudnn_attention", "selected_positions", "cuda_graphs")


def epochs(bundle: Path, work: Path, smoke: bool, save: Callable[[dict[str, Any]], None],
           skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The default configuration (the bundle's params.yaml with this tree's defaults): its first epochs
    timed, each run in a fresh process (epoch 1's extra time on the H200 was once per process): the
    default (cuDNN's fused attention off), its first updates profiled, the same with cuDNN's attention
    allowed (train.cudnn_attention: true, torch's own pick), and one epoch with the real target positions
    selected (train.loss_positions: real, the CPU's path), and two epochs under CUDA graphs (compiled
    with mode reduce-overhead, lengths padded to 8, every position; not compiled in --smoke). `save` is
    called with the figures so far after each run: a call cut short at its limit still brings back what was
    measured."""
    from dataclasses import replace

    data = bundle / "multi30k"
    params = yaml.safe_load((data / "params.yaml").read_text(encoding="utf-8"))
    model_cfg, cfg = _configs(merged(params, TINY) if smoke else params)
    n_epochs = 1 if smoke else 2
    run_cfg = replace(cfg, epochs=n_epochs, patience=n_epochs, max_steps=None, device="auto")
    result: dict[str, Any] = {"device": device_name(), "torch": torch.__version__, "runs": {}}
    # CUDA graphs: torch.compile's reduce-overhead mode, lengths padded to 8 and every target position
    # through the output layer (few shapes, none chosen by the data), replayed instead of launched kernel by kernel
    graphs = replace(run_cfg, compile=not smoke, compile_mode="reduce-overhead", pad_multiple=8,
                     loss_positions="all")
    steps = (("default", timed_epochs, run_cfg),
             ("profile", profile, replace(run_cfg, max_steps=3 if smoke else 40, epochs=1)),
             ("cudnn_attention", timed_epochs, replace(run_cfg, cudnn_attention=True)),
             ("selected_positions", timed_epochs, replace(run_cfg, loss_positions="real", epochs=1, patience=1)),
             ("cuda_graphs", timed_epochs, graphs))  # last: its compilation may take what is left of the call
    for name, fn, c in steps:
        if name in skip:
            continue
        figures = fresh_process(fn, model_cfg, c, data, work / f"ckpt-{name}")
        if name == "profile":
            result["profile"] = figures
        else:
            result["runs"][name] = figures
        save(result)
    return result


def pretokenized(tokens_file: Path, raw_file: Path):
    """lines -> (tokens, flags) from the tokenize stage's output for these lines (spaCy's, made here)."""
    from nmt.files.lines import read_lines
    from nmt.text.tokenizer import normalize, read_tokenized

    table = dict(zip((normalize(line) for line in read_lines(raw_file)), read_tokenized(tokens_file)))
    return lambda lines: (table[normalize(line)] for line in lines)


def presets(bundle: Path, out: Path, work: Path, smoke: bool, names: list[str],
            save: Callable[[dict[str, Any]], None], corpus: str = "multi30k") -> dict[str, Any]:
    """Each preset trained by the train stage as it is on the bundle's `corpus`, then scored on each of its
    test sets and its blind sources translated; `save` is called with the figures so far after each
    training and each score. Multi30k's one test set is written to a file of its own (part b); a general
    corpus's translations go into one JSON (part c: the device brings back at most 8 files)."""
    data = bundle / corpus
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    mine = manifest.get("corpora", {}).get(corpus, {"test_sets": [manifest["test_set"]]})
    params = yaml.safe_load((data / "params.yaml").read_text(encoding="utf-8"))
    results: dict[str, Any] = {"device": device_name(), "torch": torch.__version__, "corpus": corpus, "presets": {}}
    for name in names:
        preset = yaml.safe_load((PRESETS / f"{name}.yaml").read_text(encoding="utf-8"))
        extra = [TINY, {"train": {"epochs": 1, "max_steps": 4, "average_last": 1}}] if smoke else []
        run_params = merged(params, preset, *extra, {"train": {"device": "auto"}})
        run_dir = work / f"run-{name}"
        shutil.rmtree(run_dir, ignore_errors=True)  # no resuming a previous call's checkpoints
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "params.yaml").write_text(yaml.safe_dump(run_params, sort_keys=False), encoding="utf-8")
        model = run_dir / "model.pt"
        started = time.perf_counter()
        stage_log = out / f"{name}.train.log"  # the stage's own log, as it runs (back even if the call is cut)
        with stage_log.open("w", encoding="utf-8") as err:
            proc = subprocess.run([sys.executable, "-m", "nmt.train.stage", "--params", str(run_dir / "params.yaml"),
                                   "--vocab", str(data / "vocab"), "--tokens", str(data / "tokens"),
                                   "--bin", str(data / "bin"), "--checkpoints", str(run_dir / "checkpoints"),
                                   "--model", str(model), "--reports", str(run_dir / "reports"),
                                   "--train-reports", str(run_dir / "train")], cwd=ROOT, stdout=err, stderr=err)
        seconds = time.perf_counter() - started
        tail = stage_log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        print("\n".join(tail[-15:]), flush=True)
        entry: dict[str, Any] = {"train_s": seconds, "exit": proc.returncode, "params": preset}
        results["presets"][name] = entry
        if proc.returncode != 0:
            entry["error"] = tail[-1:] or ["(no output)"]
            save(results)
            continue
        entry["train"] = json.loads((run_dir / "reports" / "train.json").read_text(encoding="utf-8")).get("stats")
        save(results)
        if corpus == "multi30k":
            figures, hyps = score(model, data, params["evaluate"], mine["test_sets"][0], smoke)
            written = out / f"{name}.{figures['test_set']}.{figures['lang']}"
            written.write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
            entry.update(figures, translations=written.name)
        else:
            translations: dict[str, list[str]] = {}
            for test_set in [*mine["test_sets"], *mine.get("blind", [])]:
                figures, translations[test_set] = score(model, data, params["evaluate"], test_set, smoke)
                entry.setdefault("scores" if "sacrebleu" in figures else "blind", {})[test_set] = figures
                write_json(out / "gpu_general_translations.json", {"preset": name, "translations": translations})
                save(results)
        save(results)
    return results


def score(model: Path, data: Path, evaluate: dict[str, Any], test_set: str, smoke: bool) -> tuple[dict, list[str]]:
    """Translate a split with the evaluate stage's decoding; score it (sacreBLEU, chrF) where it has a
    reference (a blind split has none). Returns the figures and the translations."""
    from sacrebleu.metrics import BLEU, CHRF

    from nmt.config.evaluate import Decoding
    from nmt.decode.translator import Translator
    from nmt.files.lines import read_lines, split_file
    from nmt.text.tokenizer import SUFFIX

    state = torch.load(model, map_location="cpu", weights_only=True)
    src, tgt = state["text"]["src_lang"], state["text"]["tgt_lang"]
    sources = read_lines(split_file(data / "validated", test_set, src))
    ref_file = split_file(data / "validated", test_set, tgt)
    references = read_lines(ref_file) if ref_file.is_file() else None
    if smoke:
        sources, references = sources[:16], None if references is None else references[:16]
    decoding = Decoding(beam_size=1 if smoke else evaluate["beam_size"], alpha=evaluate["alpha"],
                        max_extra=evaluate["max_extra"])
    tokenize = pretokenized(split_file(data / "tokens", test_set, src, SUFFIX),
                            split_file(data / "validated", test_set, src))
    translator = Translator.from_file(model, decoding, evaluate["batch_size"], device="auto", tokenize=tokenize)
    started = time.perf_counter()
    searched = translator.search(sources)
    hyps = [translator.detokenizer(translator.vocabs.output_tokens(r[1])) if r else "" for r in searched]
    figures: dict[str, Any] = {"test_set": test_set, "lang": tgt, "sentences": len(hyps),
                               "decoding": {"beam_size": decoding.beam_size, "alpha": decoding.alpha},
                               "decode_s": time.perf_counter() - started}
    if references is not None:
        bleu, chrf = BLEU(), CHRF()
        b, c = bleu.corpus_score(hyps, [references]), chrf.corpus_score(hyps, [references])
        figures.update(sacrebleu=round(b.score, 2), sacrebleu_signature=str(bleu.get_signature()),
                       chrf=round(c.score, 2))
    return figures, hyps


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--part", choices=("a", "b", "ab", "c"), default="ab",
                   help="a: tests, MFU, epochs; b: presets; c: the general presets on the bundle's general corpora")
    p.add_argument("--bundle", type=Path, default=ROOT / ".gpu", help="the bundle folder (default .gpu)")
    p.add_argument("--out", type=Path, required=True, help="where the figures go ($OUT on the device)")
    p.add_argument("--work", type=Path, default=Path("/tmp/gpu-check"),
                   help="checkpoints and models (not brought back)")
    p.add_argument("--presets", nargs="*", default=["gpu-base"], help="presets/<name>.yaml to train in part b")
    p.add_argument("--general-presets", nargs="*", default=["gpu-general-base"],
                   help="presets/<name>.yaml to train in part c, on each general corpus of the bundle")
    p.add_argument("--skip", nargs="*", default=[], choices=("tests", "mfu", *EPOCH_RUNS), metavar="STEP",
                   help=f"steps of part a not to run: tests, mfu, or runs of {', '.join(EPOCH_RUNS)}")
    p.add_argument("--smoke", action="store_true", help="tiny model, a few updates, any device")
    args = p.parse_args(argv)
    log_here()
    if not args.smoke and not torch.cuda.is_available():
        raise SystemExit("gpu_device: no CUDA device here; run it on a lent GPU, or with --smoke")
    if not (args.bundle / "manifest.json").is_file():
        raise SystemExit(f"gpu_device: no bundle at {args.bundle}: build it here first with `make gpu-check`")
    args.out.mkdir(parents=True, exist_ok=True)
    if "a" in args.part:
        if "tests" not in args.skip:
            write_json(args.out / "gpu_tests.json", {"device": device_name(), "torch": torch.__version__,
                                                     "cuda_tests": cuda_tests(args.out)})
        if "mfu" not in args.skip:
            mfu(args.out, args.smoke)
        epochs(args.bundle, args.work, args.smoke, lambda r: write_json(args.out / "gpu_epochs.json", r),
               frozenset(args.skip))
    if "b" in args.part:
        presets(args.bundle, args.out, args.work, args.smoke, args.presets,
                lambda r: write_json(args.out / "gpu_presets.json", r))
    if args.part == "c":
        manifest = json.loads((args.bundle / "manifest.json").read_text(encoding="utf-8"))
        general = [c for c in manifest.get("corpora", {}) if c.startswith("general-")]
        if not general:
            raise SystemExit("gpu_device: the bundle has no general corpus: build it with "
                             "`python -m tools.gpu.check bundle --general de-en`")
        for corpus in general:  # one direction a call fits: bundle one at a time
            presets(args.bundle, args.out, args.work, args.smoke, args.general_presets,
                    lambda r: write_json(args.out / "gpu_general.json", r), corpus=corpus)
    return 0


if __name__ == "__main__":
    sys.exit(main())
