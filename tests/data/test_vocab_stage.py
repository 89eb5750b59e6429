"""Stage 4, vocab: the gated stage (nmt.data.vocab): word and BPE vocabularies, separate or joint,
per direction; the manifest and its checks on load; the val <unk> and size gates; Multi30k."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from nmt.config.data import TokenizeConfig, ValidateConfig, VocabConfig
from nmt.config.params import load_params
from nmt.data.tokenize import tokenize_corpus
from nmt.data.validate import validate_corpus
from nmt.data.vocab import vocab_stage
from nmt.errors import DataError, GateError
from nmt.text.subword import BPE, CONT, learn_merges, merge_pieces
from nmt.text.tokenizer import read_tokenized
from nmt.text.vocab import SPECIALS, UNK_ID, Vocabulary
from nmt.text.vocabularies import MANIFEST, Vocabularies, load_vocabularies
from support.corpus import ROOT, data_config, synthetic_pairs, write_corpus

# --- the stage ----------------------------------------------------------------------------------------------------

VALIDATE = ValidateConfig(min_pairs=10, min_train_pairs=100)
PASSING = dict(min_freq=1, min_size=10, max_oov_rate=0.2)  # synthetic numbers are rare: min_freq 1 keeps them


def tokenized(tmp_path: Path, splits: dict | None = None) -> tuple[dict, Path]:
    """(corpus entry, tokens dir) of a tiny corpus after validate and tokenize."""
    splits = splits or {"train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(40, seed=2),
                        "test": synthetic_pairs(30, seed=3)}
    corpus = write_corpus(tmp_path / "raw", splits)
    data = data_config(corpus)
    validate_corpus(data, VALIDATE, tmp_path / "raw", tmp_path / "clean", tmp_path / "reports")
    tokenize_corpus(data, TokenizeConfig(), tmp_path / "clean", tmp_path / "tokens", tmp_path / "reports", None)
    return corpus, tmp_path / "tokens"


@pytest.fixture
def tiny_tokens(tmp_path: Path) -> tuple[dict, Path]:
    return tokenized(tmp_path)


def train_counts(tokens_dir: Path, lang: str) -> Counter[str]:
    return Counter(t for toks, _ in read_tokenized(tokens_dir / f"train.{lang}.tsv") for t in toks)


def stage(tmp_path: Path, corpus: dict, tokens: Path, out: str = "vocab", direction: str = "de-en", **cfg):
    return vocab_stage(data_config(corpus, direction=direction), VocabConfig(**(PASSING | cfg)), tokens,
                       tmp_path / out, tmp_path / "reports")


def test_word_level_separate_vocabularies(tmp_path: Path, tiny_tokens) -> None:
    corpus, tokens = tiny_tokens
    gate = stage(tmp_path, corpus, tokens)
    assert gate.success
    out = tmp_path / "vocab"
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "src.vocab", "tgt.vocab"]
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["src_lang"] == "de" and manifest["tgt_lang"] == "en"
    assert manifest["kind"] == "word" and manifest["joint"] is False and manifest["bpe"] is None
    assert manifest["specials"] == list(SPECIALS)

    vocabs = load_vocabularies(out)
    assert isinstance(vocabs, Vocabularies) and vocabs.bpe is None
    for side, lang in (("src", "de"), ("tgt", "en")):
        vocab = getattr(vocabs, side)
        assert vocab == Vocabulary.from_counts(train_counts(tokens, lang), 1)  # train only, by frequency
        assert manifest[side] == {"file": f"{side}.vocab", "size": len(vocab), "sha256": vocab.sha256}
        assert vocab.sha256 == hashlib.sha256((out / f"{side}.vocab").read_bytes()).hexdigest()
        assert gate.stats[side]["lang"] == lang and gate.stats[side]["size"] == len(vocab)
    assert {"läuft", "Straße", "Mann"} <= set(vocabs.src.itos) and "runs" not in vocabs.src.itos
    assert {"runs", "street", "man"} <= set(vocabs.tgt.itos) and "läuft" not in vocabs.tgt.itos
    assert "299" in vocabs.src.itos and "340" not in vocabs.src.itos  # val/test never feed the vocabulary
    assert vocabs.pieces(["Ein", "Mann"]) == ["Ein", "Mann"]

    body = json.loads((tmp_path / "reports" / "vocab.json").read_text(encoding="utf-8"))
    assert body["stage"] == "vocab" and body["success"] is True
    assert body["stats"]["src"]["val_unk_rate"] == 0.0  # val numbers 0..39 are all in train


def test_min_freq_turns_rare_tokens_into_unk(tmp_path: Path, tiny_tokens) -> None:
    corpus, tokens = tiny_tokens
    gate = stage(tmp_path, corpus, tokens, min_freq=2, max_oov_rate=0.5)
    vocabs = load_vocabularies(tmp_path / "vocab")
    assert "299" not in vocabs.src.itos and "Mann" in vocabs.src.itos  # each number occurs once in train
    assert vocabs.src == Vocabulary.from_counts(train_counts(tokens, "de"), 2)
    # one number per val sentence is now <unk>
    val = [toks for toks, _ in read_tokenized(tokens / "val.de.tsv")]
    expected = 40 / sum(len(s) for s in val)
    assert gate.stats["src"]["val_unk_rate"] == pytest.approx(expected, abs=1e-6)


def test_direction_en_de_swaps_sides(tmp_path: Path, tiny_tokens) -> None:
    corpus, tokens = tiny_tokens
    stage(tmp_path, corpus, tokens, direction="en-de")
    vocabs = load_vocabularies(tmp_path / "vocab")
    assert vocabs.manifest["src_lang"] == "en" and vocabs.manifest["tgt_lang"] == "de"
    assert "runs" in vocabs.src.itos and "läuft" in vocabs.tgt.itos
    assert vocabs.src == Vocabulary.from_counts(train_counts(tokens, "en"), 1)
    stage(tmp_path, corpus, tokens, out="vocab_de_en")
    forward = load_vocabularies(tmp_path / "vocab_de_en")
    assert (forward.src, forward.tgt) == (vocabs.tgt, vocabs.src)


def test_joint_vocabulary(tmp_path: Path, tiny_tokens) -> None:
    corpus, tokens = tiny_tokens
    stage(tmp_path, corpus, tokens, joint=True)
    out = tmp_path / "vocab"
    vocabs = load_vocabularies(out)
    assert vocabs.src == vocabs.tgt
    assert vocabs.manifest["joint"] is True
    assert vocabs.manifest["src"]["sha256"] == vocabs.manifest["tgt"]["sha256"]
    assert (out / "src.vocab").read_bytes() == (out / "tgt.vocab").read_bytes()
    assert {"läuft", "runs", "Mann", "man"} <= set(vocabs.src.itos)
    assert vocabs.src == Vocabulary.from_counts(train_counts(tokens, "de") + train_counts(tokens, "en"), 1)


@pytest.mark.parametrize("joint", [False, True])
def test_bpe_vocabularies(tmp_path: Path, tiny_tokens, joint: bool) -> None:
    corpus, tokens = tiny_tokens
    gate = stage(tmp_path, corpus, tokens, kind="bpe", joint=joint, bpe_merges=40, min_freq=2, max_oov_rate=0.0)
    out = tmp_path / "vocab"
    assert sorted(p.name for p in out.iterdir()) == ["bpe.merges", "manifest.json", "src.vocab", "tgt.vocab"]
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    bpe = BPE.load(out / "bpe.merges")
    assert manifest["kind"] == "bpe" and manifest["joint"] is joint
    assert manifest["bpe"] == {"file": "bpe.merges", "merges": 40, "sha256": bpe.sha256}
    assert len(bpe.merges) == 40

    vocabs = load_vocabularies(out)
    assert vocabs.bpe is not None and vocabs.bpe.merges == bpe.merges and vocabs.manifest == manifest
    assert any(s.startswith(CONT) for s in vocabs.src.itos)
    assert (vocabs.src == vocabs.tgt) is joint
    # all characters of train are in, so val has no <unk> (digits 0..9 of the numbers included)
    assert gate.stats["src"]["val_unk_rate"] == gate.stats["tgt"]["val_unk_rate"] == 0.0
    for toks, _ in read_tokenized(tokens / "val.de.tsv"):
        pieces = vocabs.pieces(toks)
        assert merge_pieces(pieces) == toks
        assert UNK_ID not in vocabs.src.encode(pieces)
    # the merges are learned jointly on both languages' train tokens
    words = train_counts(tokens, "de") + train_counts(tokens, "en")
    assert bpe.merges == learn_merges(words, 40, min_freq=2)


def test_stage_is_reproducible(tmp_path: Path, tiny_tokens) -> None:
    corpus, tokens = tiny_tokens
    stage(tmp_path, corpus, tokens, kind="bpe", bpe_merges=30, out="a")
    stage(tmp_path, corpus, tokens, kind="bpe", bpe_merges=30, out="b")
    a, b = tmp_path / "a", tmp_path / "b"
    assert {p.name: p.read_bytes() for p in a.iterdir()} == {p.name: p.read_bytes() for p in b.iterdir()}


def test_max_size_caps_each_vocabulary(tmp_path: Path, tiny_tokens) -> None:
    corpus, tokens = tiny_tokens
    gate = stage(tmp_path, corpus, tokens, max_size=8, min_size=5, max_oov_rate=1.0)
    vocabs = load_vocabularies(tmp_path / "vocab")
    assert len(vocabs.src) == len(vocabs.tgt) == 12
    counts = train_counts(tokens, "de")
    assert vocabs.src.itos[4:] == sorted(counts, key=lambda s: (-counts[s], s))[:8]  # tie-rule: a fixed corpus
    assert gate.stats["src"]["val_unk_rate"] > 0


@pytest.mark.parametrize("tamper", ["src.vocab", "tgt.vocab", "bpe.merges"])
def test_load_vocabularies_detects_tampering(tmp_path: Path, tiny_tokens, tamper: str) -> None:
    corpus, tokens = tiny_tokens
    stage(tmp_path, corpus, tokens, kind="bpe", bpe_merges=20)
    path = tmp_path / "vocab" / tamper
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[-1], lines[-2] = lines[-2], lines[-1]  # still a well-formed file, but not the recorded one
    path.write_text("".join(s + "\n" for s in lines), encoding="utf-8")
    with pytest.raises(DataError, match="SHA-256") as err:
        load_vocabularies(tmp_path / "vocab")
    assert tamper in str(err.value)


def test_load_vocabularies_without_manifest(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="run the vocab stage first"):
        load_vocabularies(tmp_path / "nothing")


@pytest.mark.parametrize("manifest", [
    "{}", "[]", '{"src": {"file": "src.vocab"}, "tgt": {"file": "tgt.vocab", "sha256": "0"}}',
    '{"src": null, "tgt": null}', '{"src": {"file": 3, "sha256": 4}, "tgt": {"file": 3, "sha256": 4}}',
    "SRC_TGT_OK_BPE_BROKEN",
], ids=["empty", "list", "no-sha", "null", "ints", "bpe-no-file"])
def test_load_vocabularies_malformed_manifest(tmp_path: Path, tiny_tokens, manifest: str) -> None:
    corpus, tokens = tiny_tokens
    stage(tmp_path, corpus, tokens)
    path = tmp_path / "vocab" / MANIFEST
    if manifest == "SRC_TGT_OK_BPE_BROKEN":
        body = json.loads(path.read_text(encoding="utf-8"))
        body["bpe"] = {"merges": 3}
        manifest = json.dumps(body)
    path.write_text(manifest, encoding="utf-8")
    with pytest.raises(DataError, match="manifest.json: malformed"):
        load_vocabularies(tmp_path / "vocab")


def unseen_val_corpus(tmp_path: Path) -> tuple[dict, Path]:
    de, en = synthetic_pairs(40, seed=2)
    de[0] = "Ein Zebra läuft 0 ."
    en[0] = "A zebra runs 0."
    return tokenized(tmp_path, {"train": synthetic_pairs(300, seed=1), "val": (de, en)})


def test_gate_fails_on_unseen_val_tokens(tmp_path: Path) -> None:
    corpus, tokens = unseen_val_corpus(tmp_path)
    gate = stage(tmp_path, corpus, tokens, max_oov_rate=0.05)
    assert 0 < gate.stats["src"]["val_unk_rate"] < 0.05
    before = {p.name: p.read_bytes() for p in (tmp_path / "vocab").iterdir()}

    with pytest.raises(GateError) as err:
        stage(tmp_path, corpus, tokens, max_oov_rate=0.0, min_size=11)
    msg = str(err.value)
    assert "src (de): val <unk> rate" in msg and "tgt (en): val <unk> rate" in msg and "<= 0" in msg
    assert {p.name: p.read_bytes() for p in (tmp_path / "vocab").iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".vocab.")]
    body = json.loads((tmp_path / "reports" / "vocab.json").read_text(encoding="utf-8"))
    assert body["success"] is False and body["stats"]["src"]["val_unk_rate"] > 0


def test_gate_fails_when_vocabulary_too_small(tmp_path: Path, tiny_tokens) -> None:
    corpus, tokens = tiny_tokens
    with pytest.raises(GateError, match=r"src \(de\): size") as err:
        stage(tmp_path, corpus, tokens, min_size=100_000)
    assert "tgt (en): size" in str(err.value)
    assert not (tmp_path / "vocab").exists()


def test_missing_tokens_is_a_data_error(tmp_path: Path, tiny_tokens) -> None:
    corpus, tokens = tiny_tokens
    (tokens / "val.en.tsv").unlink()
    with pytest.raises(DataError, match="val.en.tsv: file not found"):
        stage(tmp_path, corpus, tokens)


# --- the real corpus ----------------------------------------------------------------------------------------------


def test_multi30k_pipeline_with_repository_params(mirror: Path, tmp_path: Path) -> None:
    params = ROOT / "params.yaml"
    data = load_params(params).data
    validate_corpus(data, load_params(params).validate, mirror, tmp_path / "clean",
                    tmp_path / "reports")
    tokenize_corpus(data, load_params(params).tokenize, tmp_path / "clean", tmp_path / "tokens",
                    tmp_path / "reports", None)
    gate = vocab_stage(data, load_params(params).vocab, tmp_path / "tokens", tmp_path / "vocab",
                       tmp_path / "reports")
    assert gate.success
    vocabs = load_vocabularies(tmp_path / "vocab")
    vocab_cfg = load_params(params).vocab
    assert vocabs.manifest["src_lang"] == "de" and vocabs.manifest["kind"] == vocab_cfg.kind == "bpe"
    assert len(vocabs.bpe.merges) == vocab_cfg.bpe_merges
    # open vocabulary: no <unk> on val, either side, recomputed independently of the gate
    for lang, ids_of in (("de", vocabs.source_ids), ("en", vocabs.target_ids)):
        val = [toks for toks, _ in read_tokenized(tmp_path / "tokens" / f"val.{lang}.tsv")]
        assert all(UNK_ID not in ids_of(s) for s in val), lang
    assert gate.stats["src"]["val_unk_rate"] == gate.stats["tgt"]["val_unk_rate"] == 0.0
    assert vocabs.src.itos[4] == "."


# --- streaming: word counts, never the token lists ------------------------------------------------------------------

@pytest.mark.parametrize("joint", [False, True])
def test_vocabularies_from_streamed_counts_equal_those_from_the_token_lists(
        tmp_path: Path, tiny_tokens, joint: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stage counts word types a shard at a time (shards of 50 lines here, so several per
    file) and segments each type once; the vocabularies are those of the whole token lists
    segmented sentence by sentence, and the train split's token lists are never read whole."""
    import nmt.data.vocab as vocab_module

    corpus, tokens = tiny_tokens
    monkeypatch.setattr(vocab_module, "SHARD_LINES", 50)
    read_whole = vocab_module.read_tokenized

    def val_only(path: Path):  # the gate still reads val whole (a small split); train must stream
        assert not Path(path).name.startswith("train."), f"{path} read whole"
        return read_whole(path)

    monkeypatch.setattr(vocab_module, "read_tokenized", val_only)
    stage(tmp_path, corpus, tokens, kind="bpe", joint=joint, bpe_merges=40, min_freq=2, max_oov_rate=0.0)
    got = load_vocabularies(tmp_path / "vocab")

    words = train_counts(tokens, "de") + train_counts(tokens, "en")
    bpe = BPE(learn_merges(words, 40, min_freq=2))
    alphabet = [s for c in sorted({c for w in words for c in w}) for s in (c, CONT + c)]
    pieces = {lang: Counter(p for toks, _ in read_tokenized(tokens / f"train.{lang}.tsv") for p in bpe.segment(toks))
              for lang in ("de", "en")}
    if joint:
        expected_src = expected_tgt = Vocabulary.from_counts(pieces["de"] + pieces["en"], 1, None, alphabet)
    else:
        expected_src, expected_tgt = (Vocabulary.from_counts(pieces[lang], 1, None, alphabet) for lang in ("de", "en"))
    assert got.bpe.merges == bpe.merges
    assert got.src.itos == expected_src.itos and got.tgt.itos == expected_tgt.itos


def test_a_tokens_line_without_its_flags_is_named(tmp_path: Path, tiny_tokens) -> None:
    corpus, tokens = tiny_tokens
    lines = (tokens / "train.en.tsv").read_text(encoding="utf-8").splitlines()
    lines[6] = lines[6].partition("\t")[0]  # line 7 lost its TAB and flags
    (tokens / "train.en.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"train\.en\.tsv:7: malformed tokens line"):
        stage(tmp_path, corpus, tokens, kind="bpe", bpe_merges=20)
