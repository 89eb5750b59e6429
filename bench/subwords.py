"""Our BPE (nmt.text.subword, on spaCy tokens) vs sentencepiece's BPE and unigram models at the
same final vocabulary size, on the Multi30k training split: time to learn and to segment, pieces
per sentence (the sequence length training pays for), and <unk> pieces on val.

Ours is built by the vocab stage's own function (`nmt.data.vocab.build_vocabularies`) with the
params.yaml `vocab` section (`--merges` overrides vocab.bpe_merges), as one joint vocabulary:
the pieces the merges produce on train, plus the whole alphabet (every character, as a token
start and as a continuation), plus the four specials <pad> <unk> <s> </s>. Its final size is
therefore more than the merge count. sentencepiece is trained on the same spaCy tokens (joined
by spaces, both languages) to exactly that final size: its `vocab_size` counts its specials,
and it gets the same four (<unk> <s> </s> and a <pad>, `pad_id=3`), so both embedding tables
have the same rows and the same number of non-special symbols. Both sizes are printed.

"learn" is the time to go from tokens to a finished vocabulary: for ours, build_vocabularies
(reading the two train token files, learning the merges, segmenting train, counting); for
sentencepiece, its trainer. "segment" is tokens -> ids for the whole train split, both
languages: ours with a fresh BPE (its per-word cache empty) and the vocabulary, as the train
stage numericalises; sentencepiece's `encode` of the space-joined tokens. sentencepiece runs
with `--threads` threads (default 1; ours is single-threaded Python). Each time is the best of
`--repeats` runs. Needs `dvc repro tokenize` first and `pip install ".[bench]"` (sentencepiece).

    python -m bench.subwords [--merges N] [--repeats 3]

Results (`bench/results/subwords.json`, key `results`):
- `merges`: our BPE merges learned; `merges_requested`: params.yaml vocab.bpe_merges unless --merges
  (fewer are learned when no pair is seen min_freq times); `min_freq`;
  `threads`: sentencepiece's threads; `train_sentences`, `val_sentences`: per language;
- `vocab_size`: the final size all three get, specials included; `specials`: 4;
- `ours_composition`: {pieces (seen when segmenting train), alphabet (alphabet symbols added
  beyond those), specials}: how ours' final size comes about;
- `methods`: per method (`ours_bpe`, `sentencepiece_bpe`, `sentencepiece_unigram`): {label,
  vocab_size (as built), learn_s (best), learn_s_repeats, segment_s (best), segment_s_repeats,
  pieces_per_sentence: {lang: mean ids per train sentence}, val_pieces, val_unk (count of <unk>
  ids on val, both languages), val_unk_rate}.
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common.record import RESULTS, write_result
from nmt.config.loader import load_sections
from nmt.data.vocab import VocabParams, build_vocabularies
from nmt.files.lines import split_file
from nmt.text.subword import BPE
from nmt.text.tokenizer import SUFFIX, read_tokenized
from nmt.text.vocab import SPECIALS, UNK_ID, Vocabulary
from nmt.text.vocabularies import Vocabularies

ROOT = Path(__file__).resolve().parents[1]
Sentences = dict[str, list[list[str]]]  # language -> token lists


def best_of(repeats: int, fn: Callable[[], Any]) -> tuple[list[float], Any]:
    """Seconds of each of `repeats` calls of `fn`, and the last call's result."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return times, out


def read_split(tokens: Path, split: str, langs: tuple[str, str]) -> Sentences:
    return {lang: [t for t, _ in read_tokenized(split_file(tokens, split, lang, SUFFIX))] for lang in langs}


def truncated_copy(tokens: Path, out: Path, langs: tuple[str, str], n: int) -> Path:
    """The first `n` lines of train and val, for a quick check of the bench itself."""
    out.mkdir(parents=True, exist_ok=True)
    for split in ("train", "val"):
        for lang in langs:
            lines = split_file(tokens, split, lang, SUFFIX).read_text(encoding="utf-8").splitlines(keepends=True)
            split_file(out, split, lang, SUFFIX).write_text("".join(lines[:n]), encoding="utf-8")
    return out


def ours_ids(merges: list, vocab: Vocabulary, sents: Sentences) -> dict[str, list[list[int]]]:
    """Tokens -> ids as the train stage does it (Vocabularies.pieces + encode), from a fresh BPE."""
    bpe = BPE(merges)
    return {lang: [vocab.encode(bpe.segment(s, vocab.stoi)) for s in ss] for lang, ss in sents.items()}


def figures(label: str, size: int, learn: list[float], segment: list[float], train_ids: dict[str, list[list[int]]],
            val_ids: dict[str, list[list[int]]], unk_id: int) -> dict[str, Any]:
    val_pieces = sum(len(s) for ss in val_ids.values() for s in ss)
    val_unk = sum(i == unk_id for ss in val_ids.values() for s in ss for i in s)
    return {"label": label, "vocab_size": size, "learn_s": min(learn), "learn_s_repeats": learn,
            "segment_s": min(segment), "segment_s_repeats": segment,
            "pieces_per_sentence": {lang: sum(map(len, ss)) / len(ss) for lang, ss in train_ids.items()},
            "val_pieces": val_pieces, "val_unk": val_unk, "val_unk_rate": val_unk / max(val_pieces, 1)}


