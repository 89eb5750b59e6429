"""Generated blocks of the other language pairs (pairs/dvc.yaml): each direction's scores, training and data.

Rendered by pairs/dvc.yaml's publish stage only (`tools.publish.stage --pairs`), from
`reports/pairs/<direction>/` (evaluate, train, export, ctranslate2), `reports/pairs/<pair>/validation/`
(validate, vocab), the default pipeline's training record (`reports/train/live/`, the time it is compared
with), the published scores of the text-only systems of the WMT multimodal tasks
(`bench/results/pairs_peers_published.json`), the detection bench (`bench/results/detect_pairs.json`),
the pivot bench (`bench/results/pivot.json`) and the side-by-side training bench
(`bench/results/pairs_train_time.json`). A direction not trained yet is shown as such, with the command
that trains it.
"""

from __future__ import annotations

import csv
from statistics import median
from typing import Any

from tools.publish.sources import Sources, measured, not_yet, table

PAIRS = ("fr-en", "cs-en", "de-en")
# de-en's own direction is the default pipeline's (dvc.yaml): the pairs train its en-de only
DIRECTIONS = ("fr-en", "en-fr", "cs-en", "en-cs", "en-de")
GOALS = {"fr-en": 50.0, "en-fr": 55.0, "cs-en": 38.0, "en-cs": 31.0}  # issue 65's targets, test_2016_flickr
TEST_SET = "test_2016_flickr"
DETECT = "python -m bench.detect_pairs"
TUNE = ("python -m bench.decode_tune --params pairs/{pair}.yaml --data data/pairs/{pair}/validated --models "
        "models/pairs/<direction>/model.pt ... --settings ... --name decode_tune_{pair}")
TRAIN_TIME = "python -m bench.pairs_train_time"
PIVOT = "python -m bench.pivot --first models/pairs/fr-en/onnx --second models/pairs/en-de/onnx"


def _optional(s: Sources, name: str) -> Any | None:
    """`reports/<name>.json`, or None when that stage has not run yet (another session trains it)."""
    return s.report(name) if (s.reports / f"{name}.json").is_file() else None


def _pair(direction: str) -> str:
    return direction if direction in PAIRS else "-".join(reversed(direction.split("-")))


def _goal(direction: str) -> str:
    return f"{GOALS[direction]:g}" if direction in GOALS else "-"


def _pending(direction: str) -> str:
    return f"not trained yet: `make repro-pairs PAIR={_pair(direction)}`"


def epoch_seconds(s: Sources, folder: str) -> list[float]:
    """Each epoch's training seconds, as the train stage logged them (`<folder>/live/plots/metrics/epoch_s.tsv`)."""
    path = s.reports / folder / "live" / "plots" / "metrics" / "epoch_s.tsv"
    s.report(f"{folder}/live/metrics")  # the live record's summary: a DataError naming the stage when missing
    with path.open(encoding="utf-8") as fh:
        return [float(row["epoch_s"]) for row in csv.DictReader(fh, delimiter="\t")]


def results(s: Sources) -> str:
    """README, docs/pairs.md: each direction on Multi30k test_2016_flickr, its goal and the published peers."""
    published = s.result("pairs_peers_published")
    pub = published["results"]
    rows, runs, signatures = [], [], set()
    for direction in DIRECTIONS:
        metrics = _optional(s, f"pairs/{direction}/metrics")
        best = ", ".join(f"{r['bleu']:.1f} ({r['system']})" for r in pub["rows"] if r["direction"] == direction) or "-"
        if metrics is None:
            rows.append([direction, _pending(direction), "", _goal(direction), best])
            continue
        m = metrics[TEST_SET]
        d = m["decoding"]
        runs.append(f"{direction}: beam {d['beam_size']}, length penalty {d['alpha']:g}")
        rows.append([direction, f"**{m['sacrebleu']:.2f}**", f"{m['chrf']:.2f}", _goal(direction), best])
        signatures.add(m["sacrebleu_signature"])
    parts = [table(["direction", "sacreBLEU", "chrF", "goal", "published: BLEU (system)"], rows, "lrrrl"), ""]
    parts.append(f"Multi30k `{TEST_SET}` (1,000 sentences), params.yaml's recipe on each pair's corpus, decoded "
                 "with the pair file's beam and length penalty, chosen on val (see Decoding, tuned on val)"
                 + (" (" + "; ".join(runs) + ")" if runs else "") + ".")
    parts += [f"sacreBLEU `{sig}`." for sig in sorted(signatures)]
    parts += ["", published["note"], "", *[f"- {k}: {v}" for k, v in pub["systems"].items()], "",
              "Source: `reports/pairs/<direction>/metrics.json` (evaluate), `bench/results/pairs_peers_published.json` "
              "(published scores, each with its source there)."]
    return "\n".join(parts)


