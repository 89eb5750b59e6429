"""Stage 4, vocab: vocabularies from the training split only, gated.

Word-level (spaCy tokens, as the reference tutorials), joint BPE subwords learned on both
languages' spaCy tokens, or a joint SentencePiece model learned on both languages' raw training
text (the tokens joined back with the whitespace spaCy recorded; nmt/text/spm.py), whose pieces
need no spaCy to reproduce; one vocabulary per side or one shared by both (`vocab.joint`).
The output directory holds `src.vocab` and `tgt.vocab` (one symbol per line), `bpe.merges`
for BPE, `sentencepiece.model` for SentencePiece, and `manifest.json` with the languages, sizes
and SHA-256 of each file, which checkpoints record. The gate checks the special tokens' ids,
the sizes, and the <unk> rate on the validation split.
"""

from __future__ import annotations

import json
import logging
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nmt.command import arg, stage_main
from nmt.config.data import DataConfig, VocabConfig
from nmt.data.shards import SHARD_LINES, ShardJob, decode_shard, ordered_map, read_shards, resolve_workers
from nmt.errors import DataError
from nmt.files.atomic import atomic_write_text, staged_dir
from nmt.files.lines import split_file
from nmt.gates.gate import Gate
from nmt.text.spm import FILE as SP_FILE
from nmt.text.spm import SentencePiece
from nmt.text.subword import BPE, CONT, learn_merges
from nmt.text.tokenizer import SUFFIX, iter_tokenized, read_tokenized, restore_text
from nmt.text.vocab import SPECIALS, UNK_ID, Vocabulary
from nmt.text.vocabularies import MANIFEST, Vocabularies

log = logging.getLogger(__name__)

REPORT_NAME = "vocab"


@dataclass(frozen=True)
class VocabParams:
    """The params.yaml sections the vocab stage reads (only these: nmt.config.loader.load_sections)."""

    data: DataConfig  # the corpus: splits, direction
    vocab: VocabConfig  # word or BPE vocabularies


@dataclass(frozen=True)
class VocabPaths:
    tokens: Path = arg("tokenized corpus directory (data/tokens)")
    out: Path = arg("output directory for the vocabularies (data/vocab)")
    reports: Path = arg("directory for gate reports (reports/validation)")
    # the shared parser types every valued option as a Path: `resolve_workers` reads it as a number
    workers: int = arg("processes counting word types; 0: every core this process may use", default=0)


class WordCounter:
    """Word-type counts of one shard of a tokens file: a worker of `ordered_map` (a pool process
    or a Dask worker counts shards; the stage sums them)."""

    def __call__(self, job: ShardJob) -> Counter[str]:
        counts: Counter[str] = Counter()
        for lineno, line in enumerate(decode_shard(job), start=job.first_line):
            text, sep, _ = line.partition("\t")
            if not sep:
                raise DataError(f"{job.path}:{lineno}: malformed tokens line (expected tokens, TAB, one flag per "
                                "token); delete data/tokens and re-run the tokenize stage")
            if text:
                counts.update(text.split(" "))
        return counts


def word_counts(path: Path, workers: int = 1) -> Counter[str]:
    """How often each token occurs in a tokens file, counted a shard at a time on `workers`
    processes (or the Dask cluster of `NMT_DASK_SCHEDULER`): the only thing BPE learning and
    the vocabularies need, so no split is ever held as token lists."""
    counts: Counter[str] = Counter()
    for _, shard_counts in ordered_map(read_shards(path, "", SHARD_LINES), WordCounter, (), workers):
        counts.update(shard_counts)
    return counts


def piece_counts(bpe: BPE, words: Counter[str]) -> Counter[str]:
    """How often each BPE piece occurs in a text with these word counts: each word type is
    segmented once, its pieces counted as often as the word occurs."""
    counts: Counter[str] = Counter()
    for word, n in words.items():
        for piece in bpe.segment_token(word):
            counts[piece] += n
    return counts


