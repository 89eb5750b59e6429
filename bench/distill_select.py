"""Which systems' outputs to train on: the targets each selection rule would choose, scored on dev.

The general model's round 2 learns from strong systems' translations (`../shared/data/wmt-systems/`).
Which of them become training targets is measured here, on the lines that have human references
(the WMT23 general-test lines, de->en and en->de, and WMT24 en->de with its two references: the
dev sets of the general mix, never its training lines), not chosen by taste. For each rule of
`nmt.data.consensus.choose` the targets it picks per line are scored against the references
(sacreBLEU and chrF, corpus level, each chosen output a hypothesis of its line):

- `all`: every system's output (what training on all of them teaches, on average);
- `consensus`: the output with the highest mean chrF against the others (a cheap MBR);
- `top_k` (k = 2, 3, 5): the k highest by that score;
- each system alone, for scale (the best system is named but is not a rule: which system is best
  is what the references say, and the training lines have none).

The consensus rules need no reference, so the rule that scores best here can be applied to the
test-suite lines that are trained on. Also counted, on those training lines: how many share a
template (`nmt.data.systems.template`), which `max_per_template` thins.

    python -m bench.distill_select [--data ../shared/data/wmt-systems] [--out bench/results]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from sacrebleu.metrics import BLEU, CHRF

from bench.common.record import RESULTS, write_result
from nmt import ranking
from nmt.config.systems import NO_REFERENCE
from nmt.data.consensus import choose
from nmt.data.systems import template

ROOT = Path(__file__).resolve().parents[1]
SETS = {  # name: (file prefix, target language, reference names)
    "wmt23 de-en": ("generaltest2023.de-en", "en", ["refA"]),
    "wmt23 en-de": ("generaltest2023.en-de", "de", ["refA"]),
    "wmt24 en-de": ("wmttest2024.en-de", "de", ["refA", "refB"]),
}
RULES = (("all", 1), ("consensus", 1), ("top_k", 2), ("top_k", 3), ("top_k", 5))


def read(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def score(hyps: list[str], refs: list[list[str]], lang: str) -> dict[str, float]:
    """Corpus sacreBLEU and chrF of `hyps` against the reference streams `refs`."""
    bleu = BLEU(trg_lang=lang)
    return {"bleu": round(bleu.corpus_score(hyps, refs).score, 2),
            "chrf": round(CHRF().corpus_score(hyps, refs).score, 2), "signature": str(bleu.get_signature())}


def measure_set(folder: Path, prefix: str, lang: str, ref_names: list[str]) -> dict[str, Any]:
    """Every rule's chosen targets and every system alone, scored against the references, on the lines
    that have one; and the template counts of the lines that have none (the training lines)."""
    systems = sorted(p.name[len(f"{prefix}.hyp."):-len(f".{lang}")] for p in folder.glob(f"{prefix}.hyp.*.{lang}"))
    outputs = [read(folder / f"{prefix}.hyp.{name}.{lang}") for name in systems]
    refs = [read(folder / f"{prefix}.ref.{name}.{lang}") for name in ref_names]
    source = read(folder / f"{prefix}.src.{'de' if lang == 'en' else 'en'}")
    has_ref = [line.strip() != NO_REFERENCE for line in refs[0]]
    dev = [i for i, ok in enumerate(has_ref) if ok]
    rules: dict[str, Any] = {}
    for select, k in RULES:
        hyps, streams = [], [[] for _ in refs]
        for i in dev:
            line = [out[i] for out in outputs]
            for j in choose(line, select, k):
                hyps.append(line[j])
                for stream, ref in zip(streams, refs):
                    stream.append(ref[i])
        name = select if select != "top_k" else f"top_{k}"
        rules[name] = {**score(hyps, streams, lang), "targets_per_line": len(hyps) / len(dev)}
    alone = {name: score([out[i] for i in dev], [[r[i] for i in dev] for r in refs], lang)
             for name, out in zip(systems, outputs)}
    train = [source[i] for i, ok in enumerate(has_ref) if not ok]
    templates = Counter(template(line) for line in train)
    return {"systems": systems, "dev_lines": len(dev), "references": ref_names, "rules": rules,
            "systems_alone": alone, "best_system": ranking.best(alone, lambda n: alone[n]["chrf"]),
            "training_lines": len(train), "templates": len(templates),
            "lines_in_repeated_templates": sum(c for c in templates.values() if c > 1),
            "lines_over_template": {m: sum(max(0, c - m) for c in templates.values()) for m in (1, 2, 4)}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "wmt-systems",
                   help="the wmt-systems mirror (default ../shared/data/wmt-systems)")
    p.add_argument("--out", type=Path, default=RESULTS, help="where distill_select.json goes")
    args = p.parse_args(argv)
    if not (args.data / "README.md").is_file():
        raise SystemExit(f"distill_select: no wmt-systems mirror at {args.data}; pass --data")
    results = {}
    for name, (prefix, lang, ref_names) in SETS.items():
        r = measure_set(args.data, prefix, lang, ref_names)
        results[name] = r
        rows = ", ".join(f"{rule} {v['chrf']:.1f}/{v['bleu']:.1f}" for rule, v in r["rules"].items())
        print(f"{name}: {r['dev_lines']} dev lines, chrF/BLEU: {rows}; best system alone {r['best_system']} "
              f"{r['systems_alone'][r['best_system']]['chrf']:.1f}", flush=True)
    for r in results.values():
        r["best_rule"] = ranking.best(r["rules"], lambda k, rules=r["rules"]: rules[k]["chrf"])
    write_result("distill_select", results, repeats=1, out_dir=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
