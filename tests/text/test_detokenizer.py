"""Detokenization learned from spaCy's whitespace flags."""

from __future__ import annotations

from pathlib import Path

from nmt.files.lines import read_lines
from nmt.text.detokenizer import Detokenizer
from nmt.text.tokenizer import make_tokenizer, normalize

TRAIN = [
    'A man (in a hat) says "hello" to a dog.', "The dog isn't happy, is it?", 'She reads "The Times" today.',
    "Two kids (twins) play.", "It's a boy's toy!", 'A sign reads "Stop".', "People don't run; they walk.",
    'He shouts "go" twice.', "A girl (left) smiles.", "That's the man's car.",
    "Is he tall, or short?", "Red, blue, green?", "Where is it?", "Run!",
]


def learn(sentences: list[str], lang: str = "en") -> Detokenizer:
    return Detokenizer.learn(list(make_tokenizer(lang, lowercase=False)(sentences)))


def test_punctuation_clitics_brackets_and_quotes() -> None:
    detok = learn(TRAIN)
    held_out = ['A cat (black) says "meow" to a bird.', "The bird isn't here, is it?", "It's the cat's ball!"]
    for sentence, (tokens, _) in zip(held_out, make_tokenizer("en", False)(held_out)):
        assert detok(tokens) == sentence


def test_round_trip_through_dict() -> None:
    detok = learn(TRAIN)
    again = Detokenizer.from_dict(detok.to_dict())
    tokens = ["A", "man", "(", "tall", ")", "says", '"', "hi", '"', "."]
    assert again(tokens) == detok(tokens) == 'A man (tall) says "hi".'
    assert again([]) == ""


def test_multi30k_validation_reconstructed_exactly(mirror: Path) -> None:
    for lang in ("en", "de"):
        tokenize = make_tokenizer(lang, lowercase=False)
        detok = Detokenizer.learn(list(tokenize(read_lines(mirror / f"train.{lang}.gz"))))
        val = read_lines(mirror / f"val.{lang}.gz")
        exact = sum(detok(tokens) == normalize(line) for line, (tokens, _) in zip(val, tokenize(val)))
        assert exact / len(val) >= 0.995, lang
