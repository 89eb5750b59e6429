"""Stage 4b, binarize: the train and val ids written once, as numericalise makes them, streamed in
chunks; the manifest, the uint16 / uint32 choice, the gate, and a data/bin that does not match data/vocab."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from nmt.config.data import TokenizeConfig, VocabConfig
from nmt.data import binarize
from nmt.data.binarize import binarize_stage
from nmt.data.indexed import IndexedWriter, id_dtype, open_indexed
from nmt.data.tokenize import tokenize_corpus
from nmt.data.validate import validate_corpus
from nmt.data.vocab import vocab_stage
from nmt.errors import DataError, GateError
from nmt.text.detokenizer import Detokenizer
from nmt.text.tokenizer import read_tokenized
from nmt.text.vocabularies import load_vocabularies
from nmt.train.batching import load_pairs
from nmt.train.pairs import bin_direction, open_split
from support.corpus import ROOT, data_config, synthetic_pairs, write_corpus
from support.train import copy_corpus, write_split
from support.validate import SMALL


@pytest.fixture(scope="module", params=["bpe", "word"])
def pipeline(request, tmp_path_factory) -> tuple[Path, Path]:
    """(tokens dir, vocab dir) of a tiny corpus through validate, tokenize and vocab (spaCy tokens)."""
    root = tmp_path_factory.mktemp(request.param)
    corpus = write_corpus(root / "raw", {"train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(40, seed=2),
                                         "test": synthetic_pairs(30, seed=3)})
    data = data_config(corpus)
    validate_corpus(data, SMALL, root / "raw", root / "clean", root / "reports")
    tokenize_corpus(data, TokenizeConfig(), root / "clean", root / "tokens", root / "reports", None)
    cfg = VocabConfig(kind=request.param, bpe_merges=60, min_freq=1, min_size=10, max_oov_rate=0.5)
    vocab_stage(data, cfg, root / "tokens", root / "vocab", root / "reports")
    return root / "tokens", root / "vocab"


def test_the_stage_writes_the_ids_numericalise_makes(pipeline, tmp_path: Path) -> None:
    tokens, vocab = pipeline
    gate = binarize_stage(tokens, vocab, tmp_path / "bin", tmp_path / "reports")
    assert gate.success
    vocabs = load_vocabularies(vocab)
    for split in ("train", "val"):
        mapped = open_split(tmp_path / "bin", split, vocabs)
        assert isinstance(mapped.src_lens, np.ndarray)
        assert mapped.to_lists() == load_pairs(tokens, split, vocabs)  # every pair, none filtered
    names = sorted(p.name for p in (tmp_path / "bin").iterdir())
    assert names == ["detokenizer.json", "manifest.json"] + [
        f"{s}.{lang}.{ext}" for s in ("train", "val") for lang in ("de", "en")
        for ext in ("bin", "idx")]  # train and val only: test sets stay text
    learned = json.loads((tmp_path / "bin" / "detokenizer.json").read_text())  # what train used to learn itself
    assert learned == Detokenizer.learn(read_tokenized(tokens / f"train.{vocabs.tgt_lang}.tsv")).to_dict()
    manifest = json.loads((tmp_path / "bin" / "manifest.json").read_text())
    train = load_pairs(tokens, "train", vocabs)
    assert manifest["dtype"] == "uint16" and manifest["vocab"] == vocabs.hashes
    assert manifest["splits"]["train"] == {
        "pairs": len(train), "src_ids": sum(len(s) for s, _ in train), "tgt_ids": sum(len(t) for _, t in train),
        "max_src_len": max(len(s) for s, _ in train), "max_tgt_len": max(len(t) for _, t in train)}
    assert gate.stats["splits"] == manifest["splits"] and gate.stats["dtype"] == "uint16"
    report = json.loads((tmp_path / "reports" / "binarize.json").read_text())
    assert report["success"] and (tmp_path / "reports" / "binarize.md").is_file()
    assert {c["name"] for c in report["checks"]} >= {"train: aligned", "train: no empty side", "val.en: ids"}


def test_the_reverse_direction_uses_the_same_vocabularies_turned_around(pipeline, tmp_path: Path) -> None:
    """One vocab stage serves both directions: en-de ids are the de-en vocabularies' with source
    and target swapped, and the train stage reads the direction from data/bin."""
    tokens, vocab = pipeline
    assert binarize_stage(tokens, vocab, tmp_path / "bin", tmp_path / "reports", direction="en-de").success
    vocabs = load_vocabularies(vocab, "en-de")
    assert (vocabs.src_lang, vocabs.tgt_lang) == ("en", "de")
    manifest = json.loads((tmp_path / "bin" / "manifest.json").read_text())
    assert (manifest["src_lang"], manifest["tgt_lang"]) == ("en", "de") and manifest["vocab"] == vocabs.hashes
    assert bin_direction(tmp_path / "bin") == "en-de"
    for split in ("train", "val"):
        assert open_split(tmp_path / "bin", split, vocabs).to_lists() == load_pairs(tokens, split, vocabs)
    with pytest.raises(DataError, match="binarized for en-de"):
        open_split(tmp_path / "bin", "train", load_vocabularies(vocab))  # the vocab stage's own direction


def test_a_direction_of_other_languages_is_a_clear_error(pipeline, tmp_path: Path) -> None:
    tokens, vocab = pipeline
    with pytest.raises(DataError, match="'fr-en': these vocabularies are de-en; translate de-en or en-de"):
        binarize_stage(tokens, vocab, tmp_path / "bin", tmp_path / "reports", direction="fr-en")
    assert not (tmp_path / "bin").exists()


def test_chunks_do_not_change_the_files(tmp_path: Path, monkeypatch) -> None:
    """Streaming: a chunk of 7 lines writes the same bytes as one chunk for the whole split."""
    tokens, vocab = copy_corpus(tmp_path / "c", n_train=50, n_val=9)
    binarize_stage(tokens, vocab, tmp_path / "whole", tmp_path / "r1")
    monkeypatch.setattr(binarize, "CHUNK_LINES", 7)
    binarize_stage(tokens, vocab, tmp_path / "chunked", tmp_path / "r2")
    for path in sorted((tmp_path / "whole").iterdir()):
        assert (tmp_path / "chunked" / path.name).read_bytes() == path.read_bytes(), path.name


def test_two_worker_processes_write_the_same_files(tmp_path: Path, monkeypatch) -> None:
    """The shards of 7 lines are numericalised on a pool of two processes and written back in
    order: the bytes of one process in one chunk."""
    tokens, vocab = copy_corpus(tmp_path / "c", n_train=50, n_val=9)
    binarize_stage(tokens, vocab, tmp_path / "one", tmp_path / "r1", workers=1)
    monkeypatch.setattr(binarize, "CHUNK_LINES", 7)
    pools = []
    original = binarize.ordered_map

    def recording(items, factory, args, workers):  # type: ignore[no-untyped-def]
        pools.append(workers)
        return original(items, factory, args, workers)

    monkeypatch.setattr(binarize, "ordered_map", recording)
    binarize_stage(tokens, vocab, tmp_path / "two", tmp_path / "r2", workers=2)
    assert pools == [2]
    for path in sorted((tmp_path / "one").iterdir()):
        assert (tmp_path / "two" / path.name).read_bytes() == path.read_bytes(), path.name


def test_ids_of_a_large_vocabulary_are_uint32(tmp_path: Path) -> None:
    assert id_dtype(65535) == np.dtype("<u2") and id_dtype(65536) == np.dtype("<u4")
    seqs = [[3, 70000, 5], [], [65535, 2**32 - 1]]
    with IndexedWriter(tmp_path / "x", id_dtype(2**32)) as writer:
        writer.add(np.array([i for s in seqs for i in s]), np.array([len(s) for s in seqs]))
    ids, offsets = open_indexed(tmp_path / "x", np.dtype("<u4"), 3)
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(3)] == seqs
    assert (tmp_path / "x.bin").stat().st_size == 5 * 4 and (tmp_path / "x.idx").stat().st_size == 4 * 8


def test_misaligned_sides_fail_the_gate_and_keep_the_previous_output(tmp_path: Path) -> None:
    tokens, vocab = copy_corpus(tmp_path / "c", n_train=40, n_val=8)
    binarize_stage(tokens, vocab, tmp_path / "bin", tmp_path / "reports")
    before = {p.name: p.read_bytes() for p in (tmp_path / "bin").iterdir()}
    lines = (tokens / "train.en.tsv").read_text().splitlines(keepends=True)
    (tokens / "train.en.tsv").write_text("".join(lines[:-1]))
    with pytest.raises(GateError, match=r"train: aligned: de 40, en 39"):
        binarize_stage(tokens, vocab, tmp_path / "bin", tmp_path / "reports")
    assert {p.name: p.read_bytes() for p in (tmp_path / "bin").iterdir()} == before


def test_an_empty_train_side_fails_the_gate(tmp_path: Path) -> None:
    tokens, vocab = copy_corpus(tmp_path / "c", n_train=40, n_val=8)
    write_split(tokens, "train", [["s1", "s2"], ["s3"]], [["s1", "s2"], ["s3"]])
    (tokens / "train.de.tsv").write_text("s1 s2\t10\n\t\n")  # no tokens: an empty source side
    with pytest.raises(GateError, match=r"train: no empty side: 1 source, 0 target"):
        binarize_stage(tokens, vocab, tmp_path / "bin", tmp_path / "reports")
    assert not (tmp_path / "bin").exists()


def test_a_bin_of_other_vocabularies_is_a_clear_error(tmp_path: Path) -> None:
    tokens, vocab = copy_corpus(tmp_path / "a", n_train=40, n_val=8, symbols=10)
    _, other_vocab = copy_corpus(tmp_path / "b", n_train=40, n_val=8, symbols=12)
    binarize_stage(tokens, vocab, tmp_path / "bin", tmp_path / "reports")
    with pytest.raises(DataError, match=r"made with other vocabularies than the ones given \(src, tgt SHA-256 "
                                        rf"differ\); binarize {re.escape(str(tmp_path / 'bin'))} again with those"):
        open_split(tmp_path / "bin", "train", load_vocabularies(other_vocab))


@pytest.mark.parametrize("damage", ["truncate bin", "truncate idx", "no manifest", "no file"])
def test_a_damaged_bin_is_a_clear_error(tmp_path: Path, damage: str) -> None:
    tokens, vocab = copy_corpus(tmp_path / "c", n_train=40, n_val=8)
    out = tmp_path / "bin"
    binarize_stage(tokens, vocab, out, tmp_path / "reports")
    if damage.startswith("truncate"):
        path = out / f"train.de.{damage.split()[1]}"
        path.write_bytes(path.read_bytes()[:-2])
    else:
        (out / ("manifest.json" if damage == "no manifest" else "train.en.bin")).unlink()
    expected = {"truncate bin": r"train.de.bin: \d+ bytes, expected", "truncate idx": r"train.de.idx: \d+ bytes",
                "no manifest": r"manifest.json: cannot read", "no file": r"train.en.bin: file not found"}[damage]
    with pytest.raises(DataError, match=expected):
        open_split(out, "train", load_vocabularies(vocab))


def test_the_cli_reads_no_params_section(tmp_path: Path) -> None:
    tokens, vocab = copy_corpus(tmp_path / "c", n_train=30, n_val=5)
    argv = ["--params", str(ROOT / "params.yaml"), "--tokens", str(tokens), "--vocab", str(vocab),
            "--out", str(tmp_path / "bin"), "--reports", str(tmp_path / "reports")]
    assert binarize.main(argv) == 0
    assert (tmp_path / "bin" / "manifest.json").is_file() and (tmp_path / "reports" / "binarize.json").is_file()
    assert binarize.main([*argv[:5], str(tmp_path / "missing"), *argv[6:]]) == 1  # one line, no traceback


def test_the_detokenizer_is_learned_from_the_first_glue_sentences_targets(pipeline, tmp_path: Path,
                                                                         monkeypatch) -> None:
    """Bounded on any corpus: only the first GLUE_SENTENCES training targets are counted, whatever the
    shards (7 lines) and workers (2)."""
    tokens, vocab = pipeline
    targets = read_tokenized(tokens / "train.en.tsv")
    monkeypatch.setattr(binarize, "CHUNK_LINES", 7)
    for cap in (0, 100):
        monkeypatch.setattr(binarize, "GLUE_SENTENCES", cap)
        binarize_stage(tokens, vocab, tmp_path / f"bin{cap}", tmp_path / "reports", workers=2)
        learned = json.loads((tmp_path / f"bin{cap}" / "detokenizer.json").read_text())
        assert learned == Detokenizer.learn(targets[:cap]).to_dict()
    assert Detokenizer.learn([]).to_dict() != Detokenizer.learn(targets).to_dict()  # the cap is seen


def test_a_shard_crosses_the_pool_small(pipeline) -> None:
    """Binarize memory: a worker sends its ids in the files' dtype (not int64) and its
    glue counts as one pickled bytes object, which the main process sums only after the pool stopped."""
    import pickle

    from nmt.data.shards import read_shards
    from nmt.text.detokenizer import GlueCounts

    tokens, vocab = pipeline
    targets = tokens / "train.en.tsv"
    numericalise = binarize.Numericaliser(str(vocab), None, str(targets), 10)
    job = next(read_shards(targets, "en", 50))
    ids, lengths, glue = numericalise(job)
    vocabs = load_vocabularies(vocab)
    assert ids.dtype == id_dtype(max(len(vocabs.src), len(vocabs.tgt))) == np.uint16
    assert lengths.sum() == len(ids) and isinstance(glue, bytes)
    first = Detokenizer.learn(read_tokenized(targets)[:10]).to_dict()
    assert pickle.loads(glue).learn().to_dict() == first
    assert isinstance(pickle.loads(glue), GlueCounts)
