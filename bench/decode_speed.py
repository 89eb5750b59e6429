"""Decoding speed on the test set: greedy and beam 4, with and without the KV cache.

Loads models/model.pt (run `dvc repro train` first) and the tokenized test split, decodes
it in batches four ways and prints sentences/s side by side with the cache speed-ups.
Also reports the same on the sentences whose outputs have 20+ tokens, where recomputing
the prefix (the reference tutorials' way) hurts most. Two uncached baselines:
- "no cache": the whole prefix through the decoder each step, output projection on the
  last position only (The Annotated Transformer's greedy_decode);
- "no cache, all positions": the same, with the projection and softmax over every position
  (pytorch-original-transformer's and bentrevett's decoding loops).

    python bench/decode_speed.py [--model models/model.pt] [--sentences 300] [--batch-size 64]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nmt.decode.backend import beam_search, greedy  # noqa: E402
from nmt.model import checkpoint  # noqa: E402
from nmt.model.transformer import Transformer  # noqa: E402
from nmt.train.batching import collate, load_pairs  # noqa: E402


class ProjectAll:
    """The model, but `decode` projects every position and keeps the last afterwards."""

    def __init__(self, model: Transformer) -> None:
        self.model = model

    def __getattr__(self, name: str):
        return getattr(self.model, name)

    def decode(self, tgt_in, memory, src_mask, keep=None):
        logits = self.model.decode(tgt_in, memory, src_mask).log_softmax(dim=-1)  # (B, T, V), as the tutorials
        return logits if keep is None else logits[keep]


def timed(fn, pairs, batch_size: int) -> tuple[float, list[list[int]]]:
    outs: list[list[int]] = []
    start = time.perf_counter()
    for i in range(0, len(pairs), batch_size):
        chunk = pairs[i:i + batch_size]
        outs += fn(collate(chunk, list(range(len(chunk)))).src)
    return len(pairs) / (time.perf_counter() - start), outs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, default=ROOT / "models/model.pt")
    p.add_argument("--tokens", type=Path, default=ROOT / "data/tokens")
    p.add_argument("--split", default="test_2016_flickr")
    p.add_argument("--sentences", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=64)
    args = p.parse_args()

    state = checkpoint.load(args.model)
    vocabs = checkpoint.vocabs_of(state)
    model = Transformer(checkpoint.model_config_of(state), len(vocabs.src), len(vocabs.tgt))
    model.load_state_dict(state["model"])
    model.eval()
    pairs = load_pairs(args.tokens, args.split, vocabs)[: args.sentences]
    long_pairs = [pr for pr in pairs if len(pr[1]) - 2 >= 20]

    tutorial = ProjectAll(model)
    variants = {
        "greedy": lambda s: greedy(model, s),
        "greedy, no cache": lambda s: greedy(model, s, use_cache=False),
        "greedy, no cache, all positions": lambda s: greedy(tutorial, s, use_cache=False),
        "beam 4": lambda s: beam_search(model, s, 4),
        "beam 4, no cache": lambda s: beam_search(model, s, 4, use_cache=False),
        "beam 4, no cache, all positions": lambda s: beam_search(tutorial, s, 4, use_cache=False),
    }
    torch.set_grad_enabled(False)
    print(f"model {args.model.name}, {args.split}, threads {torch.get_num_threads()}, batch {args.batch_size}")
    for label, subset in ((f"all {len(pairs)} sentences", pairs), (f"{len(long_pairs)} with 20+ token references", long_pairs)):
        speeds, outputs = {}, {}
        for name, fn in variants.items():
            speeds[name], outputs[name] = timed(fn, subset, args.batch_size)
        print(f"\n{label}")
        print(f"{'decoding':<34}{'sentences/s':>12}")
        for name, speed in speeds.items():
            print(f"{name:<34}{speed:>12.1f}")
        for kind in ("greedy", "beam 4"):
            for base in (", no cache", ", no cache, all positions"):
                same = outputs[kind] == outputs[kind + base]
                print(f"{kind}: cache speed-up vs{base[1:]}: {speeds[kind] / speeds[kind + base]:.2f}x "
                      f"(outputs identical: {same})")


if __name__ == "__main__":
    main()