def summary(s: Sources) -> str:
    """README: each direction's sacreBLEU on Multi30k test_2016_flickr beside its goal."""
    rows = []
    for direction in DIRECTIONS:
        metrics = _optional(s, f"pairs/{direction}/metrics")
        score = _pending(direction) if metrics is None else f"**{metrics[TEST_SET]['sacrebleu']:.2f}**"
        rows.append([direction, score, _goal(direction)])
    return "\n".join([table(["direction", f"sacreBLEU, `{TEST_SET}`", "goal"], rows, "lrr"), "",
                      "Source: `reports/pairs/<direction>/metrics.json` (evaluate); the peers, the training time "
                      "and the pivot: [docs/pairs.md](docs/pairs.md#results)."])


def training(s: Sources) -> str:
    """docs/pairs.md: each direction's training beside the default pipeline's (de-en, the same recipe, this host)."""
    default = epoch_seconds(s, "train")
    rows = [["de-en (the default, `dvc.yaml`)", len(default), f"{sum(default) / 60:.1f}", f"{median(default):.0f}",
             f"{min(default):.0f}", f"{s.report('validation/train')['stats']['updates']:,}"]]
    for direction in DIRECTIONS:
        train = _optional(s, f"pairs/{direction}/validation/train")
        if train is None:
            rows.append([direction, _pending(direction), "", "", "", ""])
            continue
        seconds = epoch_seconds(s, f"pairs/{direction}/train")
        rows.append([direction, len(seconds), f"{sum(seconds) / 60:.1f}", f"{median(seconds):.0f}",
                     f"{min(seconds):.0f}", f"{train['stats']['updates']:,}"])
    header = ["direction", "epochs", "training, minutes", "median epoch, s", "fastest epoch, s", "updates"]
    return "\n".join([table(header, rows, "lrrrrr"),
                      "", "Minutes of the epochs' updates (validation apart, a few seconds an epoch) as the train "
                      "stage logged them, on the host each run trained on. A run that shared the machine for a while "
                      "(a test run beside it slows the epochs it overlaps) compares by its fastest epoch: every epoch "
                      "does the same work.", "",
                      "Source: `reports/train/live/plots/metrics/epoch_s.tsv` (the default), "
                      "`reports/pairs/<direction>/train/live/plots/metrics/epoch_s.tsv`, "
                      "`reports/pairs/<direction>/validation/train.json` (train).", "", side_by_side(s)])


def side_by_side(s: Sources) -> str:
    """Every direction's epoch timed in one run on one host, each in its own process, as a ratio to the default's."""
    if not (s.bench / "pairs_train_time.json").is_file():
        return not_yet("pairs_train_time", TRAIN_TIME)
    res = s.result("pairs_train_time")
    r = res["results"]
    base = r["directions"][r["default"]]["target_tokens"]
    rows = [[name if name != r["default"] else f"{name} (the default)", f"{row['updates']:,}",
             f"{row['target_tokens']:,}", f"{row['target_tokens'] / base:.2f}x", f"{row['epoch_s']:.0f}",
             f"{row['training_min']:.1f}", f"**{row['ratio']:.2f}x**",
             f"{max(row['update_s_rounds']) / min(row['update_s_rounds']):.2f}x"]
            for name, row in r["directions"].items()]
    slowest = max((row["ratio"] for name, row in r["directions"].items() if name != r["default"]), default=1.0)
    header = ["direction", "updates an epoch", "target tokens an epoch", "work vs " + r["default"], "epoch, s",
              "training, minutes", f"time vs {r['default']}", "slowest / fastest round"]
    return "\n".join([f"**Side by side in one run** (`{TRAIN_TIME}`): each direction's run built as its train stage "
                      f"builds it (its params file, vocabulary and ids), {r['fraction']:.0%} of epoch 1's batches "
                      "timed, evenly spaced, plus the epoch's validation; each direction in its own process, taking "
                      f"turns, fastest of {r['rounds']} rounds:", "",
                      table(header, rows, "lrrrrrrr"), "",
                      f"An epoch: the timed updates scaled to the epoch's batches, plus the validation; training: "
                      f"`train.epochs` of them. The slowest direction takes {slowest:.2f}x the default's time "
                      f"({r['device']}, {r['threads']} threads, bf16 {'on' if r['bf16'] else 'off'}). Work: target "
                      "tokens an epoch, what an update's cost follows; the rounds' spread is the host's (nothing else "
                      "ran beside the bench), which the fastest round sets aside: a direction whose "
                      "time ratio is below its work ratio had quieter rounds.", "",
                      measured(res, "pairs_train_time")])


