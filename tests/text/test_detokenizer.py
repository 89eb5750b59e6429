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


def reference_learn(sentences: list[tuple[list[str], str]], min_count: int = 2) -> dict:
    """The learner as first written (token by token, one tuple-keyed counter per kind), kept as the
    reference `GlueCounts` must equal: its fast path hands whole lists to Counter.update."""
    from collections import Counter

    pair_total, pair_glued, opening, closing = Counter(), Counter(), Counter(), Counter()
    for tokens, flags in sentences:
        seen: Counter[str] = Counter()
        for i, (tok, f) in enumerate(zip(tokens, flags)):
            seen[tok] += 1
            if seen[tok] % 2:
                opening[tok, "n"] += 1
                opening[tok, "glued"] += f == "0" and i + 1 < len(tokens)
                opening[tok, "glued_left"] += i > 0 and flags[i - 1] == "0"
            else:
                closing[tok, "n"] += 1
                closing[tok, "glued"] += i > 0 and flags[i - 1] == "0"
        for a, b, f in zip(tokens, tokens[1:], flags):
            pair_total[a, b] += 1
            pair_glued[a, b] += f == "0"
    paired = {t for (t, k), n in closing.items() if k == "n" and n >= min_count
              and closing[t, "glued"] * 2 > n and opening[t, "glued"] * 2 > opening[t, "n"]
              and opening[t, "glued_left"] * 2 < opening[t, "n"]}

    def majority(position: int, skip: set[str]) -> set[str]:
        total, glued = Counter(), Counter()
        for pair, n in pair_total.items():
            if pair[1 - position] not in skip:
                total[pair[position]] += n
                glued[pair[position]] += pair_glued[pair]
        return {t for t, n in total.items() if n >= min_count and glued[t] * 2 > n}

    glue_before = majority(1, set())
    glue_after = majority(0, glue_before)
    glue_before = majority(1, glue_after)
    fallback = Detokenizer(set(), set(), glue_before, glue_after)
    glue_pairs, space_pairs = set(), set()
    for pair, n in pair_total.items():
        if n >= min_count and (pair_glued[pair] * 2 > n) != fallback.glued(*pair):
            (glue_pairs if pair_glued[pair] * 2 > n else space_pairs).add(pair)
    return Detokenizer(glue_pairs, space_pairs, glue_before - paired, glue_after - paired, paired).to_dict()


def test_the_counting_learner_equals_the_reference_and_sums_over_shards(mirror: Path) -> None:
    from nmt.text.detokenizer import GlueCounts

    quotes = ['He said "go" and "stop" twice.', 'A "big" dog - a "small" cat.', '" " "', "a a a b b"]
    for lang in ("en", "de"):
        sents = list(make_tokenizer(lang, lowercase=False)(read_lines(mirror / f"train.{lang}.gz") + quotes * 3))
        assert Detokenizer.learn(sents).to_dict() == reference_learn(sents)
        halves = [GlueCounts(), GlueCounts()]
        for k, (tokens, flags) in enumerate(sents):
            halves[k % 2].add(tokens, flags)
        halves[0].update(halves[1])
        assert halves[0].learn().to_dict() == reference_learn(sents)
