"""Decoding speed on the test set: greedy and beam search, with and without the KV cache.

Loads models/model.pt (run `dvc repro train` first) and the first `--sentences` of the tokenized
test split, and decodes them in batches of `--batch-size` six ways: greedy and beam search
(`--beam-size`, `--alpha`), each with our key/value cache and with two uncached baselines:
- "no cache": the whole prefix through the decoder each step, output projection on the
  last position only (The Annotated Transformer's greedy_decode);
- "no cache, all positions": the same, with the projection and softmax over every position
  (pytorch-original-transformer's and bentrevett's decoding loops).

Every variant decodes one untimed warm-up batch first, then the whole subset `--repeats` times;
the variants take turns and each keeps its best time. The cache must not change a single output:
the bench stops with an error naming the variant if an uncached output differs from the cached
one of the same search. The same is then measured on the "long" subset: the sentences whose
cached greedy output has `--long-min` (20) or more symbols (BPE pieces, i.e. decoder steps),
where recomputing the prefix costs most.

    python -m bench.decode_speed [--sentences 300] [--batch-size 64] [--repeats 3]

Results (`bench/results/decode_speed.json`, key `results`):
- `model`, `split`, `threads` (torch intra-op), `batch_size`, `beam_size`, `alpha`, `max_extra`,
  `long_min` (output symbols that make a sentence "long");
- `subsets`: {"all", "long"}, each {sentences, variants, speedups}:
  - `variants`: per variant (`greedy`, `greedy_no_cache`, `greedy_no_cache_all_positions`, `beam`,
    `beam_no_cache`, `beam_no_cache_all_positions`): {label, sentences_per_s (best repeat),
    sentences_per_s_repeats, output_symbols (total over the subset)};
  - `speedups`: a list of {search ("greedy" | "beam"), cached, baseline (variant names), ratio
    (cached sentences/s over baseline sentences/s), outputs_identical (always true: the bench
    fails otherwise)}. A subset with no sentences has empty variants and speedups.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from bench.common.record import RESULTS, write_result
from nmt.decode.backend import beam_search, greedy
from nmt.model import checkpoint
from nmt.model.transformer import Transformer
from nmt.train.batching import Pair, collate, load_pairs

ROOT = Path(__file__).resolve().parents[1]
Decode = Callable[[Tensor], list[list[int]]]
BASELINES = ("no_cache", "no_cache_all_positions")  # variant name suffixes of the uncached searches


class ProjectAll:
    """The model, but `decode` projects every position and keeps the last afterwards."""

    def __init__(self, model: Transformer) -> None:
        self.model = model

    def __getattr__(self, name: str):
        return getattr(self.model, name)

    def decode(self, tgt_in, memory, src_mask, keep=None):
        logits = self.model.decode(tgt_in, memory, src_mask).log_softmax(dim=-1)  # (B, T, V), as the tutorials
        return logits if keep is None else logits[keep]


def decode_all(fn: Decode, pairs: list[Pair], batch_size: int) -> list[list[int]]:
    outs: list[list[int]] = []
    for i in range(0, len(pairs), batch_size):
        chunk = pairs[i:i + batch_size]
        outs += fn(collate(chunk, list(range(len(chunk)))).src)
    return outs


def measure(variants: dict[str, Decode], pairs: list[Pair], batch_size: int, repeats: int) -> dict[str, dict]:
    """Best-of-`repeats` sentences/s of each variant (turn by turn, a warm-up batch before each
    timed pass) and its outputs."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    outputs: dict[str, list[list[int]]] = {}
    for _ in range(repeats):
        for name, fn in variants.items():
            decode_all(fn, pairs[:batch_size], batch_size)  # warm-up, untimed
            start = time.perf_counter()
            out = decode_all(fn, pairs, batch_size)
            times[name].append(len(pairs) / (time.perf_counter() - start))
            if outputs.setdefault(name, out) != out:
                raise SystemExit(f"{name}: outputs changed from one repeat to the next")
    return {name: {"sentences_per_s": max(t), "sentences_per_s_repeats": t, "outputs": outputs[name]}
            for name, t in times.items()}


