"""Stage 4, vocab: BPE subwords (nmt.text.subword): learning merges (checked against a naive reference
on Multi30k), segmenting and merging back, and merges files saved, loaded and rejected."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from pathlib import Path

import pytest

from nmt.errors import DataError
from nmt.files.lines import read_lines
from nmt.text.subword import (
    BPE,
    CONT,
    HEADER,
    _apply,
    join_pair,
    learn_merges,
    merge_pieces,
    split_chars,
)
from nmt.text.tokenizer import make_tokenizer

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


def test_segment_splits_pieces_a_vocabulary_lacks_back_to_known_ones() -> None:
    bpe = BPE([("##b", "##c"), ("a", "##bc"), ("x", "##y")])
    assert bpe.segment(["abc", "xy"]) == ["abc", "xy"]
    # a side whose vocabulary never saw "abc" (a merge made in the other language) gets its parts
    assert bpe.segment(["abc", "xy"], known={"a", "##bc", "xy"}) == ["a", "##bc", "xy"]
    assert bpe.segment(["abc"], known={"a", "##b", "##c"}) == ["a", "##b", "##c"]
    assert bpe.segment(["q"], known=set()) == ["q"]  # a character stays itself (<unk> if not in the alphabet)


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


# --- BPE-dropout --------------------------------------------------------------------------------------------------


def test_bpe_dropout_zero_is_the_deterministic_segmentation(m30k_tokens) -> None:
    bpe = BPE(learn_merges(word_counts(m30k_tokens["val.de"]), 500))
    rng = random.Random(0)
    for sent in m30k_tokens["test_2016_flickr.de"][:200]:
        assert bpe.segment(sent, dropout=0.0, rng=rng) == bpe.segment(sent)
        assert [p for t in sent for p in bpe.sample_token(t, 0.0, rng)] == bpe.segment(sent)


def test_bpe_dropout_samples_finer_segmentations_that_merge_back(m30k_tokens) -> None:
    bpe = BPE(learn_merges(word_counts(m30k_tokens["val.de"]), 500))
    sents = m30k_tokens["test_2016_flickr.de"][:300]

    def sample(seed: int) -> list[list[str]]:
        rng = random.Random(seed)
        return [bpe.segment(s, dropout=0.1, rng=rng) for s in sents]

    sampled = sample(1)
    plain = [bpe.segment(s) for s in sents]
    assert all(merge_pieces(p) == s for p, s in zip(sampled, sents))  # still the same words
    n_sampled, n_plain = sum(map(len, sampled)), sum(map(len, plain))
    assert n_plain < n_sampled < 1.6 * n_plain  # some merges skipped, most kept
    assert sampled != sample(2) and sampled == sample(1)  # another seed, another sample; same seed, same one
    # dropout 1 skips every merge: characters
    assert bpe.sample_token("Straße", 0.999999, random.Random(0)) == split_chars("Straße")


def test_bpe_dropout_never_applies_a_merge_the_table_lacks() -> None:
    bpe = BPE([("a", "##b"), ("##b", "##c")])
    seen = {bpe.sample_token("abc", 0.5, random.Random(i)) for i in range(200)}
    # skipping (a, ##b) lets the lower-priority (##b, ##c) apply; nothing else is possible
    assert seen == {("ab", "##c"), ("a", "##bc"), ("a", "##b", "##c")}


def test_the_segmentation_cache_is_bounded_and_changes_no_segmentation(m30k_tokens) -> None:
    """A corpus with ever more word types (names, numbers) must not grow the cache without end."""
    merges = learn_merges(word_counts(m30k_tokens["val.de"]), 500)
    tokens = [t for s in m30k_tokens["test_2016_flickr.de"] for t in s]
    unbounded, bounded = BPE(merges, cache_types=10**9), BPE(merges, cache_types=50)
    sizes = []
    for tok in tokens:
        assert bounded.segment_token(tok) == unbounded.segment_token(tok)
        sizes.append(len(bounded._cache))
    assert max(sizes) == 50 < len(set(tokens)) == len(unbounded._cache)


def test_cached_segmentations_share_their_pieces(m30k_tokens) -> None:
    """Binarize memory at scale: a piece that many word types end in
    ("##en", "##s") is one str object in the cache, not one per cached word."""
    bpe = BPE(learn_merges(word_counts(m30k_tokens["val.de"]), 500))
    for tok in (t for s in m30k_tokens["test_2016_flickr.de"] for t in s):
        bpe.segment_token(tok)
    pieces = [p for seg in bpe._cache.values() for p in seg]
    assert len(pieces) > 2 * len(set(pieces))  # pieces repeat across word types ...
    assert len({id(p) for p in pieces}) == len(set(pieces))  # ... and each is held once
