"""Generated blocks of the general configuration (general/dvc.yaml): both directions' scores.

Rendered by general/dvc.yaml's publish stage only (`tools.publish.stage --general`), from
`reports/general/<direction>/` (evaluate, export, ctranslate2, train), the Multi30k model's scores
on the same de->en sets (`reports/general/baseline/metrics.json`, the baseline stage), the
package bench (`bench/results/packages.json`), the final-weights bench
(`bench/results/final_weights.json`) and the decoding bench (`bench/results/decode_tune.json`). A
direction not trained yet is shown as such, with the command that trains it.
"""

from __future__ import annotations

from typing import Any

from tools.publish.sources import Sources, measured, not_yet, table

DIRECTIONS = ("de-en", "en-de")
BASELINE = "general/baseline/metrics"  # the Multi30k model on the general de->en test sets


def _optional(s: Sources, name: str) -> Any | None:
    """`reports/<name>.json`, or None when that stage has not run yet (another session trains it)."""
    if not (s.reports / f"{name}.json").is_file():
        return None
    return s.report(name)


def _pending(direction: str) -> str:
    return (f"**{direction}**: not trained yet; `dvc repro general/dvc.yaml:evaluate@{direction}` trains and "
            "scores it.")


def results(s: Sources) -> str:
    """README: every test set of each direction, sacreBLEU and chrF, the Multi30k model beside (de->en)."""
    baseline = _optional(s, BASELINE) or {}
    rows, runs, signatures = [], [], set()
    for direction in DIRECTIONS:
        metrics = _optional(s, f"general/{direction}/metrics")
        if metrics is None:
            rows.append([direction, _pending(direction), "", "", "", ""])
            continue
        train = s.report(f"general/{direction}/validation/train")["stats"]
        d = next(iter(metrics.values()))["decoding"]
        runs.append(f"{direction}: {train['epochs']} epochs, {train['updates']} updates, beam {d['beam_size']}, "
                    f"length penalty {d['alpha']:g}")
        for name, m in metrics.items():
            b = baseline.get(name) if direction == "de-en" else None
            rows.append([direction, f"`{name}` ({m['sentences']})", f"**{m['sacrebleu']:.2f}**", f"{m['chrf']:.2f}",
                         "-" if b is None else f"{b['sacrebleu']:.2f}", "-" if b is None else f"{b['chrf']:.2f}"])
            signatures.add((m["sacrebleu_signature"], m["chrf_signature"]))
    parts = [table(["direction", "test set (sentences)", "sacreBLEU", "chrF", "Multi30k model: sacreBLEU", "chrF"],
                   rows, "llrrrr"), ""]
    if runs:
        parts.append("Trained " + "; ".join(runs) + ".")
    parts += [f"sacreBLEU `{bleu}`; chrF `{chrf}`." for bleu, chrf in sorted(signatures)]
    if baseline:
        d = next(iter(baseline.values()))["decoding"]
        parts.append(f"The Multi30k model (`models/model.pt`) decoded the same sources with beam {d['beam_size']}, "
                     f"length penalty {d['alpha']:g}.")
    parts.append("\nSource: `reports/general/<direction>/metrics.json` (evaluate), "
                 "`reports/general/<direction>/validation/train.json` (train), `reports/general/baseline/metrics.json` "
                 "(baseline).")
    return "\n".join(parts)


