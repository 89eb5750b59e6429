"""Renderers of the corpus blocks (docs/data.md): the language detectors compared (bench/langid.py),
the cleaning steps at scale (bench/clean_scale.py), the Moses-escaped sample's proxy training
(bench/moses_proxy.py), the general model's size (bench/pilots.py)."""

from __future__ import annotations

from tools.publish.sources import Sources, measured, not_yet, pct, table


def langid(s: Sources) -> str:
    """Accuracy by length bucket and speed of every detector the bench ran, best overall first."""
    result = s.result("langid")
    detectors = result["results"]["detectors"]
    rows = []
    for name, det in detectors.items():
        for langset, r in det.get("langsets", {}).items():
            if "overall" not in r:
                continue
            b = r["buckets"]
            rows.append((r["overall"]["accuracy"], [
                f"{name} {det.get('version', '')}".strip(), langset, pct(r["overall"]["accuracy"]),
                pct(b["<20"]["accuracy"]), pct(b["20-60"]["accuracy"]), pct(b[">60"]["accuracy"]),
                pct(b["prefix<20"]["accuracy"]), f"{r['sentences_per_s']:,.0f}", f"{det.get('installed_mb', 0):.0f}"]))
    rows.sort(key=lambda row: -row[0])
    n = result["results"]["data"]["sampled"]
    sizes = ", ".join(f"{lang}: {v['<20']} / {v['20-60']} / {v['>60']} / {v['prefix<20']}" for lang, v in n.items())
    return "\n".join([
        table(["detector", "languages", "overall", "< 20 chars", "20-60", "> 60", "unseen prefixes < 20",
               "sentences/s (1 thread)", "MB installed"], [row for _, row in rows], "llrrrrrrr"),
        "",
        f"Sentences per bucket (< 20 / 20-60 / > 60 / prefixes), {sizes}; any answer but the right language "
        "counts as wrong; `europe15` restricts the detector to 15 European languages (nmt.text.langid.LANGUAGES).",
        "",
        measured(result, "langid"),
    ])


def clean_scale(s: Sources) -> str:
    """The validate stage of a mix, with every cleaning and decontamination step, as the corpus grows."""
    result = s.result("clean_scale")
    r = result["results"]
    rows = [[f"{f}x", f"{row['pairs']:,}", f"{row['seconds']:.1f} s", f"{row['pairs_per_s']:,.0f}",
             f"{row['peak_mib']:.0f} MiB", f"{r['memory_ratio_to_first'][f]:.2f}x"] for f, row in r["factors"].items()]
    lines = [table(["corpus", "pairs", "wall time", "pairs/s", "peak memory", "memory vs the first"], rows, "lrrrrr")]
    if "time_exponent" in r:
        lines += ["", f"Time exponent between the two largest factors: {r['time_exponent']:.2f} (1.0 = linear)."]
    return "\n".join([*lines, "", measured(result, "clean_scale")])


def moses_proxy(s: Sources) -> str:
    """The Moses-escaped sample detokenized, as published, or left out: the dev loss of each."""
    result = s.result("moses_proxy")
    r = result["results"]
    rows = [[name, f"{v['dev_loss']:.4f}", f"{v['train_pairs']:,}", f"{v['onmt_pairs_out']:,}", f"{v['updates']:,}"]
            for name, v in r["variants"].items()]
    return "\n".join([
        table(["the sample", f"{r['dev']} loss per token", "training pairs", "from the sample", "updates"], rows,
              "lrrrr"),
        "", f"Lowest dev loss: **{r['best']}**.", "", measured(result, "moses_proxy")])


def pilots(s: Sources) -> str:
    """The general model's size: each candidate's dev loss after the same updates, and whether its
    whole schedule fits the training budget at the rate measured."""
    result = s.result("pilots")
    r = result["results"]
    rows = [[f"{name} ({c['n_layers']} layers, d_model {c['d_model']}, d_ff {c['d_ff']})", f"{c['dev_loss']:.4f}",
             f"{c['seconds_per_update'] * 1000:.0f} ms", f"{c['schedule_minutes']:.0f} min",
             "yes" if c["fits"] else "no"] for name, c in r["candidates"].items()]
    return "\n".join([
        table(["candidate", f"dev loss after {r['updates']:,} updates", "per update",
               f"{r['epochs']} epochs ({r['updates_per_epoch']:,} updates each)", f"fits {r['budget_min']:g} min"],
              rows, "lrrrl"),
        "", f"Chosen: **{r['choice']}** (the lowest dev loss among those that fit; dev: {r['dev']}).", "",
        measured(result, "pilots")])


def distill_select(s: Sources) -> str:
    """Which systems' outputs become training targets: each selection rule's chosen targets scored
    against the human references of the dev lines (bench/distill_select.py)."""
    if not (s.bench / "distill_select.json").is_file():
        return not_yet("distill_select", "python -m bench.distill_select")
    result = s.result("distill_select")
    sets = result["results"]
    rules = list(next(iter(sets.values()))["rules"])
    rows = [[name, f"{r['dev_lines']:,}", *(f"{r['rules'][k]['chrf']:.1f} / {r['rules'][k]['bleu']:.1f}"
                                            for k in rules),
             f"{r['best_system']} {r['systems_alone'][r['best_system']]['chrf']:.1f}", f"**{r['best_rule']}**"]
            for name, r in sets.items()]
    thinned = "; ".join(f"{name}: {r['training_lines']:,} training lines, {r['lines_over_template']['2']:,} over 2 "
                        f"a template" for name, r in sets.items() if r["training_lines"])
    return "\n".join([
        table(["dev lines", "lines", *(f"{k} chrF / BLEU" for k in rules), "best system alone (chrF)", "best rule"],
              rows, "lr" + "r" * len(rules) + "ll"),
        "", f"Test-suite lines (the training side): {thinned}.", "", measured(result, "distill_select")])
