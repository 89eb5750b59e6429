"""docs/serving.md's measured table: `bench/serve_load.py`'s `bench/results/serve.json`.

Until the load test has run on this machine there is no source, and the block says so (naming
the command that writes it) instead of failing the stage: the server ships before its first
full load test, and no figure is printed without a source.
"""

from __future__ import annotations

from typing import Any

from tools.publish.sources import Sources, measured, not_yet, pct, table

NAME = "serve"
THRESHOLDS = "the issue's acceptance ratios"


def _ms(value: Any) -> str:
    return "" if value is None else f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def serve_load(s: Sources) -> str:
    if not (s.bench / f"{NAME}.json").is_file():
        return not_yet(NAME, "python -m bench.serve_load")
    r = s.result(NAME)
    res = r["results"]
    off = res["offline"]
    rows = [[st["step"], st["offered"], f"{st['requests_per_s']:.1f}", f"{st['sentences_per_s']:.1f}",
             *(_ms(st["latency_ms"][q]) for q in ("p50", "p95", "p99", "max")),
             ", ".join(f"{k}: {v}" for k, v in st["statuses"].items()),
             "" if st["mean_batch"] is None else f"{st['mean_batch']:.1f}", f"{st['server_cpu']:.2f}",
             f"{st['rss_mib']['max']:.0f}"] for st in res["steps"]]
    c = res["criteria"]
    parity = res["parity"]
    bleu = (f"; sacreBLEU served {parity['sacrebleu_served']:.2f}, offline {parity['sacrebleu_offline']:.2f}"
            if "sacrebleu_served" in parity else "")
    checks = [
        ["32 clients: served / offline batch 32 (random order)", f"**{c['served_32_over_offline_batch32']:.2f}x**",
         f"mean batch {c['mean_batch_32_clients']}"],
        ["1 client: p50 minus offline batch-1 p50", f"{c['p50_1_client_minus_offline_p50_ms']:.1f} ms",
         f"allowed {c['p50_allowed_ms']:.1f} ms (max-wait + 5)"],
        ["1 client: p99 / (1.5 x offline p99 + 15 ms)", f"{c['p99_1_client_over_allowed']:.2f}", "at most 1"],
        ["2x overload: goodput / 32 clients", f"{c['goodput_2x_over_32_clients']:.2f}x",
         f"503s p99 {_ms(c['rejected_p99_ms_2x'])} ms; other 5xx {c['other_5xx_2x']}; "
         f"RSS {c['rss_2x_over_32_clients']:.2f}x"],
        ["SIGTERM under 32 clients", f"{c['sigterm_failed']} failed", f"exit status {c['sigterm_exit_code']}"],
        ["reload under 32 clients", f"{c['reload_failed']} failed",
         f"{pct(c['reload_after_switch_from_new'])} of later requests from the new model"],
        [f"{res['precision']}: served output identical to offline", pct(c["parity_identical"]),
         f"{parity['sentences']} sentences{bleu}"],
    ]
    if "soak_errors" in c:
        checks.append(["soak at 0.7x capacity", f"{c['soak_errors']} errors",
                       f"RSS growth {pct(c['soak_rss_growth'])}"])
    if (s.bench / f"{NAME}_int8.json").is_file():
        p8 = s.result(f"{NAME}_int8")["results"]["parity"]
        checks.append(["int8 (another run): served sacreBLEU against offline",
                       f"{p8['sacrebleu_served'] - p8['sacrebleu_offline']:+.2f}",
                       f"served {p8['sacrebleu_served']:.2f}, offline {p8['sacrebleu_offline']:.2f}; "
                       f"{pct(p8['identical'])} of lines identical (int8 activations are quantized per batch); "
                       f"source: `bench/results/{NAME}_int8.json`"])
    extra = []
    if res.get("variants"):
        extra = ["Other server options, each on a fresh server (steps of the same length):", "", table(
            ["options", "1 client p50 ms", "1 client p99 ms", "32 clients sentences/s", "32 clients p50 ms",
             "mean batch"],
            [[f"`{v['options']}`", _ms(v["1 client"]["latency_ms"]["p50"]), _ms(v["1 client"]["latency_ms"]["p99"]),
              f"{v['32 clients']['sentences_per_s']:.1f}", _ms(v["32 clients"]["latency_ms"]["p50"]),
              "" if v["32 clients"]["mean_batch"] is None else f"{v['32 clients']['mean_batch']:.1f}"]
             for v in res["variants"]], "lrrrrr"), ""]
    return "\n".join([
        f"`{res['model']}` ({res['precision']}, beam {off['beam_size']}), `{res['split']}`, "
        f"{res['sentences']} sentences, "
        f"steps of {res['step_s']:g} s{', smoke run' if res['smoke'] else ''}; server options: "
        f"{'`' + res['serve_options'] + '`' if res['serve_options'] else 'the defaults'}. "
        f"Offline, same package, same run: batch 1 p50 "
        f"{_ms(off['batch1']['p50_ms'])} ms / p99 {_ms(off['batch1']['p99_ms'])} ms, batch 32 in random order "
        f"{off['batch32_random_sentences_per_s']:.1f} sentences/s, batch 64 length-sorted "
        f"{off['batch64_sorted_sentences_per_s']:.1f} sentences/s.", "",
        table(["step", "offered", "requests/s", "sentences/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "statuses",
               "mean batch", "server CPU", "RSS MiB"], rows, "llrrrrrrlrrr"), "",
        f"Against {THRESHOLDS}:", "", table(["check", "measured", "detail"], checks, "lrl"), "", *extra,
        measured(r, NAME)])


