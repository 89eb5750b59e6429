"""The GPU path as last measured on a lent GPU (`make gpu-check`, tools/gpu/device.py): docs/training.md's
`gpu-check` block, from `bench/results/gpu_*.json` (copied there by `python -m tools.gpu.check collect`).

One row per figure the GPU path has a target for: the CUDA tests, the base model's MFU (eager and
compiled), the default configuration's first epoch against its second, and each GPU preset's
training time and test score; then the default configuration's top operators by device time.
"""

from __future__ import annotations

from typing import Any

from tools.publish.sources import Sources, not_yet, pct, table

COMMAND = "make gpu-check"  # then the two device calls it prints, then `python -m tools.gpu.check collect`


def _mfu_rows(m: dict[str, Any]) -> list[list[str]]:
    r = m["results"]
    rows = []
    for v in r["variants"]:
        kind = ("compiled" if v["compile"] else "eager") + (f", loss in chunks of {v['loss_chunk']:,}"
                                                            if v.get("loss_chunk") else "")
        rows.append([f"base model MFU, {kind}, {r['sentences'] * r['length']:,} target tokens a batch",
                     f"{pct(v['mfu'])} ({v['tokens_per_s']:,.0f} tok/s)", "35% compiled, 25% eager"])
    for v in r.get("sweep", []):
        rows.append([f"base model MFU, eager, {v['target_tokens']:,} target tokens a batch",
                     f"{pct(v['mfu'])} ({v['tokens_per_s']:,.0f} tok/s)", "25% eager"])
    return rows


def _epoch_rows(e: dict[str, Any]) -> list[list[str]]:
    rows = []
    for name, run in e["runs"].items():
        epochs = run["epochs"]
        shown = ", ".join(f"{x['epoch_s']:.1f} s" for x in epochs)
        ratio = f"; epoch 1 / later {run['epoch1_over_later']:.1f}x" if run.get("epoch1_over_later") else ""
        rows.append([f"default config ({name.replace('_', ' ')}), seconds per epoch", shown + ratio,
                     "epoch 1 <= 1.5x a later one"])
    return rows


def _preset_rows(p: dict[str, Any], label: str) -> list[list[str]]:
    rows = []
    for name, entry in p["presets"].items():
        if entry.get("exit") == 0 and "sacrebleu" in entry:
            t = entry["train"]
            rows.append([f"`{name}`{label}: {t['epochs']} epochs, {t['updates']:,} updates, trained in",
                         f"{entry['train_s'] / 60:.1f} min; sacreBLEU {entry['sacrebleu']:.2f}, chrF "
                         f"{entry['chrf']:.2f} on {entry['test_set']} (beam {entry['decoding']['beam_size']})",
                         "sacreBLEU >= 42 in 4 min"])
        else:
            error = " ".join(entry.get("error", []))[:160]
            rows.append([f"`{name}`{label}", f"failed after {entry['train_s'] / 60:.1f} min: {error}", ""])
    return rows


def general_rows(g: dict[str, Any]) -> list[list[str]]:
    """Part c: each general preset trained and scored on the device, every test set of its direction."""
    rows = []
    for name, entry in g["presets"].items():
        if entry.get("exit") != 0:
            error = " ".join(entry.get("error", []))[:160]
            rows.append([f"`{name}` on {g['corpus']}", f"failed after {entry['train_s'] / 60:.1f} min: {error}", ""])
            continue
        t = entry["train"]
        scores = ", ".join(f"{k} {v['sacrebleu']:.2f}" for k, v in entry.get("scores", {}).items())
        rows.append([f"`{name}` on {g['corpus']}: {t['epochs']} epochs, {t['updates']:,} updates, trained in",
                     f"{entry['train_s'] / 60:.1f} min; sacreBLEU {scores}; {len(entry.get('blind', {}))} blind "
                     "sets translated", "trained and scored on the device"])
    return rows


def gpu_check(s: Sources) -> str:
    if not (s.bench / "gpu_tests.json").is_file():
        return not_yet("gpu_tests", COMMAND)
    tests, mfu = s.result("gpu_tests"), s.result("gpu_mfu")
    t = tests["cuda_tests"]
    failed = f" (failed: {', '.join(f'`{n}`' for n in t['failed'])})" if t["failed"] else ""
    rows = [["CUDA tests (`pytest -m cuda tests/train/test_cuda.py`)", f"{t['passed']} of {t['tests']} passed{failed}",
             "all"]]
    rows += _mfu_rows(mfu)
    epochs = s.result("gpu_epochs") if (s.bench / "gpu_epochs.json").is_file() else None
    rows += _epoch_rows(epochs) if epochs else []
    sources = ["gpu_tests", "gpu_mfu"] + (["gpu_epochs"] if epochs else [])
    for name, label in (("gpu_presets_postln", " (first try: post-LN, lr_factor 1.0)"), ("gpu_presets", "")):
        if (s.bench / f"{name}.json").is_file():
            rows += _preset_rows(s.result(name), label)
            sources.append(name)
    if (s.bench / "gpu_general.json").is_file():
        rows += general_rows(s.result("gpu_general"))
        sources.append("gpu_general")
    out = [table(["what", "measured", "target"], rows, "lll")]
    if epochs and epochs.get("profile"):
        prof = epochs["profile"]
        top = ", ".join(f"`{r['name'][:48]}` {pct(r['share'])}" for r in prof["top"][:5])
        out.append(f"Default config, first {prof['updates']} updates and a validation under torch.profiler "
                   f"({prof['time_kind']}): {top}.")
    out.append(f"Source: {', '.join(f'`bench/results/{n}.json`' for n in sources)}; measured on "
               f"{tests['device']} with torch {tests['torch']} ({mfu['date'][:10]}, commit `{mfu['commit'][:8]}`), "
               f"by `{COMMAND}` and its two device calls.")
    return "\n\n".join(out)