def data(s: Sources) -> str:
    """docs/data.md: each pair's corpus after the validate gate, its joint vocabulary and what was switched off."""
    rows = []
    for pair in PAIRS:
        raw, vocab = _optional(s, f"pairs/{pair}/validation/raw"), _optional(s, f"pairs/{pair}/validation/vocab")
        if raw is None or vocab is None:
            rows.append([pair, f"not run yet: `make repro-pairs PAIR={pair}`", "", "", "", ""])
            continue
        stats = raw["stats"]
        notes = "; ".join(raw["stats"].get("notes", [])) or "none"
        rows.append([pair, *(f"{stats[k]['pairs_kept']:,}" for k in ("train", "val", TEST_SET)),
                     f"{vocab['stats']['src']['size']:,}", notes])
    return "\n".join([table(["pair", "train pairs", "val", TEST_SET, "joint vocabulary", "rules switched off"],
                            rows, "lrrrrl"), "",
                      "Source: `reports/pairs/<pair>/validation/raw.json` (validate), "
                      "`reports/pairs/<pair>/validation/vocab.json` (vocab)."])


def detect(s: Sources) -> str:
    """docs/pairs.md: `/detect` of one server with every package, on held-out lines of each served language."""
    if not (s.bench / "detect_pairs.json").is_file():
        return not_yet("detect_pairs", DETECT)
    res = s.result("detect_pairs")
    r = res["results"]
    rows = [[lang, f"`{row['file']}`", f"{row['lines']:,}", f"{row['accuracy']:.2%}",
             ", ".join(f"{k} {v}" for k, v in row["confused"].items()) or "-"] for lang, row in r["languages"].items()]
    return "\n".join([table(["language", "held-out lines", "lines", "detected right", "taken for"], rows, "llrrl"), "",
                      f"One `nmt serve` with {', '.join(f'`{p}`' for p in r['packages'])}; every line sent to "
                      f"`POST /detect` ({r['batch']} lines a request). Overall: {r['overall']:.2%}.", "",
                      measured(res, "detect_pairs")])


def pivot(s: Sources) -> str:
    """docs/pairs.md: French -> German through English, scored against Multi30k's German side."""
    if not (s.bench / "pivot.json").is_file():
        return not_yet("pivot", PIVOT)
    res = s.result("pivot")
    r = res["results"]
    rows = [[row["route"], f"`{row['test_set']}`", f"**{row['sacrebleu']:.2f}**", f"{row['chrf']:.2f}"]
            for row in r["rows"]]
    return "\n".join([table(["route", "test set", "sacreBLEU", "chrF"], rows, "llrr"), "",
                      f"sacreBLEU `{r['signature']}`; each hop decoded as the server decodes it.", "",
                      measured(res, "pivot")])



def _setting(row: dict[str, Any]) -> str:
    return f"beam {row['beam_size']}, alpha {row['alpha']:g}"  # decode_tune's label of a setting


def _cell(row: dict[str, Any]) -> str:
    (score,) = row["sources"].values()  # one dev source: the pair's val split
    return f"{score['sacrebleu']:.2f} ({score['length_ratio']:.2f})"


def tune(s: Sources) -> str:
    """docs/pairs.md: each pair's beam size and length penalty on its val split (how the pair file's
    `evaluate.beam_size` and `alpha` were chosen: the best mean over the pair's trained directions)."""
    names = [f"decode_tune_{pair}" for pair in PAIRS if (s.bench / f"decode_tune_{pair}.json").is_file()]
    if not names:
        return not_yet(f"decode_tune_{PAIRS[0]}", TUNE.format(pair=PAIRS[0]))
    parts = []
    for name in names:
        res = s.result(name)
        r, runs = res["results"], res["results"]["directions"]
        rows = [[_setting(row), *[_cell(run["rows"][i]) for run in runs], f"{r['means'][_setting(row)]:.2f}"]
                for i, row in enumerate(runs[0]["rows"])]
        (source, lines), best = next(iter(r["decoded"].items())), r["best"]
        parts += [f"**{name.removeprefix('decode_tune_')}** (`{r['params']}`; `{source}`, {lines:,} of "
                  f"{r['sources'][source]:,} lines, evenly spaced):", "",
                  table(["decoding", *[run["direction"] for run in runs], "mean"], rows, "l" + "r" * (len(runs) + 1)),
                  "", f"Best mean: beam {best['beam_size']}, alpha {best['alpha']:g}.", "", measured(res, name), ""]
    return "\n".join(parts + ["sacreBLEU (length ratio) on the val split, decoded as the evaluate stage decodes "
                              "(the torch search); no test set decoded. Each pair file states its best mean in "
                              "`evaluate` (what it sets over its recipe, params.yaml)."])