def compare(measured: dict[str, dict]) -> list[dict[str, Any]]:
    """Cached vs each uncached baseline; exits naming the variant whose outputs differ."""
    rows = []
    for search in ("greedy", "beam"):
        cached = measured[search]
        for suffix in BASELINES:
            base = f"{search}_{suffix}"
            if measured[base]["outputs"] != cached["outputs"]:
                n = sum(a != b for a, b in zip(measured[base]["outputs"], cached["outputs"]))
                raise SystemExit(f"{base}: {n} of {len(cached['outputs'])} outputs differ from {search} with the "
                                 "KV cache; the cache must not change the search")
            rows.append({"search": search, "cached": search, "baseline": base, "outputs_identical": True,
                         "ratio": cached["sentences_per_s"] / measured[base]["sentences_per_s"]})
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, default=ROOT / "models/model.pt", help="model file (models/model.pt)")
    p.add_argument("--tokens", type=Path, default=ROOT / "data/tokens", help="tokenize stage output (data/tokens)")
    p.add_argument("--split", default="test_2016_flickr", help="split to decode (default: test_2016_flickr)")
    p.add_argument("--sentences", type=int, default=300, help="first N sentences of the split (default: 300)")
    p.add_argument("--batch-size", type=int, default=64, help="sentences decoded together (default: 64)")
    p.add_argument("--beam-size", type=int, default=4, help="beam width of the beam variants (default: 4)")
    p.add_argument("--alpha", type=float, default=0.6, help="GNMT length penalty of beam search (default: 0.6)")
    p.add_argument("--max-extra", type=int, default=50, help="output length limit: source length + this")
    p.add_argument("--long-min", type=int, default=20, help="cached greedy output symbols that make a sentence "
                                                           "long (default: 20)")
    p.add_argument("--repeats", type=int, default=3, help="timed passes per variant; the best is kept (default: 3)")
    p.add_argument("--out", type=Path, default=RESULTS, help=f"folder for decode_speed.json (default: {RESULTS})")
    args = p.parse_args()

    state = checkpoint.load(args.model)
    vocabs = checkpoint.vocabs_of(state)
    model = Transformer(checkpoint.model_config_of(state), len(vocabs.src), len(vocabs.tgt))
    model.load_state_dict(state["model"])
    model.eval()
    torch.set_grad_enabled(False)
    pairs = load_pairs(args.tokens, args.split, vocabs)[: args.sentences]

    tutorial = ProjectAll(model)
    K, a, extra = args.beam_size, args.alpha, args.max_extra
    variants: dict[str, tuple[str, Decode]] = {
        "greedy": ("greedy", lambda s: greedy(model, s, extra)),
        "greedy_no_cache": ("greedy, no cache", lambda s: greedy(model, s, extra, use_cache=False)),
        "greedy_no_cache_all_positions": ("greedy, no cache, all positions",
                                          lambda s: greedy(tutorial, s, extra, use_cache=False)),
        "beam": (f"beam {K}", lambda s: beam_search(model, s, K, a, extra)),
        "beam_no_cache": (f"beam {K}, no cache", lambda s: beam_search(model, s, K, a, extra, use_cache=False)),
        "beam_no_cache_all_positions": (f"beam {K}, no cache, all positions",
                                        lambda s: beam_search(tutorial, s, K, a, extra, use_cache=False)),
    }
    fns = {name: fn for name, (_, fn) in variants.items()}
    # the long subset: by the length of what the model outputs (cached greedy), not of the reference
    lengths = [len(o) for o in decode_all(fns["greedy"], pairs, args.batch_size)]
    long_pairs = [pr for pr, n in zip(pairs, lengths) if n >= args.long_min]

    print(f"model {args.model.name}, {args.split}, threads {torch.get_num_threads()}, batch {args.batch_size}, "
          f"beam {K} alpha {a}, best of {args.repeats}")
    subsets: dict[str, dict[str, Any]] = {}
    for key, label, subset in (("all", f"all {len(pairs)} sentences", pairs),
                               ("long", f"{len(long_pairs)} with {args.long_min}+ symbols of greedy output",
                                long_pairs)):
        print(f"\n{label}")
        if not subset:
            subsets[key] = {"sentences": 0, "variants": {}, "speedups": []}
            print("(none)")
            continue
        measured = measure(fns, subset, args.batch_size, args.repeats)
        speedups = compare(measured)
        print(f"{'decoding':<34}{'sentences/s':>12}")
        for name, m in measured.items():
            print(f"{variants[name][0]:<34}{m['sentences_per_s']:>12.1f}")
        for row in speedups:
            print(f"{variants[row['cached']][0]}: cache speed-up vs {variants[row['baseline']][0]}: "
                  f"{row['ratio']:.2f}x (outputs identical)")
        subsets[key] = {"sentences": len(subset), "speedups": speedups, "variants": {
            name: {"label": variants[name][0], "sentences_per_s": m["sentences_per_s"],
                   "sentences_per_s_repeats": m["sentences_per_s_repeats"],
                   "output_symbols": sum(map(len, m["outputs"]))} for name, m in measured.items()}}

    results = {"model": args.model.name, "split": args.split, "threads": torch.get_num_threads(),
               "batch_size": args.batch_size, "beam_size": K, "alpha": a, "max_extra": extra,
               "long_min": args.long_min, "subsets": subsets}
    write_result("decode_speed", results, args.repeats, args.out)


if __name__ == "__main__":
    main()
