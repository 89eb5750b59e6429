"""docs/lifecycle.md's records from real runs: the last promotion decision of the default
pipeline's model (`reports/promotion/nmt-de-en.json`, written by flows/registry.py for every
decision) and the last drift check (`reports/drift/latest.json`, written by flows/drift.py).

Both are written by the Prefect flows, not by a DVC stage, and committed as the other results
are. Until one has been written and committed, its block says which command writes it instead of
failing the stage (`not_yet`), and no figure is printed without a source.
"""

from __future__ import annotations

from typing import Any

from tools.publish.sources import Sources, not_yet, pct, table

PROMOTION = "promotion/nmt-de-en"  # dvc.yaml's model (its first artifact); reports/promotion/<artifact>.json
DRIFT = "drift/latest"  # the last drift check's report


def _interval(difference: float, low: float, high: float) -> str:
    return f"{difference:+.2f} [{low:+.2f}, {high:+.2f}]"


def promotion_record(s: Sources) -> str:
    source = f"reports/{PROMOTION}.json"
    if not (s.reports / f"{PROMOTION}.json").is_file():
        return not_yet("promotion-record", "python -m flows.registry promote", source)  # or a pipeline run
    r: dict[str, Any] = s.report(PROMOTION)
    champion = f"the champion {r['champion_version']}" if r.get("champion_version") else "no champion"
    verdict = "promoted" if r["promoted"] else "not promoted"
    head = (f"`{r['artifact']}` {r['version']} (commit `{str(r['commit'])[:8]}`) against {champion} at "
            f"`{r['stage']}`: **{verdict}** ({r['rule']} rule). Reason: {r['reason']}.")
    e = r.get("evidence")
    if e is None:
        scores = r.get("scores") or {}
        old, new = scores.get("champion") or {}, scores.get("challenger") or {}
        rows = [[name, "" if name not in old else f"{old[name]['sacrebleu']:.2f}", f"{m['sacrebleu']:.2f}"]
                for name, m in new.items()]
        body = table(["test set", "champion sacreBLEU", "challenger sacreBLEU"], rows, "lrr") if rows else \
            "No test-set scores were compared."
        return "\n".join([head, "", body, "", f"Source: `{source}`."])
    rows = [[x["test_set"], x["sentences"], f"{x['champion_bleu']:.2f}", f"{x['challenger_bleu']:.2f}",
             _interval(x["difference"], x["low"], x["high"]), f"{x['p_value']:.4f}", f"{x['holm_p']:.4f}",
             f"{x['champion_chrf']:.2f}", f"{x['challenger_chrf']:.2f}", x["verdict"]] for x in e["sets"]]
    return "\n".join([
        head, "",
        table(["test set", "sentences", "champion BLEU", "challenger BLEU", "difference [95% interval]", "p",
               "Holm p", "champion chrF", "challenger chrF", "verdict"], rows, "lrrrrrrrrl"), "",
        f"Speed: champion {e['champion_sps']:.4g}, challenger {e['challenger_sps']:.4g} sentences/s, ratio "
        f"{e['speed_ratio']:.3f} (at least {e['min_speed_ratio']:g} promoted). Paired bootstrap, {e['resamples']} "
        f"resamples, seed {e['seed']}, Holm at alpha {e['alpha']:g}; BLEU `{e['bleu_signature']}`.", "",
        f"Source: `{source}` (flows/registry.py; its Markdown beside it)."])


def drift_report(s: Sources) -> str:
    source = f"reports/{DRIFT}.json"
    if not (s.reports / f"{DRIFT}.json").is_file():
        return not_yet("drift-report", "python -m flows.drift --stats-dir DIR", source)
    r: dict[str, Any] = s.report(DRIFT)
    rows = []
    for d in r["directions"]:
        if not d["aggregates"]:
            rows.append([d["direction"], "-", d["sentences"], "-", "-", "-", d["status"]])
        for a in d["aggregates"]:
            shift = "-"
            if a["psi"] is not None and a["buckets"]:
                moved = [(abs(o - e), o + e) for o, e in zip(a["shares"], a["expected"])]  # ties: the fuller bucket
                i = moved.index(max(moved))
                shift = f"`{a['buckets'][i]}` {pct(a['expected'][i])} -> {pct(a['shares'][i])}"
            rows.append([d["direction"], a["name"], a["observed"], "-" if a["psi"] is None else f"{a['psi']:.3f}",
                         f"{a['threshold']:g}", "**drift**" if a["drifted"] else a["status"], shift])
    retrain = f" Retraining: {r['retrain']['message']}." if r.get("retrain") else ""
    return "\n".join([
        f"Window {r['start']} to {r['end']} ({r['snapshots']} snapshots): **{r['status']}**.{retrain}", "",
        table(["direction", "aggregate", "traffic", "PSI", "threshold", "verdict",
               "largest shift (profile -> traffic)"], rows, "llrrrll"), "",
        f"Source: `{source}` (flows/drift.py; its Markdown beside it)."])
