"""Generated blocks from the bench results (`bench/results/*.json`, written by `make bench`)."""

from __future__ import annotations

from tools.publish.sources import Sources, measured, not_yet, pct, table

ENGINE = {"onnx": "ONNX package", "ct2": "CTranslate2"}


def decode_peers(s: Sources) -> str:
    """docs/benchmarks.md: every cell of bench/decode_peers.py."""
    r = s.result("decode_peers")
    res = r["results"]
    parts = [f"All {res['sentences']} `{res['split']}` sentences, batches of {res['batch']}, sentences/s; "
             f"timed: ours {res['timed']['ours']}; CTranslate2 {res['timed']['ctranslate2']}."]
    for mode in res["modes"]:
        torch = mode["torch"]
        parts.append(f"\n**{mode['label']}** (torch, 2 threads, the reference: {torch['sentences_per_s']:.0f} "
                     f"sentences/s, sacreBLEU {torch['sacrebleu']:.2f})\n")
        rows = []
        for row in mode["rows"]:
            cells = row["cells"]
            best = cells[row["best_layout"]]
            rows.append([f"{ENGINE[row['engine']]} {row['precision']}",
                         *(f"{cells[layout]['sentences_per_s']:.0f}" + ("" if cells[layout]["ok"] else " (failed)")
                           for layout in res["layouts"]),
                         f"**{row['best_sentences_per_s']:.0f}**", f"{best['sacrebleu']:.2f}",
                         pct(best["identical_to_torch"])])
        parts.append(table(["engine", *res["layouts"], "best", "sacreBLEU", "lines identical to torch"], rows,
                           "l" + "r" * (len(res["layouts"]) + 3)))
        parts.append("\n" + "; ".join(
            f"{precision}: ours / CTranslate2, best against best **{q['best']:.2f}x**, "
            f"at 1 thread {q['one_thread']:.2f}x"
            for precision, q in mode["ratios"].items()) + ".")
    for probe in res.get("ct2_backend_probe", []):
        parts.append(f"\nCTranslate2 {probe['precision']}, {probe['layout']}, beam 4, with `{probe['env']}` (Intel MKL "
                     f"instead of its default backend on this CPU): {probe['sentences_per_s']:.0f} sentences/s against "
                     f"{probe['default_sentences_per_s']:.0f} with the default.")
    parts.append("\n" + measured(r, "decode_peers"))
    return "\n".join(parts)


def decode_peers_summary(s: Sources) -> str:
    """README: the ratios of the decode peers bench, best layout against best layout."""
    r = s.result("decode_peers")
    rows = []
    for mode in r["results"]["modes"]:
        best = {(row["engine"], row["precision"]): row for row in mode["rows"]}
        for precision, q in mode["ratios"].items():
            ours, peer = best["onnx", precision], best["ct2", precision]
            rows.append([mode["label"], precision, f"{ours['best_sentences_per_s']:.0f} ({ours['best_layout']})",
                         f"{peer['best_sentences_per_s']:.0f} ({peer['best_layout']})", f"**{q['best']:.2f}x**",
                         f"{q['one_thread']:.2f}x"])
    ratios = [q["best"] for mode in r["results"]["modes"] for q in mode["ratios"].values()]
    verdict = (f"Best against best, the ONNX package decodes at {min(ratios):.2f}x to {max(ratios):.2f}x "
               f"CTranslate2's speed" + ("; CTranslate2 is ahead in every cell." if max(ratios) < 1 else "."))
    return "\n".join([table(["decoding", "precision", "ONNX package, sentences/s (best layout)",
                             "CTranslate2 (best layout)", "ours / CTranslate2", "at 1 thread"], rows, "llrrrr"),
                      "", verdict + " Ours is timed text to text (tokenization included), CTranslate2 on source "
                      "pieces prepared beforehand.", "", measured(r, "decode_peers") + " Every layout and check: "
                      "[docs/benchmarks.md](docs/benchmarks.md#decoding-onnx-runtime-and-ctranslate2)."])


def tokenize_cache(s: Sources) -> str:
    """docs/benchmarks.md: cold against warm tokenization of the whole corpus."""
    r = s.result("tokenize_cache")
    res = r["results"]
    return "\n".join([
        f"{res['corpus']}, {len(res['files'])} files, {res['sentences']} sentences, the whole tokenize stage as "
        f"dvc.yaml runs it (its gate and imports included): cold (spaCy import and tokenization) "
        f"{res['cold_s']:.2f} s, warm (every shard from the cache, {res['warm_hits']} shards, "
        f"{'byte-identical to cold' if res['identical'] else 'NOT identical to cold'}) {res['warm_s']:.3f} s: "
        f"**{res['ratio']:.0f}x**.", "", measured(r, "tokenize_cache")])