def packages(s: Sources) -> str:
    """docs/export.md: each general package's size, checks and speed beside the Multi30k package's."""
    rows = []
    for direction in DIRECTIONS:
        export, ct2 = _optional(s, f"general/{direction}/export"), _optional(s, f"general/{direction}/ctranslate2")
        if export is None:
            rows.append([f"general {direction}", "not trained yet", "-", "-", "-"])
            continue
        c = [v for v in (ct2 or {}).values() if isinstance(v, dict)]
        rows.append([f"general {direction} (`models/general/{direction}/onnx`)", f"{export['size_mb']['fp32']:.1f}",
                     f"{export['size_mb'].get('int8', float('nan')):.1f}",
                     f"{export['parity']['max_logit_diff']:.1e}",
                     f"{c[0]['identical_lines']:.1%}" if c else "-"])
    base = s.report("export")
    base_c = [v for v in s.report("ctranslate2").values() if isinstance(v, dict)]
    rows.append(["Multi30k de-en (`models/onnx`)", f"{base['size_mb']['fp32']:.1f}",
                 f"{base['size_mb'].get('int8', float('nan')):.1f}", f"{base['parity']['max_logit_diff']:.1e}",
                 f"{base_c[0]['identical_lines']:.1%}" if base_c else "-"])
    parts = [table(["package", "fp32 graphs, MB", "int8 graphs, MB", "largest logit difference to torch",
                    "CTranslate2 lines identical to torch"], rows, "lrrrr")]
    parts.append("\nSource: `reports/general/<direction>/export.json`, `reports/general/<direction>/ctranslate2.json`, "
                 "`reports/export.json`, `reports/ctranslate2.json`.")
    bench = s.result("packages")
    rows = [[f"`{r['package']}`", r["direction"], f"`{r['input']}`", f"{r['search']} (beam {r['beam_size']})",
             r["sentences"], f"{r['sentences_per_s']:.1f}", f"{r['tokens_per_s']:.0f}"]
            for r in bench["results"]["rows"]]
    parts += ["", f"Speed, every package decoding the same inputs in one run ({bench['results']['decoding']}):", "",
              table(["package", "direction", "input", "search", "sentences", "sentences/s", "output words/s"], rows,
                    "lllllrr"),
              "", measured(bench, "packages")]
    return "\n".join(parts)


PEERS = {"opus-mt": "OPUS-MT", "firefox-tiny": "Firefox tiny", "firefox-base": "Firefox base", "argos": "Argos"}


def peers(s: Sources) -> str:
    """docs/data.md: our general models beside the published scores of the systems users would pick instead."""
    pub = s.result("peers_published")
    res = pub["results"]
    rows = []
    for r in res["rows"]:
        metrics = _optional(s, f"general/{r['direction']}/metrics")
        mine = (metrics or {}).get(r["ours"]) if r["ours"] else None
        ours = (f"**{mine['sacrebleu']:.1f}**" if mine else "not trained yet" if metrics is None and r["ours"]
                else "not scored here (no mirror)")
        rows.append([r["direction"], f"`{r['test_set']}`", ours,
                     *[f"{r['scores'][k]:.1f}" if k in r["scores"] else "-" for k in PEERS]])
    parts = [table(["direction", "test set", "ours: sacreBLEU", *PEERS.values()], rows, "llrrrrr"), ""]
    parts += [f"- {PEERS[k]}: {text}." for k, text in res["systems"].items()]
    parts += ["", pub["note"], "",
              "Source: `bench/results/peers_published.json` (published scores: "
              + "; ".join(f"{k}: {url}" for k, url in res["sources"].items())
              + "), `reports/general/<direction>/metrics.json` (ours: evaluate, beam search, sacreBLEU 13a)."]
    return "\n".join(parts)


def _cell(d: dict | None, name: str) -> str:
    if d is None or name not in d["scores"]:
        return "-"
    return f"{d['scores'][name]['sacrebleu']:.2f} / {d['scores'][name]['chrf']:.1f}"


def rounds(s: Sources) -> str:
    """docs/data.md: each round of the general models on every test set, from the reports its run committed."""
    res = s.result("general_rounds")
    runs = res["results"]["rounds"]
    rows = []
    for direction in DIRECTIONS:
        per = [r["directions"].get(direction) for r in runs]
        names = list(dict.fromkeys(n for d in per if d for n in d["scores"]))
        rows += [[direction, f"`{name}`", *[_cell(d, name) for d in per]] for name in names]
        if names:
            rows.append([direction, "dev: val loss", *["-" if d is None or "val_loss" not in d["train"] else
                                                       f"{d['train']['val_loss']:.3f}" for d in per]])
            rows.append([direction, "epochs, updates", *["-" if d is None or "updates" not in d["train"] else
                                                         f"{d['train'].get('epochs')}, {d['train']['updates']:,}"
                                                         for d in per]])
    commits = "; ".join(r["label"] + ": " + ", ".join(f"{k} `{d['commit'][:8]}`" for k, d in r["directions"].items())
                        for r in runs)
    return "\n".join([table(["direction", "test set", *[r["label"] for r in runs]], rows, "ll" + "r" * len(runs)), "",
                      "sacreBLEU / chrF on each test set, one seed each (the same seed); each round's figures are "
                      f"those its run committed ({commits}). Dev: the final weights' label-smoothed loss on the "
                      "mix's val split (the train stage's figure; round 1's val split had no WMT23 references, so "
                      "its loss compares with the later rounds' only loosely).", "",
                      f"Source: `bench/results/general_rounds.json`, written by `{res['command']}`."])


