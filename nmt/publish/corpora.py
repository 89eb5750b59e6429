"""Renderers of the corpus blocks: the language detectors compared (bench/langid.py) and what the
validate stage did to each source of the general mix (reports/general/validation/raw.json)."""

from __future__ import annotations

from nmt.publish.sources import Sources, measured, pct, table

GENERAL_RAW = "general/validation/raw"  # the general configuration's raw-data gate report


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


def general_sources(s: Sources) -> str:
    """Per source of the general mix: pairs in, dropped by each rule, in dev/test sets, out."""
    stats = s.report(GENERAL_RAW)["stats"]
    rows = []
    for label, src in stats["sources"].items():
        dropped = src["dropped"]
        overlap = dropped.get("in a dev or test set", 0)
        repeated = dropped.get("repeated pair", 0)
        rules = {k: v for k, v in dropped.items() if v and k not in ("in a dev or test set", "repeated pair")}
        top = ", ".join(f"{k} {v:,}" for k, v in sorted(rules.items(), key=lambda kv: -kv[1])[:3])
        train = src["role"] == "train"
        share = pct(sum(rules.values()) / max(src["pairs_in"], 1)) if train else "-"
        rows.append([label, src["role"], f"{src['pairs_in']:,}", share, top or "-", f"{repeated:,}",
                     f"{overlap:,}", f"{src['to_val']:,}", f"{src['pairs_out'] if train else src['written']:,}"])
    decon = stats.get("decontamination", {})
    decon_rows = [[name, f"{c['exact']:,}", f"{c['near']:,}"] for name, c in decon.items()]
    return "\n".join([
        table(["source", "role", "pairs in", "dropped by the rules", "largest rules", "repeated", "in a dev/test set",
               "to val", "pairs out"], rows, "llrrlrrrr"),
        "",
        "Training pairs dropped because a side is in a dev or test set, by set (exact after normalization / "
        "near duplicates):",
        "",
        table(["dev or test set", "exact", "near"], decon_rows, "lrr"),
        "",
        f"Source: `reports/{GENERAL_RAW}.json` (the general configuration's validate stage).",
    ])