MODEL = {"ours": "ours", "straightforward": "straightforward (the seed-style step)",
         "torch_nn_transformer": "`torch.nn.Transformer`"}


def train_throughput(s: Sources) -> str:
    """docs/benchmarks.md: the training step against its peers, like for like and as shipped."""
    r = s.result("train_throughput")
    res = r["results"]
    m = res["model"]
    agreement = res["agreement"]
    peers = [k for k in agreement if k not in ("tolerance", "target_tokens", "ours")]
    rows = [[MODEL[v["model"]], v["precision"], f"{v['tokens_per_s']:.0f}", f"{v['peak_mib']:.0f}"]
            for v in res["variants"].values()]
    comparisons = [[c["kind"], f"ours {res['variants'][c['ours']]['precision']}",
                    f"{MODEL[res['variants'][c['peer']]['model']]} {res['variants'][c['peer']]['precision']}",
                    f"**{c['ratio']:.2f}x**"] for c in res["comparisons"]]
    return "\n".join([
        f"Model N={m['n_layers']}, d_model={m['d_model']}, h={m['n_heads']}, d_ff={m['d_ff']}, "
        f"dropout {m['dropout']:g}, attention dropout {m['attn_dropout']:g} (all three), "
        f"{res['steps']} timed updates of up to {res['max_tokens']} "
        f"tokens after {res['warmup']} untimed, on {res['device']} with {res['threads']} threads; "
        f"`train.precision: {res['train_precision']}` trains in {res['shipped_precision']} here.", "",
        table(["model", "precision", "target tokens/s", "peak MiB"], rows, "llrr"), "",
        table(["comparison", "ours", "peer", "ours / peer"], comparisons, "lllr"), "",
        "Agreement check before timing (our weights copied into each peer, fp32, dropout off, one batch of "
        f"{agreement['target_tokens']} target tokens; tolerance {agreement['tolerance']:g} relative): "
        + "; ".join(f"{MODEL[p]}: loss per token {agreement[p]['loss_per_token_rel_diff']:.1e}, gradient norm "
                    f"{agreement[p]['grad_norm_rel_diff']:.1e} apart" for p in peers) + ".",
        "", measured(r, "train_throughput")])


def decode_speed(s: Sources) -> str:
    """docs/benchmarks.md: the key/value cache against decoding without one."""
    r = s.result("decode_speed")
    res = r["results"]
    labels = {}
    rows = []
    for subset in res["subsets"].values():
        labels.update({k: v["label"] for k, v in subset["variants"].items()})
    for name, subset in res["subsets"].items():
        what = (f"all {subset['sentences']} sentences" if name == "all" else
                f"the {subset['sentences']} with {res['long_min']}+ output pieces")
        for sp in subset["speedups"]:
            rows.append([what, labels[sp["cached"]], labels[sp["baseline"]], f"**{sp['ratio']:.1f}x**",
                         "yes" if sp["outputs_identical"] else "NO"])
    return "\n".join([
        f"`{res['split']}`, batches of {res['batch_size']}, beam {res['beam_size']} with length penalty "
        f"{res['alpha']:g}, {res['threads']} threads:", "",
        table(["sentences", "with the cache", "against", "speed-up", "identical outputs"], rows, "lllrl"), "",
        measured(r, "decode_speed")])


def subwords(s: Sources) -> str:
    """docs/benchmarks.md: our BPE against sentencepiece at the same vocabulary size."""
    r = s.result("subwords")
    res = r["results"]
    rows = [[m["label"], m["vocab_size"], f"{m['learn_s']:.2f}", f"{m['segment_s']:.2f}",
             f"{m['pieces_per_sentence']['de']:.2f}", f"{m['pieces_per_sentence']['en']:.2f}", m["val_unk"]]
            for m in res["methods"].values()]
    c = res["ours_composition"]
    return "\n".join([
        f"Multi30k train, both languages, {res['merges']} merges for ours (params.yaml), every model at "
        f"{res['vocab_size']} symbols (ours: {c['pieces']} pieces, {c['alphabet']} alphabet symbols, {c['specials']} "
        f"specials), sentencepiece with {res['threads']} thread:", "",
        table(["subwords", "vocabulary", "learn s", "segment s", "pieces per sentence de", "en", "`<unk>` on val"],
              rows, "lrrrrrr"), "", measured(r, "subwords")])


