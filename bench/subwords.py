"""Our BPE (nmt.text.subword, on spaCy tokens) vs sentencepiece's BPE and unigram models at the
same vocabulary size, on the Multi30k training split: time to learn and to segment, pieces
per sentence (the sequence length training pays for), and <unk> pieces on val. One run, side
by side. Needs `dvc repro tokenize` first and `pip install ".[bench]"` (sentencepiece).

    python bench/subwords.py [--merges 8000]
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nmt.data.vocab import bpe_alphabet  # noqa: E402
from nmt.text.subword import BPE, learn_merges  # noqa: E402
from nmt.text.tokenizer import read_tokenized  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--merges", type=int, default=8000, help="our BPE merges; sentencepiece gets the same vocabulary size")
    p.add_argument("--tokens", type=Path, default=ROOT / "data/tokens")
    args = p.parse_args()
    try:
        import sentencepiece as spm
    except ImportError:
        raise SystemExit('bench/subwords.py needs sentencepiece: pip install ".[bench]"') from None
    train = {lang: [t for t, _ in read_tokenized(args.tokens / f"train.{lang}.tsv")] for lang in ("de", "en")}
    val = {lang: [t for t, _ in read_tokenized(args.tokens / f"val.{lang}.tsv")] for lang in ("de", "en")}
    start = time.perf_counter()
    bpe = BPE(learn_merges(Counter(t for sents in train.values() for s in sents for t in s), args.merges, 2))
    learn = time.perf_counter() - start
    start = time.perf_counter()
    pieces = {lang: [bpe.segment(s) for s in sents] for lang, sents in train.items()}
    segment = time.perf_counter() - start
    words = Counter(t for sents in train.values() for s in sents for t in s)
    known = {p for sents in pieces.values() for s in sents for p in s}
    size = len(known)
    known |= set(bpe_alphabet(words))  # as the vocab stage builds a joint vocabulary
    unk = sum(p not in known for sents in val.values() for s in sents for p in bpe.segment(s, known))
    rows = [("ours BPE", learn, segment, {k: sum(map(len, v)) / len(v) for k, v in pieces.items()}, unk)]
    for kind in ("bpe", "unigram"):
        model = io.BytesIO()
        start = time.perf_counter()
        spm.SentencePieceTrainer.train(sentence_iterator=iter([" ".join(s) for sents in train.values() for s in sents]),
                                       model_writer=model, vocab_size=size, model_type=kind, character_coverage=1.0,
                                       minloglevel=2)
        learn = time.perf_counter() - start
        sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
        start = time.perf_counter()
        ids = {lang: sp.encode([" ".join(s) for s in sents]) for lang, sents in train.items()}
        segment = time.perf_counter() - start
        unk = sum(i == sp.unk_id() for sents in val.values() for s in sp.encode([" ".join(x) for x in sents]) for i in s)
        rows.append((f"sentencepiece {kind}", learn, segment, {k: sum(map(len, v)) / len(v) for k, v in ids.items()}, unk))
    print(f"vocabulary size {size} (ours: {args.merges} merges), Multi30k train, both languages")
    print(f"{'':<22}{'learn s':>9}{'segment s':>11}{'pieces/sent de':>16}{'en':>7}{'val <unk>':>11}")
    for name, learn, segment, per, unk in rows:
        print(f"{name:<22}{learn:>9.1f}{segment:>11.1f}{per['de']:>16.2f}{per['en']:>7.2f}{unk:>11}")


if __name__ == "__main__":
    main()
