"""Stage 4b, binarize: the train and val splits as ids, written once in memory-mappable files, gated.

Training used to re-read data/tokens, BPE-segment every word and hold the corpus as Python lists
at every start, resumes included (about 10 GB for 4.5M pairs). This stage does that once, as
fairseq-preprocess and Megatron's indexed datasets do: for each split the train stage reads
(`SPLITS`: train and val; the test sets are decoded from text by the evaluate stage, never as
ids) each side becomes a flat `.bin` of ids and an `.idx` of offsets (`nmt.data.indexed`):
`data/bin/SPLIT.LANG.{bin,idx}`. Source ids are `Vocabularies.source_ids` (symbols + </s>),
target ids `target_ids` (<s> + symbols + </s>): exactly what training numericalised. Every pair
is written, whatever its length: `train.max_len` is applied by the train stage on the lengths,
so this stage reads no params.yaml section and a new max_len re-binarizes nothing.
`manifest.json` records the dtype (uint16 up to 65535 symbols, else uint32), the counts and the
vocabularies' SHA-256, which training checks against data/vocab.

The token files are streamed `CHUNK_LINES` lines at a time and numericalised on a pool of
`--workers` processes (default every core; on a Dask cluster with `NMT_DASK_SCHEDULER`), written
back in order, so memory holds a few chunks whatever the corpus size and the files are the same
whatever the worker count. The gate: each side holds as many sequences as its tokens file has lines, and both
sides as many (aligned); every id lies in [0, vocabulary size); no train pair has a side without
symbols. Stats: pairs, ids, longest sequences, dtype.

The same pass counts, on the workers, how the first `GLUE_SENTENCES` training targets' tokens
glue together (`nmt.text.detokenizer.GlueCounts`, shard by shard) and writes the detokenizer
learned from the sum to `detokenizer.json` (`DETOKENIZER`): the train stage puts it in the
model file without reading the corpus again.
"""

from __future__ import annotations

import itertools
import json
import logging
import pickle
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np

from nmt.command import arg, stage_main
from nmt.data.chunks import CHUNK_LINES
from nmt.data.indexed import DETOKENIZER, FORMAT_VERSION, MANIFEST, IndexedWriter, id_dtype, open_indexed
from nmt.data.shards import ShardJob, decode_shard, ordered_map, read_shards, resolve_workers
from nmt.files.atomic import atomic_write_text, staged_dir
from nmt.files.lines import split_file
from nmt.gates.gate import Gate
from nmt.text.detokenizer import Detokenizer, GlueCounts
from nmt.text.tokenizer import SUFFIX, parse_tokens_line, restore_text
from nmt.text.vocabularies import Vocabularies, load_vocabularies

log = logging.getLogger(__name__)

REPORT_NAME = "binarize"
SPLITS = ("train", "val")  # what training reads as ids
SPECIAL_IDS = {"src": 1, "tgt": 2}  # ids every sequence has besides its symbols: </s>; <s> and </s>
# Training targets the detokenizer is learned from (the first ones; all of Multi30k's 29,000). Its
# rules are majority votes on punctuation and clitics, settled long before this; the cap keeps the
# counts (which grow with the corpus's distinct token pairs) and their time bounded on any corpus.
GLUE_SENTENCES = 200_000


@dataclass(frozen=True)
class BinarizeParams:
    """No params.yaml section: all pairs are written and train filters them by `train.max_len`
    on the lengths, so no setting of this stage exists that a sweep could change."""


@dataclass(frozen=True)
class BinarizePaths:
    tokens: Path = arg("tokenized corpus directory (data/tokens)")
    vocab: Path = arg("vocab stage output (data/vocab)")
    out: Path = arg("output directory for the id files (data/bin)")
    reports: Path = arg("directory for gate reports (reports/validation)")
    # the shared parser types every valued option as a Path: `resolve_workers` reads it as a number
    workers: int = arg("processes numericalising shards; 0: every core this process may use", default=0)
    direction: str | None = arg("the direction to binarize, src-tgt (the vocab stage's is the default; the reverse "
                                "uses the same vocabularies, source and target swapped)", default=None)


