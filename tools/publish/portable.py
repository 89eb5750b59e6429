"""Renderers of docs/export.md's blocks on models other toolkits and languages load (issues 75 and 76):
`bench.first_try --vocab-kinds`'s `vocab_kinds.json` and `bench.js_consumer`'s `js_consumer.json`."""

from __future__ import annotations

from tools.publish.sources import Sources, measured, not_yet, table

JS_COMMAND = ("python -m bench.js_consumer --package .cache/bench-js/models/onnx --lines "
              "../shared/data/multi30k-fr-cs/test_2016_flickr.fr.gz --skip 300 --screenshot "
              "bench/results/js_consumer_page.png --label \"the test suite's SentencePiece smoke model, not a shipped "
              "model\"")


KIND_NAMES = {"bpe": "spaCy + BPE", "sentencepiece": "SentencePiece unigram", "sentencepiece-bpe": "SentencePiece BPE"}


def vocab_kinds(s: Sources) -> str:
    """docs/export.md: the vocabularies side by side on val, the same budget and size (bench.first_try)."""
    if not (s.bench / "vocab_kinds.json").is_file():
        return not_yet("vocab_kinds", "python -m bench.first_try --vocab-kinds 1500")
    r = s.result("vocab_kinds")
    rows = r["results"]["rows"]
    body = table(["pair", "vocabulary", "symbols", "updates", "val sacreBLEU", "val chrF", "source symbols / sentence",
                  "training tokens/s"],
                 [[x["pair"], KIND_NAMES[x["kind"]], f"{x['vocab_size']:,}", f"{x['updates']:,}",
                   f"{x['val_sacrebleu']:.2f}", f"{x['val_chrf']:.2f}", f"{x['src_symbols_per_sentence']:.2f}",
                   f"{x['train_tokens_per_s']:,.0f}"] for x in rows], "llrrrrrr")
    best = []
    for pair in dict.fromkeys(x["pair"] for x in rows):
        top = max((x for x in rows if x["pair"] == pair), key=lambda x: (x["val_sacrebleu"], x["val_chrf"]))
        best.append(f"{pair}: {KIND_NAMES[top['kind']]} ({top['val_sacrebleu']:.2f})")
    return "\n".join([body, "", f"Best on val (sacreBLEU, then chrF), {r['results']['decoding']}: "
                      f"{'; '.join(best)}.", "", measured(r, "vocab_kinds")])


def js_consumer(s: Sources) -> str:
    """docs/export.md: the Node consumer beside Python's ONNX package, and the page's paragraph time."""
    if not (s.bench / "js_consumer.json").is_file():
        return not_yet("js_consumer", JS_COMMAND)
    r = s.result("js_consumer")
    res = r["results"]
    m, n, b = res["model"], res["sentences"], res["browser"]
    rows = [[str(x["threads"]), x["graphs"], "greedy" if x["beam_size"] == 1 else f"beam {x['beam_size']}",
             f"{x['python_sentences_per_s']:,.1f}", f"{x['node_sentences_per_s']:,.1f}",
             f"**{x['node_over_python']:.2f}x**", f"{x['node_open_s']:.2f} s", f"{x['identical']} of {n}"]
            for x in res["rows"]]
    return "\n".join([
        f"`{res['package']}` ({res['languages']['src']}-{res['languages']['tgt']}"
        f"{': ' + res['label'] if res.get('label') else ''}; {m['L']} layers of d_model {m['d_model']}, "
        f"{res['vocab_size']} symbols), {n} lines of "
        f"`{res['lines']['file']}` from line {res['lines']['skip'] + 1}, the same intra-op threads for both, "
        "best pass of each:", "",
        table(["threads", "graphs", "search", "Python sentences/s", "Node sentences/s", "Node / Python",
               "Node: open the package", "translations identical"], rows, "rllrrrrr"), "",
        f"In headless Chromium ({b['chromium']}, onnxruntime-web on WebAssembly, one thread, {b['graphs']} graphs, "
        f"the card's beam {res['beam_default']}): the page is ready {b['ready_s']:.2f} s after navigation; a "
        f"paragraph of {b['sentences']} sentences takes {b['first_s']:.2f} s the first time and {b['best_s']:.2f} s "
        f"at best ({b['identical']} of {b['sentences']} translations identical to Python's).", "",
        measured(r, "js_consumer")])
