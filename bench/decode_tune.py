"""Beam size and length penalty for the general models, chosen on dev: each direction's final model
decodes at most `--per-source` lines of every source of the mix's val split, evenly spaced (a source's
lines may be in an order, Tatoeba's by length), (Multi30k val, newstest2013, the
WMT23/24 references, the Tatoeba dev share) at each `BEAM:ALPHA` setting, as the evaluate stage
decodes (`nmt.decode.translator.Translator`, the same search); recorded per source: sacreBLEU
(detokenized, cased, 13a) and the length ratio, and their mean over the sources. The setting with the
best mean over both directions' sources (rounded to 2 decimals as written; a tie: the setting listed
first, nmt/ranking.py) is the one to state in general/params.yaml's `evaluate`
section. No test set is decoded.

A pair of pairs/ (one corpus, no mix) has one dev source, its val split: `--params pairs/<pair>.yaml` with that
pair's models, and the setting best over its directions is the one to state in the pair file's `evaluate`
(`--name decode_tune_<pair>` keeps each pair's result apart):

    python -m bench.decode_tune --params pairs/fr-en.yaml --data data/pairs/fr-en/validated \\
        --models models/pairs/fr-en/model.pt models/pairs/en-fr/model.pt \\
        --settings 16:2.2 16:0.6 16:1.0 16:1.6 16:2.8 5:1.0 5:2.2 --per-source 500 --name decode_tune_fr-en

The val split is cut into its sources as the data stage wrote it (nmt.data.mixing: the dev sources in
the mix's order, then each train source's dev share), with the counts of its gate report.

    python -m bench.decode_tune --params general/params.yaml --data data/general/validated \\
        --gate reports/general/validation/raw.json \\
        --models models/general/de-en/model.pt models/general/en-de/model.pt \\
        --settings 5:0.6 5:1.0 5:1.4 5:1.8 5:2.2 --per-source 400
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import mean
from typing import Any

import torch

from bench.common.record import write_result
from nmt import ranking
from nmt.config.data import DataConfig
from nmt.config.evaluate import Decoding
from nmt.config.loader import load_sections
from nmt.config.mix import MixConfig
from nmt.files.lines import read_lines, split_file
from nmt.translate.models import ModelOptions, open_model
from nmt.translate.offline import translate_lines

log = logging.getLogger("bench.decode_tune")


@dataclass(frozen=True)
class TuneParams:
    """The params sections this bench reads."""

    data: DataConfig  # the mix, whose dev sources make up the val split


def val_segments(mix: MixConfig, tallies: dict[str, dict[str, Any]]) -> list[tuple[str, int, int]]:
    """(label, first line, end) of each source in the val split: the dev sources in the mix's order, then
    the dev share of each train source that has one (nmt.data.mixing writes them so)."""
    counts = [(s.label, tallies[s.label]["written"]) for s in mix.sources if s.role == "dev"]
    counts += [(s.label, tallies[s.label]["to_val"]) for s in mix.sources if s.role == "train" and s.dev_share > 0]
    out, start = [], 0
    for label, n in counts:
        out.append((label, start, start + n))
        start += n
    return out


def spacing(lines: int, at_most: int) -> int:
    """The step that takes at most `at_most` of `lines` lines, evenly spaced (0: all of them)."""
    return max(1, math.ceil(lines / at_most)) if at_most else 1


def parse_setting(spec: str) -> Decoding:
    beam, _, alpha = spec.partition(":")
    try:
        return Decoding(beam_size=int(beam), alpha=float(alpha))
    except ValueError as exc:  # a config check (InvalidValue) is one too
        raise argparse.ArgumentTypeError(f"{spec!r}: expected BEAM:ALPHA, e.g. 5:1.4 ({exc})") from None


def label(d: Decoding) -> str:
    return f"beam {d.beam_size}, alpha {d.alpha:g}"


def score(hypotheses: list[str], references: list[str]) -> dict[str, float]:
    from sacrebleu.metrics import BLEU

    b = BLEU().corpus_score(hypotheses, [references])
    return {"sacrebleu": round(b.score, 2), "length_ratio": round(b.sys_len / max(b.ref_len, 1), 4)}


def tune_direction(model: Path, settings: list[Decoding], dev: dict[str, dict[str, list[str]]],
                   batch_size: int) -> dict[str, Any]:
    """Every setting on every dev source of one direction's model."""
    first = ModelOptions(beam_size=settings[0].beam_size, alpha=settings[0].alpha, batch_size=batch_size, device="cpu")
    loaded = open_model(model, first).translator  # the model read once
    src, tgt = loaded.vocabs.src_lang, loaded.vocabs.tgt_lang
    rows = []
    for decoding in settings:
        translator = replace(loaded, beam_size=decoding.beam_size, alpha=decoding.alpha, max_extra=decoding.max_extra)
        started, per_source = time.perf_counter(), {}
        for name, sides in dev.items():
            per_source[name] = score(list(translate_lines(translator, sides[src])), sides[tgt])  # `nmt translate`'s
        row = {"beam_size": decoding.beam_size, "alpha": decoding.alpha, "sources": per_source,
               "mean_sacrebleu": round(mean(s["sacrebleu"] for s in per_source.values()), 2),
               "seconds": round(time.perf_counter() - started, 1)}
        log.info("%s-%s %s: mean sacreBLEU %.2f (%s)", src, tgt, label(decoding), row["mean_sacrebleu"],
                 ", ".join(f"{k} {v['sacrebleu']:.2f}/{v['length_ratio']:.3f}" for k, v in per_source.items()))
        rows.append(row)
    return {"model": str(model), "direction": f"{src}-{tgt}", "rows": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--params", type=Path, default=Path("general/params.yaml"), help="the params file with the mix")
    p.add_argument("--data", type=Path, required=True,
                   help="the validated corpus with val.<lang> (data/general/validated)")
    p.add_argument("--gate", type=Path, default=None,
                   help="the validate stage's gate report, with each source's counts "
                        "(reports/general/validation/raw.json); a mix only")
    p.add_argument("--models", type=Path, nargs="+", required=True, help="final model files, one per direction")
    p.add_argument("--settings", type=parse_setting, nargs="+", required=True, metavar="BEAM:ALPHA",
                   help="decoding settings to compare")
    p.add_argument("--per-source", type=int, default=300,
                   help="at most this many lines of each dev source decoded, evenly spaced (0: all)")
    p.add_argument("--batch-size", type=int, default=64, help="sentences decoded together")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    p.add_argument("--out", type=Path, default=None, help="results folder (default bench/results)")
    p.add_argument("--name", default="decode_tune", help="the result's name: <out>/<name>.json")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    if args.threads:
        torch.set_num_threads(args.threads)
    data = load_sections(args.params, TuneParams).data
    val = {lang: read_lines(split_file(args.data, "val", lang)) for lang in data.languages}
    if data.mix is None:  # one corpus: its val split is the one dev source
        segments = [(f"{data.corpus} val", 0, len(val[data.languages[0]]))]
    elif args.gate is None:
        p.error(f"--params {args.params}: data.corpus is a mix; --gate names its validate report (raw.json)")
    else:
        try:
            tallies = json.loads(args.gate.read_text(encoding="utf-8"))["stats"]["sources"]
            segments = val_segments(data.mix, tallies)
        except (OSError, ValueError, KeyError) as exc:
            p.error(f"--gate {args.gate}: no per-source counts there ({exc!r}); is it the validate stage's raw.json?")
    dev: dict[str, dict[str, list[str]]] = {name: {} for name, _, _ in segments}
    for lang, lines in val.items():
        if len(lines) != segments[-1][2]:
            p.error(f"{split_file(args.data, 'val', lang)}: {len(lines)} lines, the gate report counts "
                    f"{segments[-1][2]}; re-run the data stages")
        for name, start, end in segments:
            dev[name][lang] = lines[start:end:spacing(end - start, args.per_source)]
    directions = [tune_direction(m, args.settings, dev, args.batch_size) for m in args.models]
    means = {label(d): round(mean(r["mean_sacrebleu"] for run in directions for r in run["rows"]
                                  if (r["beam_size"], r["alpha"]) == (d.beam_size, d.alpha)), 2) for d in args.settings}
    # the written (rounded) means decide, so the result file shows why; a tie: the setting listed first
    best = ranking.best(args.settings, lambda d: means[label(d)])
    log.info("best on dev: %s (mean sacreBLEU %.2f over the directions' sources)", label(best), means[label(best)])
    kwargs = {} if args.out is None else {"out_dir": args.out}
    write_result(args.name, {"params": str(args.params), "per_source": args.per_source,
                             "sources": {n: e - s for n, s, e in segments},
                             "decoded": {n: len(sides[data.languages[0]]) for n, sides in dev.items()},
                             "directions": directions,
                             "means": means,
                             "best": {"beam_size": best.beam_size, "alpha": best.alpha}}, repeats=1, **kwargs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