@dataclass
class SideStats:
    """What the gate needs to know about one side of a split, folded chunk by chunk."""

    lines: int = 0  # sequences written (one per tokens line)
    ids: int = 0  # ids written, specials included
    longest: int = 0  # ids of the longest sequence
    empty: int = 0  # sequences without a symbol (nothing but the specials)
    max_id: int = -1  # largest id written

    def add(self, ids: np.ndarray, lengths: np.ndarray, specials: int) -> None:
        self.lines += len(lengths)
        self.ids += len(ids)
        self.longest = max(self.longest, int(lengths.max(initial=0)))
        self.empty += int((lengths <= specials).sum())
        self.max_id = max(self.max_id, int(ids.max()) if len(ids) else -1)


class Numericaliser:
    """Ids of a shard of token lines, as training numericalised them: source ids for the source
    language, target ids for the target language; for the shards of `glue_from` (the training
    targets) also their `GlueCounts`, pickled: one bytes object, which the main process keeps as
    it is until the pool has stopped and only then unpickles and sums (`binarize_splits`), so the
    many small objects of the counts never sit in its memory beside the workers'. One per pool
    process (the vocabularies load once)."""

    def __init__(self, vocab_dir: str, direction: str | None, glue_from: str, glue_sentences: int) -> None:
        vocabs = load_vocabularies(Path(vocab_dir), direction)
        self.encoders = {vocabs.src_lang: vocabs.source_ids, vocabs.tgt_lang: vocabs.target_ids}
        self.sp = vocabs.sp  # SentencePiece: the pieces of the text the tokens came from
        self.dtype = id_dtype(max(len(vocabs.src), len(vocabs.tgt)))  # the files' own: a quarter of int64 to send
        self.glue_from, self.glue_sentences = glue_from, glue_sentences  # count the glue of its first lines

    def __call__(self, job: ShardJob) -> tuple[np.ndarray, np.ndarray, bytes | None]:
        encode, path = self.encoders[job.lang], Path(job.path)
        learning = job.path == self.glue_from and job.first_line <= self.glue_sentences
        glue = GlueCounts() if learning else None
        seqs = []
        for lineno, line in enumerate(decode_shard(job), start=job.first_line):
            tokens, flags = parse_tokens_line(line, path, lineno)
            seqs.append(encode(tokens if self.sp is None else self.sp.encode(restore_text(tokens, flags))))
            if glue is not None and lineno <= self.glue_sentences:
                glue.add(tokens, flags)
        lengths = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
        ids = np.fromiter(itertools.chain.from_iterable(seqs), dtype=self.dtype, count=int(lengths.sum()))
        return ids, lengths, None if glue is None else pickle.dumps(glue, protocol=pickle.HIGHEST_PROTOCOL)


def _stream(vocabs: Vocabularies, tokens_dir: Path) -> Iterator[ShardJob | tuple[str, str]]:
    """Every side of every split as a `(split, side)` marker followed by its shards."""
    for split in SPLITS:
        for side, lang in (("src", vocabs.src_lang), ("tgt", vocabs.tgt_lang)):
            yield split, side
            yield from read_shards(split_file(tokens_dir, split, lang, SUFFIX), lang, CHUNK_LINES)


def binarize_splits(vocabs: Vocabularies, vocab_dir: Path, tokens_dir: Path, out_dir: Path, dtype: np.dtype,
                    workers: int) -> tuple[dict[str, dict[str, SideStats]], Detokenizer]:
    """Numericalise every split's sides a shard at a time on `workers` processes (in order, so the
    files are the same whatever the count) into `out_dir`: ({split: {"src": stats, "tgt": stats}},
    the detokenizer learned from the training targets)."""
    langs = {"src": vocabs.src_lang, "tgt": vocabs.tgt_lang}
    glue_shards: list[bytes] = []  # the pickled GlueCounts of the first training targets' shards
    glue_from = str(split_file(tokens_dir, "train", vocabs.tgt_lang, SUFFIX))
    stats: dict[str, dict[str, SideStats]] = {split: {} for split in SPLITS}
    writer: IndexedWriter | None = None
    side_stats = SideStats()
    specials = 0
    try:
        for item, result in ordered_map(_stream(vocabs, tokens_dir), Numericaliser,
                                        (str(vocab_dir), vocabs.direction, glue_from, GLUE_SENTENCES), workers):
            if result is None:  # the next side begins
                if writer is not None:
                    writer.close()
                split, side = cast(tuple[str, str], item)
                stats[split][side] = side_stats = SideStats()
                specials = SPECIAL_IDS[side]
                writer = IndexedWriter(split_file(out_dir, split, langs[side]), dtype)
                continue
            ids, lengths, shard_glue = result
            side_stats.add(ids, lengths, specials)
            assert writer is not None
            writer.add(ids, lengths)
            if shard_glue is not None:
                glue_shards.append(shard_glue)
    finally:
        if writer is not None:
            writer.close()
    for split, sides in stats.items():
        for side, s in sides.items():
            log.info("%s.%s: %d sequences, %d ids", split, langs[side], s.lines, s.ids)
    glue = GlueCounts()  # summed now that the workers have stopped: the stage's peak is one process's
    while glue_shards:
        glue.update(pickle.loads(glue_shards.pop(0)))  # our own workers' bytes
    return stats, glue.learn()


