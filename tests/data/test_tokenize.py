"""Stage 3, tokenize: spaCy tokenization, detokenization, the content-addressed cache and the gate."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from nmt.config.data import TokenizeConfig, ValidateConfig
from nmt.data.tokenize import cache_key, tokenize_corpus
from nmt.data.validate import validate_corpus
from nmt.errors import DataError, GateError
from nmt.files.lines import read_lines
from nmt.text.tokenizer import (
    format_line,
    make_tokenizer,
    normalize,
    read_tokenized,
    restore_text,
)
from support.corpus import data_config, synthetic_pairs, write_corpus

SPLITS = ("train", "val", "test")
LANGS = ("de", "en")
FILES = sorted(f"{s}.{lang}.tsv" for s in SPLITS for lang in LANGS)


def tok(lang: str, text: str, lowercase: bool = False) -> tuple[list[str], str]:
    return next(iter(make_tokenizer(lang, lowercase)([text])))


def roundtrip(lang: str, texts: list[str], lowercase: bool = False) -> None:
    for text, (tokens, flags) in zip(texts, make_tokenizer(lang, lowercase)(texts), strict=True):
        assert len(flags) == len(tokens) and set(flags) <= {"0", "1"}
        assert all(t and not any(c.isspace() for c in t) for t in tokens), tokens
        assert restore_text(tokens, flags) == (normalize(text).lower() if lowercase else normalize(text)), text


# --- the tokenizer ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_punctuation_is_split_like_spacy(lang: str) -> None:
    tokens, flags = tok(lang, "Hallo, Welt!")
    assert tokens == ["Hallo", ",", "Welt", "!"]
    assert flags == "0100"
    assert restore_text(tokens, flags) == "Hallo, Welt!"


def test_language_specific_rules() -> None:
    assert tok("en", "A man's dog doesn't run.")[0] == ["A", "man", "'s", "dog", "does", "n't", "run", "."]
    assert tok("de", "Ein Mann (mit Hut) läuft z.B. über die Straße.")[0] == [
        "Ein", "Mann", "(", "mit", "Hut", ")", "läuft", "z.B.", "über", "die", "Straße", "."]


SENTENCES = [
    "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche.",
    "Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt ein Fenster.",
    'Eine Frau sagt: "Hallo!" -- und geht (schnell) weg...',
    "Two young, White males are outside near many bushes.",
    "A man's dog isn't running; it's 3:45 p.m. in the U.S.A.!",
    "Preis: 12,50 € / 10% off — e-mail: a.b@example.com, http://x.org/a?b=1",
    "Ä Ö Ü ß é ñ 😀 日本語",
    "x",
    "?!",
]


@pytest.mark.parametrize("lang", LANGS)
def test_detokenize_restores_normalized_text(lang: str) -> None:
    roundtrip(lang, SENTENCES)


@pytest.mark.parametrize("lang", LANGS)
def test_detokenize_roundtrip_on_multi30k(mirror: Path, lang: str) -> None:
    for split in ("val", "test_2016_flickr"):
        lines = read_lines(mirror / f"{split}.{lang}.gz")
        assert len(lines) >= 1000
        roundtrip(lang, lines)


def test_whitespace_is_normalised() -> None:
    text = "  Ein\tMann  läuft\u00a0über\u2009die\u3000Straße .\r\n"
    assert normalize(text) == "Ein Mann läuft über die Straße ."
    tokens, flags = tok("de", text)
    assert tokens == ["Ein", "Mann", "läuft", "über", "die", "Straße", "."]
    assert restore_text(tokens, flags) == "Ein Mann läuft über die Straße ."
    assert tok("de", "   ") == ([], "")
    assert tok("de", "") == ([], "")


def test_lowercase_option() -> None:
    assert tok("de", "Ein Mann in BERLIN.", lowercase=True)[0] == ["ein", "mann", "in", "berlin", "."]
    for text in SENTENCES:
        cased, cased_flags = tok("de", text)
        lower, lower_flags = tok("de", text, lowercase=True)
        assert lower == [t.lower() for t in cased] and lower_flags == cased_flags
    roundtrip("en", SENTENCES, lowercase=True)


def test_format_and_read_tokenized_roundtrip(tmp_path: Path) -> None:
    rows = [tok("de", s) for s in SENTENCES] + [([], "")]
    path = tmp_path / "x.tsv"
    path.write_text("".join(format_line(t, f) + "\n" for t, f in rows), encoding="utf-8")
    assert read_tokenized(path) == rows


@pytest.mark.parametrize("bad", ["Ein Mann\t0", "Ein Mann 011", "Ein Mann\t011", "\t0", "Ein  Mann\t001",
                                 "Ein Mann\t1x"],
                         ids=["few-flags", "no-tab", "many-flags", "no-tokens", "empty-token", "bad-flag"])
def test_read_tokenized_malformed_line(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "val.de.tsv"
    path.write_text("Hallo ,\t01\n" + bad + "\nWelt\t0\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_tokenized(path)
    assert f"{path}:2: malformed tokens line" in str(err.value)


# --- the stage ----------------------------------------------------------------------------------------------------


@pytest.fixture
def validated(tiny_corpus: dict, tmp_path: Path) -> Path:
    """The tiny corpus after the validate stage (what tokenize reads)."""
    validate_corpus(data_config(tiny_corpus), ValidateConfig(min_pairs=10, min_train_pairs=100),
                    tmp_path / "src_corpus", tmp_path / "clean", tmp_path / "reports")
    return tmp_path / "clean"


def run(tmp_path: Path, corpus: dict, cfg: TokenizeConfig | None = None, cache: Path | None | str = "default",
        out: str = "tokens", workers: int = 1):
    cache_dir = tmp_path / "cache" if cache == "default" else cache
    return tokenize_corpus(data_config(corpus), cfg or TokenizeConfig(), tmp_path / "clean", tmp_path / out,
                           tmp_path / "reports", cache_dir, workers)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_tokenize_corpus_outputs(tiny_corpus: dict, validated: Path, tmp_path: Path) -> None:
    gate = run(tmp_path, tiny_corpus)
    assert gate.success
    out = tmp_path / "tokens"
    assert sorted(p.name for p in out.iterdir()) == FILES
    tokenize = {lang: make_tokenizer(lang, False) for lang in LANGS}
    for split in SPLITS:
        for lang in LANGS:
            rows = read_tokenized(out / f"{split}.{lang}.tsv")
            source = read_lines(validated / f"{split}.{lang}")
            assert len(rows) == len(source)
            assert rows == list(tokenize[lang](source))
            assert [restore_text(t, f) for t, f in rows] == [normalize(s) for s in source]
    de, en = synthetic_pairs(40, seed=2)
    assert read_tokenized(out / "val.de.tsv")[0][0] == de[0].split()
    assert read_tokenized(out / "val.en.tsv")[0][0][-2:] == [en[0].split()[-1][:-1], "."]  # "0." -> "0", "."

    body = json.loads((tmp_path / "reports" / "tokens.json").read_text(encoding="utf-8"))
    assert body["stage"] == "tokens" and body["success"] is True
    assert body["stats"]["train.de"]["sentences"] == 300
    assert body["stats"]["val.en"]["sentences"] == 40
    assert body["stats"]["cache"]["misses"] == 6 and body["stats"]["cache"]["hits"] == 0
    assert (tmp_path / "reports" / "tokens.md").read_text(encoding="utf-8").startswith("# Gate `tokens`: PASSED")


def forbid_spacy(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args, **kwargs):
        raise AssertionError("make_tokenizer called although the cache should have served every file")

    monkeypatch.setattr("nmt.data.tokencache.make_tokenizer", boom)  # what the shard worker calls


def test_cache_hits_on_rerun_without_spacy(tiny_corpus: dict, validated: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    first = run(tmp_path, tiny_corpus)
    assert first.stats["cache"]["hits"] == 0 and first.stats["cache"]["misses"] == 6
    before = snapshot(tmp_path / "tokens")
    assert len(list((tmp_path / "cache").glob("*.tsv"))) == 6

    forbid_spacy(monkeypatch)
    again = run(tmp_path, tiny_corpus)
    assert again.stats["cache"] == {"hits": 6, "misses": 0, "dir": str(tmp_path / "cache"),
                                   "corrupt_rebuilt": []}
    assert snapshot(tmp_path / "tokens") == before
    # a second output directory from the cache alone is identical too
    run(tmp_path, tiny_corpus, out="tokens2")
    assert snapshot(tmp_path / "tokens2") == before


def test_cache_key_follows_config(tiny_corpus: dict, validated: Path, tmp_path: Path) -> None:
    run(tmp_path, tiny_corpus)
    cased = snapshot(tmp_path / "tokens")

    lower = run(tmp_path, tiny_corpus, TokenizeConfig(lowercase=True))
    assert lower.stats["cache"]["hits"] == 0 and lower.stats["cache"]["misses"] == 6
    lowered = snapshot(tmp_path / "tokens")
    assert lowered != cased
    assert lowered["train.de.tsv"] == cased["train.de.tsv"].decode().lower().encode()

    back = run(tmp_path, tiny_corpus, TokenizeConfig(lowercase=False))
    assert back.stats["cache"]["hits"] == 6
    snapshot_after = snapshot(tmp_path / "tokens")
    assert snapshot_after == cased

    # max_tokens only gates: it does not change the output, so it does not change the key
    other = run(tmp_path, tiny_corpus, TokenizeConfig(max_tokens=64))
    assert other.stats["cache"]["hits"] == 6

    src = validated / "val.de"
    assert cache_key(src, "de", TokenizeConfig()) == cache_key(src, "de", TokenizeConfig(max_tokens=64))
    assert cache_key(src, "de", TokenizeConfig()) != cache_key(src, "en", TokenizeConfig())
    assert cache_key(src, "de", TokenizeConfig()) != cache_key(validated / "val.en", "de", TokenizeConfig())


def test_changed_input_misses_only_that_file(tiny_corpus: dict, validated: Path, tmp_path: Path) -> None:
    run(tmp_path, tiny_corpus)
    before = snapshot(tmp_path / "tokens")
    lines = read_lines(validated / "val.en")
    lines[3] = "A completely new sentence, with punctuation!"
    (validated / "val.en").write_text("".join(s + "\n" for s in lines), encoding="utf-8")

    gate = run(tmp_path, tiny_corpus)
    assert gate.stats["cache"]["hits"] == 5 and gate.stats["cache"]["misses"] == 1
    after = snapshot(tmp_path / "tokens")
    assert {k for k in after if after[k] != before[k]} == {"val.en.tsv"}
    assert read_tokenized(tmp_path / "tokens" / "val.en.tsv")[3] == (
        ["A", "completely", "new", "sentence", ",", "with", "punctuation", "!"], "11101100")


@pytest.mark.parametrize("workers", [1, 2])  # 2: found in a pool process, whose own log goes nowhere
def test_corrupt_cache_entry_is_detected_and_rebuilt(tiny_corpus: dict, validated: Path, tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture, workers: int) -> None:
    run(tmp_path, tiny_corpus)
    before = snapshot(tmp_path / "tokens")
    key = cache_key(validated / "train.de", "de", TokenizeConfig())
    entry = tmp_path / "cache" / f"{key}.tsv"
    assert entry.read_bytes() == before["train.de.tsv"]
    entry.write_bytes(entry.read_bytes().replace(b"Mann", b"Maus", 1))  # plausible, but not what spaCy wrote

    caplog.set_level(logging.WARNING, logger="nmt.data.tokenize")
    gate = run(tmp_path, tiny_corpus, workers=workers)
    assert gate.stats["cache"]["hits"] == 5 and gate.stats["cache"]["misses"] == 1
    assert gate.stats["cache"]["corrupt_rebuilt"] == [str(entry)]  # in the stage's report
    assert f"damaged token cache entry ignored and rebuilt (a disk or copy fault?): {entry}" in caplog.text
    assert json.loads((tmp_path / "reports" / "tokens.json").read_text())["stats"]["cache"]["corrupt_rebuilt"] == [
        str(entry)]
    assert snapshot(tmp_path / "tokens") == before
    assert entry.read_bytes() == before["train.de.tsv"]  # the entry was rewritten
    assert run(tmp_path, tiny_corpus).stats["cache"]["hits"] == 6

    # a missing integrity file is a miss too, never a crash
    (tmp_path / "cache" / f"{key}.sha256").unlink()
    assert run(tmp_path, tiny_corpus).stats["cache"]["misses"] == 1
    assert snapshot(tmp_path / "tokens") == before


def test_no_cache_dir(tiny_corpus: dict, validated: Path, tmp_path: Path) -> None:
    run(tmp_path, tiny_corpus)
    cached = snapshot(tmp_path / "tokens")
    for _ in range(2):
        gate = run(tmp_path, tiny_corpus, cache=None, out="nocache")
        assert gate.stats["cache"]["hits"] == 0 and gate.stats["cache"]["misses"] == 6
        assert snapshot(tmp_path / "nocache") == cached


def test_gate_fails_on_too_many_tokens(tmp_path: Path) -> None:
    de, en = synthetic_pairs(40, seed=2)  # at most 11 tokens per sentence
    de[7] = " ".join(["Wort"] * 15) + " ."  # 16 tokens
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": (de, en)})
    validate_corpus(data_config(corpus), ValidateConfig(min_pairs=10, min_train_pairs=100), tmp_path / "raw",
                    tmp_path / "clean", tmp_path / "reports")

    run(tmp_path, corpus, TokenizeConfig(max_tokens=16))
    before = snapshot(tmp_path / "tokens")
    with pytest.raises(GateError) as err:
        run(tmp_path, corpus, TokenizeConfig(max_tokens=15))
    msg = str(err.value)
    assert msg.startswith("tokens gate failed: val.de: tokens per sentence: 1 of 40 rows outside")
    assert "max_value=15" in msg
    assert snapshot(tmp_path / "tokens") == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tokens.")]
    body = json.loads((tmp_path / "reports" / "tokens.json").read_text(encoding="utf-8"))
    assert body["success"] is False and body["stats"]["val.de"]["max_tokens"] == 16
    # the failed run still filled the cache: the next one is all hits (and fails the same way)
    with pytest.raises(GateError):
        run(tmp_path, corpus, TokenizeConfig(max_tokens=15))


def test_missing_input_is_a_data_error(tiny_corpus: dict, validated: Path, tmp_path: Path) -> None:
    (validated / "test.en").unlink()
    with pytest.raises(DataError, match="test.en: file not found"):
        run(tmp_path, tiny_corpus)
    assert not (tmp_path / "tokens").exists()