def train_throughput_summary(s: Sources) -> str:
    """README: the training step against the seed-style one, like for like and as shipped."""
    r = s.result("train_throughput")
    res = r["results"]
    rows = [[c["kind"], f"ours {res['variants'][c['ours']]['precision']}",
             f"{MODEL[res['variants'][c['peer']]['model']]} {res['variants'][c['peer']]['precision']}",
             f"**{c['ratio']:.2f}x**"] for c in res["comparisons"] if c["peer"].startswith("straightforward")]
    return "\n".join([table(["comparison", "ours", "peer", "target tokens/s, ours / peer"], rows, "lllr"), "",
                      measured(r, "train_throughput") + " With `torch.nn.Transformer` too: "
                      "[docs/benchmarks.md](docs/benchmarks.md#training-step)."])


def scale(s: Sources) -> str:
    """docs/benchmarks.md: each data stage and the train stage's start-up against the corpus size."""
    r = s.result("scale")
    res = r["results"]
    factors = [str(f) for f in res["factors"]]
    header = ["stage", *(f"{f}x ({res['pairs'][f]} pairs)" for f in factors)]
    rows = [[stage, *(f"{cells[f]['seconds']:.1f} s, {cells[f]['peak_mib']:.0f} MiB" for f in factors)]
            for stage, cells in res["stages"].items()]
    parts = [f"Wall time and peak memory of the stage's whole process tree (workers included); train: start-up "
             f"and {res['updates']} updates.", "", table(header, rows, "l" + "r" * len(factors))]
    if "growth" in res:
        g = res["growth"]
        parts += ["", f"From {g['from']}x to {g['to']}x: " + "; ".join(
            f"{stage} time grows with exponent {v['time_exponent']:.2f}, memory x{v['memory_ratio']:.2f}"
            for stage, v in g["stages"].items()) + " (exponent 1: linear; memory x1: flat)."]
    first, last = factors[0], factors[-1]
    parts += ["", f"Peak memory at {last}x against {first}x: " + "; ".join(
        f"{stage} x{cells[last]['peak_mib'] / cells[first]['peak_mib']:.2f}" for stage, cells in res["stages"].items())
        + "."]
    data_stages = [st for st in ("validate", "tokenize", "vocab", "binarize") if st in res["stages"]]
    if data_stages:
        total = sum(res["stages"][st][last]["seconds"] for st in data_stages)
        peak = max(res["stages"][st][last]["peak_mib"] for st in data_stages + ["train"] if st in res["stages"])
        parts += ["", f"At {last}x, raw corpus to binarised training set ({', '.join(data_stages)}): "
                      f"{total / 60:.1f} min; the largest peak memory of any stage, train included, "
                      f"{peak / 1024:.2f} GiB."]
    if "first_update_s" in res:
        parts += ["", "The train stage run to its first update and stopped (start to exit, its validation and model "
                      "file included): " + "; ".join(f"{f}x {v:.1f} s" for f, v in res["first_update_s"].items()) + "."]
    if "resume_first_update_s" in res:
        parts += ["", "The same run resumed from the checkpoint it left, to its next update and stopped: " + "; ".join(
            f"{f}x {v:.1f} s" for f, v in res["resume_first_update_s"].items()) + "."]
    if "tokens_per_s" in res:
        tps = res["tokens_per_s"]
        base = tps[first]["tokens_per_s"]
        parts += ["", "Training throughput, best of the runs of the train stage: " + "; ".join(
            f"{f}x {v['tokens_per_s']:.0f} tokens/s ({len(v['runs'])} runs of {v['updates']} updates; "
            f"x{v['tokens_per_s'] / base:.2f} of {first}x)" for f, v in tps.items()) + "."]
    for f, w in res.get("workers", {}).items():
        parts += ["", f"Every core against one worker at {f}x: " + "; ".join(
            f"{stage} {v['one_worker_s']:.1f} s with 1 worker, {v['default_s']:.1f} s with {v['cores']}"
            + (f" (cold, best of {v['repeats']} each)" if "repeats" in v else "") + ": "
            f"x{v['speedup']:.2f}, files {'identical' if v['identical'] else 'different'}" for stage, v in w.items())
            + "."]
    for f, b in res.get("bpe_learners", {}).items():
        line = (f"BPE learning at {f}x on the same word counts ({b['word_types']} word types, {b['tokens']} tokens; "
                f"counting them {b['counting_s']:.1f} s): ours {b['ours']['merges']} merges in "
                f"{b['ours']['seconds']:.1f} s")
        t = b.get("tokenizers")
        line += (f"; tokenizers {t['version']} BpeTrainer {t['merges']} pieces beyond the alphabet in "
                 f"{t['seconds']:.1f} s (ours x{b['ratio_ours_to_tokenizers']:.2f} its time)." if t else
                 "; tokenizers not installed.")
        parts += ["", line]
    return "\n".join(parts + ["", measured(r, "scale")])