def gate_split(gate: Gate, vocabs: Vocabularies, out_dir: Path, split: str, stats: dict[str, SideStats],
               dtype: np.dtype) -> None:
    """The split's checks: counts read back from the files, aligned sides, id range, no empty train side."""
    langs = {"src": vocabs.src_lang, "tgt": vocabs.tgt_lang}
    sizes = {"src": len(vocabs.src), "tgt": len(vocabs.tgt)}
    for side, s in stats.items():
        stem = split_file(out_dir, split, langs[side])
        _, offsets = open_indexed(stem, dtype, s.lines)  # DataError if the files do not hold `lines` sequences
        gate.check(f"{split}.{langs[side]}: sequences", len(offsets) - 1 == s.lines,
                   f"{s.lines} (lines of {split}.{langs[side]}{SUFFIX})", f"{len(offsets) - 1} in {stem.name}.idx")
        gate.check(f"{split}.{langs[side]}: ids", 0 <= s.max_id < sizes[side] or s.ids == 0,
                   f"in [0, {sizes[side]}) ({side} vocabulary size)", f"largest {s.max_id}")
    src, tgt = stats["src"], stats["tgt"]
    gate.check(f"{split}: aligned", src.lines == tgt.lines, "as many source as target sequences",
               f"{langs['src']} {src.lines}, {langs['tgt']} {tgt.lines}")
    if split == "train":
        gate.check("train: no empty side", src.empty == 0 and tgt.empty == 0,
                   "every pair has a symbol on each side (source >= 2 ids, target >= 3)",
                   f"{src.empty} source, {tgt.empty} target sequences without one")


def binarize_stage(tokens_dir: Path, vocab_dir: Path, out_dir: Path, report_dir: Path, workers: int = 1,
                   direction: str | None = None) -> Gate:
    """Write data/bin into a staged directory (on `workers` processes), gate it, and only then swap it in."""
    vocabs = load_vocabularies(vocab_dir, direction)
    dtype = id_dtype(max(len(vocabs.src), len(vocabs.tgt)))
    gate = Gate(REPORT_NAME)
    with staged_dir(out_dir) as tmp:
        splits, detokenizer = binarize_splits(vocabs, vocab_dir, tokens_dir, tmp, dtype, workers)
        atomic_write_text(tmp / DETOKENIZER, json.dumps(detokenizer.to_dict(), ensure_ascii=False) + "\n")
        for split, stats in splits.items():
            gate_split(gate, vocabs, tmp, split, stats, dtype)
        summary = {split: {"pairs": s["src"].lines, "src_ids": s["src"].ids, "tgt_ids": s["tgt"].ids,
                           "max_src_len": s["src"].longest, "max_tgt_len": s["tgt"].longest}
                   for split, s in splits.items()}
        manifest = {"format": FORMAT_VERSION, "dtype": dtype.name, "src_lang": vocabs.src_lang,
                    "tgt_lang": vocabs.tgt_lang, "vocab": vocabs.hashes, "splits": summary}
        atomic_write_text(tmp / MANIFEST, json.dumps(manifest, indent=2) + "\n")
        gate.stats.update(dtype=dtype.name, splits=summary)
        gate.finish(report_dir)  # raises on a failed check: the staged directory is dropped, the old one kept
    return gate


def run(params: BinarizeParams, paths: BinarizePaths) -> Gate:
    direction = None if paths.direction is None else str(paths.direction)
    gate = binarize_stage(paths.tokens, paths.vocab, paths.out, paths.reports, resolve_workers(paths.workers),
                          direction)
    counts = ", ".join(f"{split}: {s['pairs']} pairs" for split, s in gate.stats["splits"].items())
    log.info("binarized %s (%s ids) into %s", counts, gate.stats["dtype"], paths.out)
    return gate


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("binarize", __doc__.split("\n\n")[0], BinarizePaths, BinarizeParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