def sentencepiece_row(spm: Any, kind: str, size: int, train: Sentences, val: Sentences, repeats: int,
                      threads: int) -> dict[str, Any]:
    """Train a sentencepiece `kind` model of `size` symbols (<unk> <s> </s> <pad> included)."""
    text = {lang: [" ".join(s) for s in ss] for lang, ss in train.items()}
    corpus = [line for lines in text.values() for line in lines]

    def learn() -> Any:
        model = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus), model_writer=model, vocab_size=size,
                                       model_type=kind, character_coverage=1.0, unk_id=0, bos_id=1, eos_id=2,
                                       pad_id=3, num_threads=threads, minloglevel=2)
        return spm.SentencePieceProcessor(model_proto=model.getvalue())

    learn_s, sp = best_of(repeats, learn)
    segment_s, ids = best_of(repeats, lambda: {lang: sp.encode(lines, num_threads=threads)
                                               for lang, lines in text.items()})
    val_ids = {lang: sp.encode([" ".join(s) for s in ss], num_threads=threads) for lang, ss in val.items()}
    return figures(f"sentencepiece {kind}", sp.get_piece_size(), learn_s, segment_s, ids, val_ids, sp.unk_id())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--merges", type=int, help="our BPE merges (default: params.yaml vocab.bpe_merges)")
    p.add_argument("--repeats", type=int, default=3, help="runs of each learn / segment; the best is reported "
                                                          "(default: 3)")
    p.add_argument("--threads", type=int, default=1, help="sentencepiece's training and encoding threads (default: 1)")
    p.add_argument("--sentences", type=int, help="only the first N train and val sentences (a quick check)")
    p.add_argument("--params", type=Path, default=ROOT / "params.yaml", help="data and vocab sections")
    p.add_argument("--tokens", type=Path, default=ROOT / "data/tokens", help="tokenize stage output (data/tokens)")
    p.add_argument("--out", type=Path, default=RESULTS, help=f"folder for subwords.json (default: {RESULTS})")
    args = p.parse_args()
    try:
        import sentencepiece as spm
    except ImportError:
        raise SystemExit('bench/subwords.py needs sentencepiece: pip install ".[bench]"') from None

    params = load_sections(args.params, VocabParams)
    data = params.data
    cfg = replace(params.vocab, kind="bpe", joint=True,
                  bpe_merges=params.vocab.bpe_merges if args.merges is None else args.merges)
    langs = (data.src_lang, data.tgt_lang)
    with tempfile.TemporaryDirectory() as tmp:
        tokens = args.tokens
        if args.sentences is not None:
            tokens = truncated_copy(args.tokens, Path(tmp), langs, args.sentences)
        train, val = read_split(tokens, "train", langs), read_split(tokens, "val", langs)
        learn_s, vocabs = best_of(args.repeats, lambda: build_vocabularies(data, cfg, tokens))
    assert isinstance(vocabs, Vocabularies) and vocabs.bpe is not None
    vocab, size = vocabs.src, len(vocabs.src)
    segment_s, train_ids = best_of(args.repeats, lambda: ours_ids(vocabs.bpe.merges, vocab, train))
    seen = len({i for ss in train_ids.values() for s in ss for i in s})
    rows = {"ours_bpe": figures("ours BPE", size, learn_s, segment_s, train_ids,
                                ours_ids(vocabs.bpe.merges, vocab, val), UNK_ID)}
    for kind in ("bpe", "unigram"):
        rows[f"sentencepiece_{kind}"] = sentencepiece_row(spm, kind, size, train, val, args.repeats, args.threads)

    composition = {"pieces": seen, "alphabet": size - len(SPECIALS) - seen, "specials": len(SPECIALS)}
    print(f"Multi30k train ({', '.join(f'{len(ss)} {lang}' for lang, ss in train.items())} sentences), joint, "
          f"best of {args.repeats}, sentencepiece threads {args.threads}")
    print(f"ours: {len(vocabs.bpe.merges)} merges -> {size} symbols = {seen} pieces seen on train + "
          f"{composition['alphabet']} more alphabet symbols + {len(SPECIALS)} specials")
    sizes = ", ".join(f"{r['label']} {r['vocab_size']}" for r in rows.values())
    same = len({r["vocab_size"] for r in rows.values()}) == 1
    print(f"final vocabulary sizes, specials included: {sizes} ({'equal' if same else 'NOT equal'})")
    print(f"\n{'':<24}{'size':>6}{'learn s':>9}{'segment s':>11}{'pieces/sent ' + langs[0]:>16}{langs[1]:>7}"
          f"{'val <unk>':>11}")
    for r in rows.values():
        per = r["pieces_per_sentence"]
        print(f"{r['label']:<24}{r['vocab_size']:>6}{r['learn_s']:>9.2f}{r['segment_s']:>11.2f}{per[langs[0]]:>16.2f}"
              f"{per[langs[1]]:>7.2f}{r['val_unk']:>11}")
    if not same:
        raise SystemExit("sentencepiece did not reach our vocabulary size; the comparison is not like for like")

    results = {"merges": len(vocabs.bpe.merges), "merges_requested": cfg.bpe_merges, "min_freq": cfg.min_freq,
               "threads": args.threads,
               "train_sentences": {lang: len(ss) for lang, ss in train.items()},
               "val_sentences": {lang: len(ss) for lang, ss in val.items()},
               "vocab_size": size, "specials": len(SPECIALS), "ours_composition": composition, "methods": rows}
    write_result("subwords", results, args.repeats, args.out)


if __name__ == "__main__":
    main()