FINAL_WEIGHTS = ("python -m bench.final_weights --checkpoints models/general/en-de/checkpoints "
                 "--bin data/general/en-de/bin --vocab data/general/vocab --last 3")


def final_weights(s: Sources) -> str:
    """docs/data.md: a general run's last checkpoint against the averages of its last k, on val (how
    `train.average_last` was chosen for its schedule)."""
    if not (s.bench / "final_weights.json").is_file():
        return not_yet("final_weights", FINAL_WEIGHTS)
    res = s.result("final_weights")
    r, t = res["results"], res["results"]["train"]
    rows = [[row["weights"], ", ".join(f"`{c}`" for c in row["checkpoints"]), f"{row['val_loss']:.4f}",
             "-" if row["val_bleu_greedy"] is None else f"{row['val_bleu_greedy']:.2f}"] for row in r["rows"]]
    return "\n".join([table(["final weights", "epoch checkpoints", "val loss", "greedy val BLEU"], rows, "llrr"), "",
                      f"The run in `{r['checkpoints']}`: {r['step']:,} updates, `train.epochs: {t['epochs']}`, "
                      f"`cooldown: {t['cooldown']}`, `warmup: {t['warmup']}`, `lr_factor: {t['lr_factor']}`; it "
                      f"shipped `average_last: {t['average_last']}`. Val loss: label-smoothed, per target token, "
                      "over the whole val split in fp32 on a CPU (the train stage's final figure there); greedy "
                      "BLEU: the first val sentences, sacreBLEU on output tokens (a training signal, not a test "
                      "score).", "",
                      measured(res, "final_weights")])


DECODE_TUNE = ("python -m bench.decode_tune --params general/params.yaml --data data/general/validated "
               "--gate reports/general/validation/raw.json --models models/general/de-en/model.pt "
               "models/general/en-de/model.pt --settings ...")


def decode_tune(s: Sources) -> str:
    """docs/data.md: the general models' beam size and length penalty on each dev source (how
    general/params.yaml's `evaluate.beam_size` and `alpha` were chosen)."""
    if not (s.bench / "decode_tune.json").is_file():
        return not_yet("decode_tune", DECODE_TUNE)
    res = s.result("decode_tune")
    r = res["results"]
    parts = []
    for run in r["directions"]:
        names = list(run["rows"][0]["sources"])
        rows = [[f"beam {row['beam_size']}, alpha {row['alpha']:g}",
                 *[f"{row['sources'][n]['sacrebleu']:.2f} ({row['sources'][n]['length_ratio']:.2f})" for n in names],
                 f"{row['mean_sacrebleu']:.2f}"] for row in run["rows"]]
        parts += [f"**{run['direction']}** (`{run['model']}`):", "",
                  table(["decoding", *[f"`{n}`" for n in names], "mean"], rows, "l" + "r" * (len(names) + 1)), ""]
    best = r["best"]
    n = "all the" if not r["per_source"] else f"at most {r['per_source']:,} evenly spaced"
    parts += [f"sacreBLEU (length ratio) on {n} lines of each dev source of the val split ("
              + ", ".join(f"`{k}` {v:,} of {r['sources'][k]:,}" for k, v in r["decoded"].items())
              + "); mean: over the sources. "
              f"Best mean over both directions: beam {best['beam_size']}, alpha {best['alpha']:g} (means: "
              + ", ".join(f"{k} {v:.2f}" for k, v in r["means"].items()) + ").", "", measured(res, "decode_tune")]
    return "\n".join(parts)