def serve_latency(s: Sources) -> str:
    """One client's latency, this checkout's server against an earlier commit's (`bench/serve_latency.py`)."""
    name = "serve_latency"
    if not (s.bench / f"{name}.json").is_file():
        return not_yet(name, "python -m bench.serve_latency --against REV")
    r = s.result(name)
    res = r["results"]
    rows = [[f"round {i + 1}", *(f"{_ms(rd[side]['latency_ms']['p50'])} / {_ms(rd[side]['latency_ms']['p99'])}"
                                 for side in ("before", "now"))] for i, rd in enumerate(res["rounds"])]
    before, now = res["sides"]["before"], res["sides"]["now"]
    rows.append(["**median p50** (spread)", f"**{before['p50_ms_median']:.1f}** ({before['p50_ms_spread']:.1f})",
                 f"**{now['p50_ms_median']:.1f}** ({now['p50_ms_spread']:.1f})"])
    return "\n".join([
        f"`{res['model']}`, `{res['split']}`, one client, single-sentence requests, {res['step_s']:g} s a side "
        f"and round, the sides alternating, each server started afresh; server options: "
        f"{'`' + res['serve_options'] + '`' if res['serve_options'] else 'the defaults'}. p50 / p99 ms:", "",
        table(["", f"before (`{res['against']}`)", "now"], rows, "lrr"), "",
        f"Now minus before: **{res['p50_difference_ms']:+.1f} ms** at p50 (x{res['p50_ratio']:.2f}); the noise "
        f"(the larger spread of one side's round p50s) {res['noise_ms']:.1f} ms: "
        f"{'within' if res['within_noise'] else 'outside'} it.", "",
        measured(r, name).replace(f"(best of {r['repeats']})", f"(the median of {r['repeats']} rounds)")])


def hostile(s: Sources) -> str:
    """The serving review's hostile inputs against a real server (`bench/hostile.py`)."""
    name = "hostile"
    if not (s.bench / f"{name}.json").is_file():
        return not_yet(name, "python -m bench.hostile")
    r = s.result(name)
    res = r["results"]
    rows = [[f"`{i['input']}`", str(i["status"]), f"{i['seconds']:.2f}", f"{i['peak_rss_growth_mib']:.1f}",
             str(i["livez_probes"]), _ms(i["livez_max_ms"]), _ms(i["livez_p99_ms"])] for i in res["inputs"]]
    c = res["criteria"]
    return "\n".join([
        "One request per input, one after another, `--api-keys` on; /livez asked every 20 ms meanwhile"
        f"{' (smoke run)' if res['smoke'] else ''}:", "",
        table(["input", "status", "seconds", "peak RSS growth MiB", "/livez probes", "/livez max ms",
               "/livez p99 ms"], rows, "lrrrrrr"), "",
        f"Every answer a 2xx or a 4xx, none a 500 or none at all: {'yes' if c['no_error'] else '**no**'}; "
        f"/livez's slowest answer over all inputs {_ms(c['livez_max_ms'])} ms (under 100 wanted).", "",
        measured(r, name)])