def repro_compare(s: Sources) -> str:
    """docs/benchmarks.md: `make repro`'s stages up to training, now against the commit before binarize."""
    r = s.result("repro_compare")
    res = r["results"]
    before, now = res["sides"]["before"], res["sides"]["now"]
    stages = list(dict.fromkeys([*now["stages"], *before["stages"]]))
    cell = lambda side, st: f"{side['stages'][st]:.1f}" if st in side["stages"] else "-"  # noqa: E731
    rows = [[f"`{st}`" + (f" ({res['updates']} updates)" if st == "train" else ""), cell(before, st), cell(now, st)]
            for st in stages]
    rows += [["**download to train**", f"**{before['measured_s']:.1f}**", f"**{now['measured_s']:.1f}**"],
             ["train stage cut to 1 update", f"{before['train_1_update_s']:.1f}", f"{now['train_1_update_s']:.1f}"],
             ["seconds per update", f"{before['per_update_s']:.3f}", f"{now['per_update_s']:.3f}"],
             ["training tokens/s", f"{before['tokens_per_s']:.0f}", f"{now['tokens_per_s']:.0f}"],
             [f"estimate with {res['full_updates']} updates (a full run)", f"{before['full_estimate_s'] / 60:.1f} min",
              f"{now['full_estimate_s'] / 60:.1f} min"]]
    return "\n".join([
        "Multi30k, every stage from `download` to `train` of each checkout's own `dvc.yaml`, "
        "seconds (best of the runs; the sides alternate):", "",
        table(["stage", f"before binarize ({res['against']})", "now"], rows, "lrr"), "",
        f"Now / before: x{res['ratio_measured']:.2f} as measured, training tokens/s x{res['ratio_tokens_per_s']:.2f}, "
        f"x{res['ratio_full_estimate']:.2f} for a full-length run (the stages after train did not change).", "",
        measured(r, "repro_compare")])


LEVER_NAMES = {"no-skip-layer-norm-fusion": "ONNX Runtime's SkipLayerNormFusion left out on the CPU"}
MODE_LABELS = {"greedy": "greedy", "beam4": "beam 4", "shipped": "beam 16 / 2.2 (shipped)"}


def decode_levers(s: Sources) -> str:
    """README and docs/benchmarks.md: what each kept change to the package's decoding bought, at 1 thread."""
    r = s.result("decode_levers")
    res = r["results"]
    rows = [[LEVER_NAMES.get(lever, lever), MODE_LABELS.get(row["mode"], row["mode"]), row["precision"],
             f"{row['without']:.0f}", f"{row['with']:.0f}", f"**x{row['speedup']:.2f}**",
             "same" if row["same_output"] else "differs (int8: within its gate)"]
            for lever, lever_rows in res["levers"].items() for row in lever_rows]
    return "\n".join([
        f"The ONNX package at 1 thread, all {res['sentences']} `test_2016_flickr` sentences, sentences/s without and "
        "with each kept change (each run in a process of its own, alternating):", "",
        table(["change", "decoding", "precision", "without", "with", "speed-up", "output"], rows, "lllrrrl"), "",
        measured(r, "decode_levers")])


def first_try(s: Sources) -> str:
    """docs/pairs.md and docs/training.md: the first tries, stage by stage, and `nmt adapt` on the model."""
    if not (s.bench / "first_try.json").is_file():
        return not_yet("first_try", "python -m bench.first_try")
    r = s.result("first_try")
    pair, adapt = r["results"]["pair"], r["results"]["adapt"]
    rows = ["| step | seconds |", "| --- | ---: |"]
    rows += [f"| {name} | {sec:.0f} |" for name, sec in pair["stages_s"].items()]
    rows += [f"| **the pair, {pair['direction']}** | **{pair['total_s']:.0f}** ({pair['total_s'] / 60:.1f} min) |",
             f"| `nmt adapt` on its model, all ten steps | {adapt['total_s']:.0f} ({adapt['total_s'] / 60:.1f} min) |"]
    sets = ", ".join(f"{x['set']} {x['parent_sacrebleu']:.2f} -> {x['finetuned_sacrebleu']:.2f}" for x in adapt["sets"])
    return "\n".join(rows + [
        "", f"The pair ({pair['config']}): {pair['updates']:,} updates, sacreBLEU {pair['test_2016_flickr']:.2f} on "
        f"test_2016_flickr. `nmt {adapt['command']}` on "
        f"{adapt['data']}: {adapt['updates']} updates in {adapt['train_s']:.0f} s of training, compare gate "
        f"{'passed' if adapt['passed'] else 'FAILED'}; sacreBLEU parent -> fine-tuned: {sets}.",
        "", measured(r, "first_try")])