def sentencepiece_vocabularies(data: DataConfig, cfg: VocabConfig, tokens_dir: Path) -> Vocabularies:
    """One SentencePiece model of `max_size` pieces (and the specials) learned on the raw training text of both
    languages, streamed line by line; its pieces are both vocabularies."""
    langs = (data.src_lang, data.tgt_lang)
    texts = (restore_text(tokens, flags) for lang in langs
             for tokens, flags in iter_tokenized(split_file(tokens_dir, "train", lang, SUFFIX)))
    model_type = "bpe" if cfg.kind == "sentencepiece-bpe" else "unigram"
    sp = SentencePiece.train(texts, size=int(cfg.max_size or 0) + len(SPECIALS), model_type=model_type)
    vocab = sp.vocabulary()
    log.info("learned a SentencePiece %s model of %d pieces", model_type, len(vocab))
    entry = {"size": len(vocab), "sha256": vocab.sha256}
    manifest = {"kind": cfg.kind, "joint": True, "src_lang": langs[0], "tgt_lang": langs[1], "specials": list(SPECIALS),
                "src": {"file": "src.vocab", **entry}, "tgt": {"file": "tgt.vocab", **entry}, "bpe": None,
                "sentencepiece": {"file": SP_FILE, "model_type": model_type, "sha256": sp.sha256}}
    return Vocabularies(vocab, vocab, None, manifest, sp)


def build_vocabularies(data: DataConfig, cfg: VocabConfig, tokens_dir: Path, workers: int = 1) -> Vocabularies:
    """Build the vocabularies (and BPE merges) from the train split of `tokens_dir`, streaming it
    into word counts on `workers` processes (memory grows with the word types, not with the corpus)."""
    if cfg.kind.startswith("sentencepiece"):
        return sentencepiece_vocabularies(data, cfg, tokens_dir)
    src_lang, tgt_lang = data.src_lang, data.tgt_lang
    counts = {lang: word_counts(split_file(tokens_dir, "train", lang, SUFFIX), workers)
              for lang in (src_lang, tgt_lang)}
    bpe, alphabet = None, []
    if cfg.kind == "bpe":
        words = counts[src_lang] + counts[tgt_lang]
        bpe = BPE(learn_merges(words, cfg.bpe_merges, min_freq=max(cfg.min_freq, 2)))
        log.info("learned %d BPE merges from %d word types", len(bpe.merges), len(words))
        counts = {lang: piece_counts(bpe, c) for lang, c in counts.items()}
        alphabet = bpe_alphabet(words)
    # BPE pieces are kept whatever their frequency: min_freq already shaped the merges.
    min_freq = 1 if bpe is not None else cfg.min_freq
    if cfg.joint:
        shared = Vocabulary.from_counts(counts[src_lang] + counts[tgt_lang], min_freq, cfg.max_size, alphabet)
        src = tgt = shared
    else:
        src = Vocabulary.from_counts(counts[src_lang], min_freq, cfg.max_size, alphabet)
        tgt = Vocabulary.from_counts(counts[tgt_lang], min_freq, cfg.max_size, alphabet)
    manifest = {
        "kind": cfg.kind, "joint": cfg.joint, "src_lang": src_lang, "tgt_lang": tgt_lang,
        "specials": list(SPECIALS),
        "src": {"file": "src.vocab", "size": len(src), "sha256": src.sha256},
        "tgt": {"file": "tgt.vocab", "size": len(tgt), "sha256": tgt.sha256},
        "bpe": {"file": "bpe.merges", "merges": len(bpe.merges), "sha256": bpe.sha256} if bpe else None,
    }
    return Vocabularies(src, tgt, bpe, manifest)


def bpe_alphabet(words: Counter[str]) -> list[str]:
    """Every character of the training tokens (both languages), as a token start and as a
    continuation piece: any word spelled with these characters has a segmentation without
    <unk>, on either side, whichever language the characters were seen in."""
    return [sym for c in sorted({c for w in words for c in w}) for sym in (c, CONT + c)]