def serve_mixed(s: Sources) -> str:
    """Both directions in one server under mixed traffic, and one server per direction beside it."""
    name = "serve_mixed"
    if not (s.bench / f"{name}.json").is_file():
        return not_yet(name, "python -m bench.serve_mixed")
    r = s.result(name)
    res, c = r["results"], r["results"]["criteria"]
    off = ", ".join(f"{d} {o['batch32_random_sentences_per_s']:.1f} sentences/s (beam {o['beam_size']})"
                    for d, o in res["offline"].items())
    separate = {st["step"]: st for st in res["separate"]}
    rows = []
    for st in res["shared"]:
        other = separate.get(st["step"])
        rows.append([st["step"], f"{st['sentences_per_s']:.1f}", _ms(st["latency_ms"]["p50"]),
                     _ms(st["latency_ms"]["p99"]), ", ".join(f"{k}: {v}" for k, v in st["statuses"].items()),
                     "" if st["mean_batch"] is None else f"{st['mean_batch']:.1f}",
                     "" if other is None else f"{other['sentences_per_s']:.1f}",
                     "" if other is None else _ms(other["latency_ms"]["p50"]),
                     "" if other is None else _ms(other["latency_ms"]["p99"])])
    checks = [[f"32 clients, {mix}: served / offline rate of the mix", f"**{c[f'served_32_over_offline_{k}']:.2f}x**",
               f"shared / separate {c[f'shared_over_separate_32_{k}']:.2f}x; 1 client p50 shared - separate "
               f"{c[f'p50_1_client_shared_minus_separate_ms_{k}']:+.1f} ms"]
              for mix, k in (("half and half", "half_and_half"), ("90/10", "90_10"))]
    checks += [["32 clients, half the requests `auto`: / explicit source", f"{c['auto_over_explicit_32']:.2f}x",
                f"{c['auto_non_200']} answers not 200"],
               ["2x overload, half and half: goodput / 32 clients", f"{c['goodput_2x_over_32_clients']:.2f}x",
                f"other 5xx {c['other_5xx_2x']}"],
               ["reload of both packages under 32 clients", f"{c['reload_failed']} failed",
                f"{pct(c['reload_after_switch_from_new'])} of later requests from the new models"],
               [f"{res['precision']}: served output identical to offline, both directions", pct(c["parity_identical"]),
                f"{res['parity']['sentences']} sentences"]]
    return "\n".join([
        f"{', '.join(f'`{p}`' for p in res['models'].values())} ({res['precision']}), `{res['split']}`, steps of "
        f"{res['step_s']:g} s{', smoke run' if res['smoke'] else ''}. Offline, each package alone, same run: {off}. "
        f"Shared: one server with both packages (one queue, a batch is one direction's; options: "
        f"{'`' + res['serve_options'] + '`' if res.get('serve_options') else 'the defaults'}). "
        f"Separate: one server per "
        f"direction with {res['separate_threads']} thread(s) each, each request sent to its direction's server.", "",
        table(["step", "shared sentences/s", "p50 ms", "p99 ms", "statuses", "mean batch", "separate sentences/s",
               "separate p50 ms", "separate p99 ms"], rows, "lrrrlrrrr"), "",
        f"Against {THRESHOLDS}:", "", table(["check", "measured", "detail"], checks, "lrl"), "", measured(r, name)])


def confidence(s: Sources) -> str:
    """How the per-translation confidence relates to sentence-level chrF on a dev set."""
    name = "confidence"
    if not (s.bench / f"{name}.json").is_file():
        return not_yet(name, "python -m bench.confidence")
    r = s.result(name)
    parts = []
    for d in r["results"]["directions"]:
        parts += [f"`{d['package']}` ({d['direction']}), every {d['every']}th line of `{d['split']}` "
                  f"({d['sentences']} sentences): Spearman {d['spearman']:.2f}, Pearson {d['pearson']:.2f}; mean "
                  f"confidence {d['mean_confidence']:.2f}, mean sentence chrF {d['mean_chrf']:.1f}.", "",
                  table(["confidence", "sentences", "mean chrF"],
                        [[f"{b['from']:.2f}-{b['to']:.2f} (quintile {i + 1})", b["sentences"], f"{b['mean_chrf']:.1f}"]
                         for i, b in enumerate(d["quintiles"])]
                        + [[f"{b['from']:.1f}-{b['to']:.1f}", b["sentences"], f"{b['mean_chrf']:.1f}"]
                           for b in d["bands"]], "lrr"), ""]
    return "\n".join([*parts, measured(r, name)])
