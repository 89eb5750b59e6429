"""Drive the exported graphs with plain ONNX Runtime + numpy, from `model.json` alone (no nmt).

What a consumer in any language does with `models/onnx`: read the card, run the encoder once,
then the decoder step once per position, greedy (K = 1 row per sentence), until every sentence
said </s> or reached its length limit. Input: one JSON list of source ids per line on stdin
(symbols then </s>, as `src.vocab` numbers them); output: one JSON list of target ids per line.

    python examples/onnx_consumer.py models/onnx < ids.jsonl
"""

import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort


def greedy(package: Path, sources: list[list[int]]) -> list[list[int]]:
    card = json.loads((package / "model.json").read_text(encoding="utf-8"))
    graphs, special = card["graphs"]["fp32"], card["special_tokens"]
    pad, bos, eos = special["<pad>"], special["<s>"], special["</s>"]
    encoder = ort.InferenceSession(str(package / graphs["encoder"]["file"]), providers=["CPUExecutionProvider"])
    step = ort.InferenceSession(str(package / graphs["decoder_step"]["file"]), providers=["CPUExecutionProvider"])
    inputs = graphs["decoder_step"]["inputs"]
    cross_names = [o["name"] for o in graphs["encoder"]["outputs"]]
    past_names = [i["name"] for i in inputs if i["name"].startswith("self_")]

    B, S = len(sources), max(len(s) for s in sources)
    src = np.full((B, S), pad, dtype=np.int64)
    for i, s in enumerate(sources):
        src[i, :len(s)] = s
    limit = np.minimum((src != pad).sum(1) + card["decoding"]["max_extra"], card["model"]["max_len"] - 1)
    cross = dict(zip(cross_names, encoder.run(None, {"src": src})))
    H, Dh = card["model"]["H"], card["model"]["Dh"]
    # (rows, H, Dh, t) keys and (rows, H, t, Dh) values, t = 0 before the first step
    past = {n: np.zeros((B, H, Dh, 0) if "_k_" in n else (B, H, 0, Dh), np.float32) for n in past_names}
    alive, tokens = np.arange(B), np.full((B, 1), bos, dtype=np.int64)
    rows, mask = np.arange(B, dtype=np.int64)[:, None], src != pad
    out: list[list[int]] = [[] for _ in range(B)]
    for t in range(int(limit.max())):
        _, ids, *grown = step.run(None, {"tokens": tokens, "rows": rows, "src_mask": mask, **past, **cross})
        past = dict(zip(past_names, grown))
        best = ids[:, 0, 0]  # the first of the 2K candidates is the most probable token
        for sent, tok in zip(alive, best):
            if tok != eos:
                out[sent].append(int(tok))
        keep = np.flatnonzero((best != eos) & (t + 1 < limit[alive]))
        if len(keep) == 0:
            break
        if len(keep) < len(alive):  # finished sentences leave: their source side too
            mask, cross = mask[keep], {n: c[keep] for n, c in cross.items()}
        alive, tokens, rows = alive[keep], best[keep, None].astype(np.int64), keep[:, None].astype(np.int64)
    return out


if __name__ == "__main__":
    ids = [json.loads(line) for line in sys.stdin if line.strip()]
    for hyp in greedy(Path(sys.argv[1]), ids):
        print(json.dumps(hyp))