def oov_rate(vocabs: Vocabularies, vocab: Vocabulary, sentences: list[list[str]],
             texts: list[str] | None = None) -> float:
    """The share of <unk> among the symbols of `sentences` (token lists), or, for a SentencePiece model, of
    `texts` (the same sentences as text)."""
    if vocabs.sp is not None and texts is not None:
        ids = [i for text in texts for i in vocab.encode(vocabs.sp.encode(text))]
        return sum(i == UNK_ID for i in ids) / max(len(ids), 1)
    ids = [i for sent in sentences for i in vocab.encode(vocabs.pieces(sent, vocab))]
    return sum(i == UNK_ID for i in ids) / max(len(ids), 1)


def gate_vocabularies(vocabs: Vocabularies, cfg: VocabConfig, tokens_dir: Path, gate: Gate) -> None:
    import great_expectations as gx
    import pandas as pd

    for side, vocab, lang in (("src", vocabs.src, vocabs.manifest["src_lang"]),
                              ("tgt", vocabs.tgt, vocabs.manifest["tgt_lang"])):
        frame = pd.DataFrame({"id": range(len(vocab)), "symbol": vocab.itos})
        upper = cfg.max_size + len(SPECIALS) if cfg.max_size else None
        gate.expect(f"{side} ({lang})", frame, [
            ("size", gx.expectations.ExpectTableRowCountToBeBetween(min_value=cfg.min_size, max_value=upper)),
            ("unique symbols", gx.expectations.ExpectColumnValuesToBeUnique(column="symbol")),
        ])
        specials = tuple(vocab.itos[: len(SPECIALS)])
        gate.check(f"{side} ({lang}): special ids", specials == SPECIALS,
                   " ".join(f"{s}={i}" for i, s in enumerate(SPECIALS)),
                   " ".join(f"{s}={i}" for i, s in enumerate(specials)))
        val = read_tokenized(split_file(tokens_dir, "val", lang, SUFFIX))
        rate = oov_rate(vocabs, vocab, [t for t, _ in val], [restore_text(t, f) for t, f in val])
        gate.check(f"{side} ({lang}): val <unk> rate", rate <= cfg.max_oov_rate,
                   f"<= {cfg.max_oov_rate:g}", f"{rate:.4f}", "vocab.max_oov_rate")
        gate.stats[side] = {"lang": lang, "size": len(vocab), "val_unk_rate": round(rate, 6)}


def save_vocabularies(vocabs: Vocabularies, out_dir: Path) -> None:
    """Replace `out_dir` with the vocabulary files and manifest, atomically."""
    with staged_dir(out_dir) as tmp:
        vocabs.src.save(tmp / "src.vocab")
        vocabs.tgt.save(tmp / "tgt.vocab")
        if vocabs.bpe is not None:
            vocabs.bpe.save(tmp / "bpe.merges")
        if vocabs.sp is not None:
            vocabs.sp.save(tmp / SP_FILE)
        atomic_write_text(tmp / MANIFEST, json.dumps(vocabs.manifest, indent=2) + "\n")


def vocab_stage(data: DataConfig, cfg: VocabConfig, tokens_dir: Path, out_dir: Path, report_dir: Path,
                workers: int = 1) -> Gate:
    """Build (counting on `workers` processes), gate, then (only if the gate passed) write the vocabularies."""
    vocabs = build_vocabularies(data, cfg, tokens_dir, workers)
    gate = Gate(REPORT_NAME)
    gate.stats.update(kind=cfg.kind, joint=cfg.joint)
    gate_vocabularies(vocabs, cfg, tokens_dir, gate)
    gate.finish(report_dir)
    save_vocabularies(vocabs, out_dir)
    return gate


def run(params: VocabParams, paths: VocabPaths) -> Gate:
    gate = vocab_stage(params.data, params.vocab, paths.tokens, paths.out, paths.reports,
                       resolve_workers(paths.workers))
    log.info("vocabularies: src %d, tgt %d symbols", gate.stats["src"]["size"], gate.stats["tgt"]["size"])
    return gate


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("vocab", __doc__.split("\n\n")[0], VocabPaths, VocabParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
