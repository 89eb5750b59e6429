"""Generated blocks of the fine-tunes (finetune/dvc.yaml): each beside its parent, its schedule, replay's effect.

Rendered by finetune/dvc.yaml's publish stage only (`tools.publish.stage --finetune`), from
`reports/finetune/<name>/validation/finetune-compare.json` (compare's gate: both models on every set, and
whether the fine-tune kept the general sets),
`reports/finetune/<name>/validation/finetune.json` (finetune: updates, training seconds, why it stopped), the
replay bench (`bench/results/finetune_replay.json`) and the schedule sweep (`bench/results/finetune_schedule.json`).
A fine-tune not run yet is shown as such, with the command that runs it.
"""

from __future__ import annotations

from typing import Any

from tools.publish.sources import Sources, measured, not_yet, table

FINETUNES = ("multi30k-de-en", "multi30k-en-de", "news-de-en")  # finetune/dvc.yaml's fine-tunes
GOALS = {"multi30k-de-en": 42.0, "multi30k-en-de": 39.0}  # issue 66: sacreBLEU on the domain's test_2016_flickr
DOMAIN_SET = "test_2016_flickr"
REPLAY = "python -m bench.finetune_replay --key news-de-en"  # the domain of its own (finetune/news.yaml)
SCHEDULE = "python -m bench.finetune_schedule --key multi30k-de-en --config ..."  # the worked example's schedule


def _optional(s: Sources, name: str) -> Any | None:
    """`reports/<name>.json`, or None when that stage has not run yet."""
    return s.report(name) if (s.reports / f"{name}.json").is_file() else None


def _goal(name: str, row: dict[str, Any]) -> str:
    if row["general"]:
        return "kept (the compare gate)"
    return f">= {GOALS[name]:g}" if row["set"] == DOMAIN_SET and name in GOALS else "-"


def results(s: Sources) -> str:
    """docs/training.md: each fine-tune beside its parent on every set, and how long it trained."""
    rows, runs, gates = [], [], []
    for name in FINETUNES:
        gate = _optional(s, f"finetune/{name}/validation/finetune-compare")  # the last compare, passed or not
        train = _optional(s, f"finetune/{name}/validation/finetune")
        if gate is None or train is None:
            rows.append([name, f"not run yet: `make finetune FINETUNE={name}`", "", "", "", "", ""])
            runs.append([name, "-", "-", "-", "-"])
            continue
        failed = [f"{c['name']}: {c['observed']} (expected {c['expected']})"
                  for c in gate["checks"] if not c["success"]]
        gates.append(f"- `{name}`: " + ("passed" if gate["success"] else "**FAILED**, " + "; ".join(failed)
                                       + " (the compare stage's outputs were not replaced)"))
        for r in gate["stats"]["sets"]:
            rows.append([name, f"`{r['set']}`", "yes" if r["general"] else "no", f"{r['parent_sacrebleu']:.2f}",
                         f"**{r['finetuned_sacrebleu']:.2f}**", f"{r['change']:+.2f}", _goal(name, r)])
        st = train["stats"]
        minutes = f"{st['train_s'] / 60:.1f}" if "train_s" in st else "-"
        runs.append([name, f"{st['updates']:,}", str(st["epochs"]), minutes, st["stopped"]])
    header = ["fine-tune", "test set", "general", "parent", "fine-tuned", "change", "goal"]
    return "\n".join([table(header, rows, "lllrrrl"), "",
                      "sacreBLEU (cased, detokenized) of the parent and of the fine-tuned model on each set, both "
                      "decoded by the evaluate stage with the same settings. A general set is one of "
                      "`finetune.general_sets`: the compare gate fails a fine-tune that loses more than "
                      "`finetune.max_general_drop` there. The compare gate of each one's last run:", "",
                      *(gates or ["- none run yet"]), "",
                      table(["fine-tune", "updates", "epochs", "minutes", "stopped"], runs, "lrrrl"), "",
                      "Minutes: the epochs' training and validation time as the finetune stage logged it, on the "
                      "host it ran on.", "",
                      "Source: `reports/finetune/<name>/validation/finetune-compare.json` (compare's gate: its rows "
                      "are compare.json's), `reports/finetune/<name>/validation/finetune.json` (finetune)."])


def _bench(s: Sources, name: str) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """A fine-tune bench's result file, its `results` and the sets it scored (the parent's, in order)."""
    res = s.result(name)
    return res, res["results"], list(res["results"]["parent"])


def replay(s: Sources) -> str:
    """docs/training.md: one fine-tune again per replay share, beside its parent."""
    if not (s.bench / "finetune_replay.json").is_file():
        return not_yet("finetune_replay", REPLAY)
    res, r, sets = _bench(s, "finetune_replay")
    mark = {name: f"`{name}`" + (" (general)" if name in r["general_sets"] else "") for name in sets}
    rows = [["the parent", "-", "-", *[f"{r['parent'][n]['sacrebleu']:.2f}" for n in sets]]]
    for row in r["rows"]:
        rows.append([f"replay {row['replay']:.0%}", f"{row['updates']:,}", f"{row['seconds'] / 60:.1f}",
                     *[f"{row['sets'][n]['sacrebleu']:.2f}" if n in row["sets"] else "-" for n in sets]])
    return "\n".join([table(["model", "updates", "minutes", *[mark[n] for n in sets]], rows, "lrr" + "r" * len(sets)),
                      "", f"Fine-tune `{r['key']}` trained again per replay share (the share of each epoch drawn "
                      "from the parent's training pairs), everything else as `make finetune` runs it; sacreBLEU "
                      "per test set. Minutes: the finetune command's wall time, loading and each epoch's "
                      "validation included (a smaller share makes shorter epochs, so more of them).", "",
                      measured(res, "finetune_replay")])


def schedule(s: Sources) -> str:
    """docs/training.md: the candidate schedules of a fine-tune, scored on dev sets only, and the one chosen."""
    if not (s.bench / "finetune_schedule.json").is_file():
        return not_yet("finetune_schedule", SCHEDULE)
    res, r, sets = _bench(s, "finetune_schedule")
    rows = [["the parent", "-", "-", "-", *[f"{r['parent'][n]:.2f}" for n in sets]]]
    for i, row in enumerate(r["rows"]):
        changes = ", ".join(f"`{k}={v:g}`" if isinstance(v, float) else f"`{k}={v}`" for k, v in row["changes"].items())
        mark = " (chosen)" if i == r["chosen"] else ""
        rows.append([changes + mark, f"{row['updates']:,}", f"{row['minutes']:.1f}", row["stopped"],
                     *[f"**{row['scores'][n]:.2f}**" if mark else f"{row['scores'][n]:.2f}" for n in sets]])
    decoding = "greedy" if r["decoding"]["beam_size"] == 1 else f"beam {r['decoding']['beam_size']}"
    dev = ", ".join(f"`{n}` ({d['sentences']:,} sentences)" for n, d in r["dev"].items())
    return "\n".join([
        table(["schedule (changes to the params file)", "updates", "minutes", "stopped", *[f"`{n}`" for n in sets]],
              rows, "lrrl" + "r" * len(sets)), "",
        f"Fine-tune `{r['key']}`, each candidate trained with the pipeline's own command and scored on dev sets only "
        f"({dev}; sacreBLEU, {decoding}). Chosen: the best on `{sets[0]}` among those that lose at most "
        f"{r['max_general_drop']:g} on {', '.join(f'`{n}`' for n in sets[1:]) or 'no other set'} against the "
        "parent (none: the one that loses least there). Minutes: the finetune command's wall time, loading "
        "included.", "", measured(res, "finetune_schedule")])
