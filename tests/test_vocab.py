"""Stage 4, vocab: Vocabulary (nmt.vocab), BPE (nmt.subword) and the gated stage (nmt.build_vocab)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, data_config, synthetic_pairs, write_corpus

from nmt.build_vocab import MANIFEST, Vocabularies, load_vocabularies, vocab_stage
from nmt.config import DataConfig, TokenizeConfig, ValidateConfig, VocabConfig
from nmt.corpus import read_lines
from nmt.errors import DataError, GateError
from nmt.params import load_section
from nmt.subword import (
    BPE,
    CONT,
    HEADER,
    _apply,
    join_pair,
    learn_merges,
    merge_pieces,
    split_chars,
)
from nmt.tokenization import make_tokenizer, read_tokenized, tokenize_corpus
from nmt.validate import validate_corpus
from nmt.vocab import BOS_ID, EOS_ID, PAD_ID, SPECIALS, UNK_ID, Vocabulary

# --- Vocabulary ---------------------------------------------------------------------------------------------------


def test_specials_have_fixed_ids() -> None:
    assert SPECIALS == ("<pad>", "<unk>", "<s>", "</s>")
    assert (PAD_ID, UNK_ID, BOS_ID, EOS_ID) == (0, 1, 2, 3)
    v = Vocabulary.from_counts(Counter())
    assert v.itos == list(SPECIALS) and len(v) == 4
    assert [v.stoi[s] for s in SPECIALS] == [0, 1, 2, 3]


def test_from_counts_orders_by_frequency_then_alphabet() -> None:
    counts = Counter({"b": 3, "a": 3, "c": 5, "d": 1, "Z": 3, "e": 2})
    v = Vocabulary.from_counts(counts)
    assert v.itos[4:] == ["c", "Z", "a", "b", "e", "d"]  # ties by code point: "Z" < "a"
    assert Vocabulary.from_counts(counts, min_freq=2).itos[4:] == ["c", "Z", "a", "b", "e"]
    assert Vocabulary.from_counts(counts, min_freq=3).itos[4:] == ["c", "Z", "a", "b"]
    assert Vocabulary.from_counts(counts, min_freq=2, max_size=2).itos == list(SPECIALS) + ["c", "Z"]
    assert Vocabulary.from_counts(counts, max_size=100) == v
    # insertion order of the counts does not matter
    assert Vocabulary.from_counts(Counter(dict(reversed(list(counts.items()))))) == v


def test_from_counts_never_duplicates_specials() -> None:
    v = Vocabulary.from_counts(Counter({"<unk>": 50, "<pad>": 9, "x": 2, "</s>": 7}))
    assert v.itos == list(SPECIALS) + ["x"]


def test_encode_decode() -> None:
    v = Vocabulary.from_counts(Counter({"Hund": 3, "Mann": 2}))
    assert v.encode(["Mann", "Hund", "Katze", "<s>"]) == [5, 4, UNK_ID, BOS_ID]
    assert v.decode([4, 5, UNK_ID, EOS_ID]) == ["Hund", "Mann", "<unk>", "</s>"]
    assert v.encode([]) == []


def test_save_load_roundtrip_and_sha(tmp_path: Path) -> None:
    v = Vocabulary.from_counts(Counter({"Straße": 4, "läuft": 4, "über": 3, "😀": 2, ".": 9}))
    path = tmp_path / "src.vocab"
    v.save(path)
    assert path.read_text(encoding="utf-8").splitlines() == v.itos
    assert v.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    loaded = Vocabulary.load(path, sha256=v.sha256)
    assert loaded == v and loaded.sha256 == v.sha256 and loaded.stoi == v.stoi
    assert Vocabulary.load(path) == v
    again = Vocabulary.from_counts(Counter({".": 9, "über": 3, "läuft": 4, "Straße": 4, "😀": 2}))
    assert again.sha256 == v.sha256
    assert Vocabulary.from_counts(Counter({"a": 1})).sha256 != v.sha256


def test_load_with_wrong_sha(tmp_path: Path) -> None:
    v = Vocabulary.from_counts(Counter({"a": 2}))
    v.save(tmp_path / "v")
    with pytest.raises(DataError, match="SHA-256"):
        Vocabulary.load(tmp_path / "v", sha256="0" * 64)


@pytest.mark.parametrize("lines", [
    ["<unk>", "<pad>", "<s>", "</s>", "a"],  # specials in the wrong order
    ["a", "<pad>", "<unk>", "<s>", "</s>"],
    ["<pad>", "<unk>", "<s>"],  # too short
    [],
    ["<pad>", "<unk>", "<s>", "</s>", "a", "b", "a"],  # duplicate
    ["<pad>", "<unk>", "<s>", "</s>", "a", "<unk>"],  # duplicate special
    ["<pad>", "<unk>", "<s>", "</s>", "a", ""],  # empty symbol
    ["<pad>", "<unk>", "<s>", "</s>", "a b"],  # whitespace
], ids=["order", "not-first", "short", "empty-file", "dup", "dup-special", "empty-symbol", "space"])
def test_load_rejects_invalid_files(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "bad.vocab"
    path.write_text("".join(s + "\n" for s in lines), encoding="utf-8")
    with pytest.raises(DataError, match="not a valid vocabulary"):
        Vocabulary.load(path)


def test_constructor_rejects_duplicates_and_bad_specials() -> None:
    with pytest.raises(ValueError, match="more than once"):
        Vocabulary(list(SPECIALS) + ["x", "y", "x"])
    with pytest.raises(ValueError, match="first symbols"):
        Vocabulary(["x"] + list(SPECIALS))


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="file not found"):
        Vocabulary.load(tmp_path / "nope.vocab")


# --- BPE ----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def m30k_tokens(mirror: Path) -> dict[str, list[list[str]]]:
    """spaCy tokens of Multi30k val and test_2016_flickr, both languages."""
    out = {}
    for split in ("val", "test_2016_flickr"):
        for lang in ("de", "en"):
            lines = read_lines(mirror / f"{split}.{lang}.gz")
            out[f"{split}.{lang}"] = [toks for toks, _ in make_tokenizer(lang, False)(lines)]
    return out


def word_counts(*sentence_lists: list[list[str]]) -> Counter[str]:
    return Counter(t for sents in sentence_lists for s in sents for t in s)


def naive_merges(word_counts_: Counter[str], num_merges: int, min_freq: int = 2) -> list[tuple[str, str]]:
    """Reference BPE: recount every pair after every merge; most frequent first, ties alphabetical."""
    words = {w: list(split_chars(w)) for w in word_counts_}
    merges = []
    while len(merges) < num_merges:
        counts: Counter = Counter()
        for w, syms in words.items():
            for pair in zip(syms, syms[1:]):
                counts[pair] += word_counts_[w]
        if not counts:
            break
        pair = min(counts, key=lambda p: (-counts[p], p))
        if counts[pair] < min_freq:
            break
        merges.append(pair)
        words = {w: _apply(syms, pair, join_pair(*pair)) for w, syms in words.items()}
    return merges


def test_split_chars_and_merge_pieces() -> None:
    assert split_chars("läuft") == ("l", "##ä", "##u", "##f", "##t")
    assert split_chars("") == ()
    assert merge_pieces(["l", "##ä", "##uft", "weg", "."]) == ["läuft", "weg", "."]
    assert merge_pieces([]) == []


def test_frequent_pair_is_merged_first() -> None:
    counts = Counter({"low": 5, "lower": 2, "newest": 6, "widest": 3})
    merges = learn_merges(counts, 10)
    # ("##e","##s") and ("##s","##t") both occur 9 times, ("##o","##w") and ("l","##o") 7 times:
    # the alphabetically first pair ("#" < "l") wins each tie
    assert merges[:3] == [("##e", "##s"), ("##es", "##t"), ("##o", "##w")]
    assert merges == naive_merges(counts, 10)
    assert BPE(merges[:2]).segment_token("newest") == ("n", "##e", "##w", "##est")
    assert BPE(merges[:2]).segment_token("lowest") == ("l", "##o", "##w", "##est")
    assert learn_merges(Counter({"ab": 1}), 10) == []  # below min_freq=2
    assert learn_merges(Counter({"ab": 1}), 10, min_freq=1) == [("a", "##b")]
    assert learn_merges(counts, 0) == []


def test_learn_merges_is_deterministic_and_matches_reference(m30k_tokens) -> None:
    counts = word_counts(m30k_tokens["val.de"], m30k_tokens["val.en"])
    first = learn_merges(counts, 300)
    assert len(first) == 300
    assert learn_merges(counts, 300) == first
    assert learn_merges(Counter(dict(sorted(counts.items(), reverse=True))), 300) == first  # order-independent
    assert learn_merges(counts, 100) == first[:100]  # a prefix of a longer run
    assert first[:150] == naive_merges(counts, 150)


def test_segment_reproduces_the_learned_segmentation(m30k_tokens) -> None:
    """Applying merges lowest rank first gives what replaying them in order (as learned) gives."""
    counts = word_counts(m30k_tokens["val.de"])
    merges = learn_merges(counts, 400)
    bpe = BPE(merges)
    for word in counts:
        syms = list(split_chars(word))
        for pair in merges:
            syms = _apply(syms, pair, join_pair(*pair))
        assert bpe.segment_token(word) == tuple(syms), word


def test_learning_stops_at_min_freq(m30k_tokens) -> None:
    counts = word_counts(m30k_tokens["val.en"])
    merges = learn_merges(counts, 10**6, min_freq=40)
    assert 0 < len(merges) < 10**6
    assert merges == naive_merges(counts, 10**6, min_freq=40)


def test_segment_merge_roundtrip_on_multi30k(m30k_tokens) -> None:
    bpe = BPE(learn_merges(word_counts(m30k_tokens["val.de"], m30k_tokens["val.en"]), 1000))
    n_pieces = n_tokens = 0
    for name in ("test_2016_flickr.de", "test_2016_flickr.en", "val.de"):
        for tokens in m30k_tokens[name]:
            assert not any(t.startswith(CONT) for t in tokens)
            pieces = bpe.segment(tokens)
            assert merge_pieces(pieces) == tokens
            assert all(p and not p.startswith(CONT) for p in (bpe.segment_token(t)[0] for t in tokens))
            n_pieces, n_tokens = n_pieces + len(pieces), n_tokens + len(tokens)
    assert n_tokens < n_pieces < 2 * n_tokens  # subwords, but far from characters
    assert bpe.segment_token("Mann") == ("Mann",) and bpe.segment_token("the") == ("the",)
    assert bpe.segment([]) == []


def test_segment_applies_merges_by_rank() -> None:
    bpe = BPE([("##b", "##c"), ("a", "##b"), ("a", "##bc")])
    assert bpe.segment_token("abc") == ("abc",)  # (##b,##c) has the lower rank, then (a,##bc)
    assert BPE([("a", "##b"), ("##b", "##c")]).segment_token("abc") == ("ab", "##c")
    assert bpe.segment_token("x") == ("x",)


def test_bpe_save_load_roundtrip(tmp_path: Path, m30k_tokens) -> None:
    bpe = BPE(learn_merges(word_counts(m30k_tokens["val.de"]), 200))
    bpe.save(tmp_path / "bpe.merges")
    text = (tmp_path / "bpe.merges").read_text(encoding="utf-8")
    assert text.splitlines()[0] == HEADER and len(text.splitlines()) == 201
    assert bpe.sha256 == hashlib.sha256(text.encode()).hexdigest()
    loaded = BPE.load(tmp_path / "bpe.merges")
    assert loaded.merges == bpe.merges and loaded.sha256 == bpe.sha256
    assert loaded.segment(m30k_tokens["val.de"][0]) == bpe.segment(m30k_tokens["val.de"][0])
    BPE([]).save(tmp_path / "empty.merges")
    assert BPE.load(tmp_path / "empty.merges").merges == []


@pytest.mark.parametrize("content, line", [
    ("", 1), ("a ##b\n", 1), ("#bpe-merges v2\na ##b\n", 1),
    (HEADER + "\na ##b\nc\n", 3), (HEADER + "\na ##b ##c\n", 2), (HEADER + "\na  ##b\n", 2),
], ids=["empty", "no-header", "wrong-version", "one-symbol", "three-symbols", "double-space"])
def test_bpe_load_rejects_malformed_files(tmp_path: Path, content: str, line: int) -> None:
    path = tmp_path / "bpe.merges"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=f"bpe.merges:{line}:"):
        BPE.load(path)


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
    assert vocabs.src.itos[4:] == sorted(counts, key=lambda s: (-counts[s], s))[:8]
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
    data = load_section(params, "data", DataConfig)
    validate_corpus(data, load_section(params, "validate", ValidateConfig), mirror, tmp_path / "clean",
                    tmp_path / "reports")
    tokenize_corpus(data, load_section(params, "tokenize", TokenizeConfig), tmp_path / "clean", tmp_path / "tokens",
                    tmp_path / "reports", None)
    gate = vocab_stage(data, load_section(params, "vocab", VocabConfig), tmp_path / "tokens", tmp_path / "vocab",
                       tmp_path / "reports")
    assert gate.success
    vocabs = load_vocabularies(tmp_path / "vocab")
    assert vocabs.manifest["src_lang"] == "de" and vocabs.manifest["kind"] == "word"
    assert 7000 <= len(vocabs.src) <= 9000
    assert 5000 <= len(vocabs.tgt) <= 7500
    assert gate.stats["src"]["val_unk_rate"] < 0.06
    assert gate.stats["tgt"]["val_unk_rate"] < gate.stats["src"]["val_unk_rate"]  # German is richer
    # the unk rate, recomputed independently
    val = [toks for toks, _ in read_tokenized(tmp_path / "tokens" / "val.de.tsv")]
    ids = [i for s in val for i in vocabs.src.encode(s)]
    assert sum(i == UNK_ID for i in ids) / len(ids) == pytest.approx(gate.stats["src"]["val_unk_rate"], abs=1e-6)
    assert vocabs.src.itos[4:8] == [".", "Ein", "einem", "in"]
