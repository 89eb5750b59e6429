"""Detokenization learned from the data: turning output tokens back into normal text.

spaCy records, for every token, whether whitespace followed it. From the training targets
we learn when tokens are glued: for a token pair seen often enough, its majority; else
whether the second token usually glues to what precedes it ("." "," "'s" "n't"), or the
first to what follows it ("(" "„"); else a space. Quotes that open and close alike ('"')
are learned as paired: odd occurrences glue to what follows, even ones to what precedes.
Only the glued cases are stored, so the table is small, and it follows whatever tokenizer
and language the corpus uses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any, cast

PAIR = "\n"  # joins a token pair into one counter key: no token holds a newline (they come from lines)


class Detokenizer:
    def __init__(self, glue_pairs: set[tuple[str, str]], space_pairs: set[tuple[str, str]],
                 glue_before: set[str], glue_after: set[str], paired: AbstractSet[str] = frozenset()) -> None:
        self.glue_pairs, self.space_pairs = glue_pairs, space_pairs  # pair-level decisions
        self.glue_before, self.glue_after = glue_before, glue_after  # token-level fallbacks
        self.paired = set(paired)  # quote-like tokens: opening (odd) / closing (even) occurrences

    @classmethod
    def learn(cls, sentences: Iterable[tuple[list[str], str]], min_count: int = 2) -> Detokenizer:
        """Learn from (tokens, flags) pairs as written by the tokenize stage."""
        counts = GlueCounts()
        for tokens, flags in sentences:
            counts.add(tokens, flags)
        return counts.learn(min_count)

    def glued(self, a: str, b: str) -> bool:
        """True when no space goes between `a` and `b`."""
        if (a, b) in self.glue_pairs:
            return True
        if (a, b) in self.space_pairs:
            return False
        return b in self.glue_before or a in self.glue_after

    def __call__(self, tokens: list[str]) -> str:
        if not tokens:
            return ""
        parts = [tokens[0]]
        count = Counter(tokens[:1])
        for a, b in zip(tokens, tokens[1:]):
            count[b] += 1
            if b in self.paired:  # a closing quote glues to the left, an opening one does not
                glued = count[b] % 2 == 0
            elif a in self.paired:  # after an opening quote: glued; after a closing one: the usual rules
                glued = count[a] % 2 == 1 or self.glued(a, b)
            else:
                glued = self.glued(a, b)
            parts.append(b if glued else " " + b)
        return "".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"glue_pairs": sorted(map(list, self.glue_pairs)), "space_pairs": sorted(map(list, self.space_pairs)),
                "glue_before": sorted(self.glue_before), "glue_after": sorted(self.glue_after),
                "paired": sorted(self.paired)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Detokenizer:
        return cls({tuple(p) for p in data["glue_pairs"]}, {tuple(p) for p in data["space_pairs"]},
                   set(data["glue_before"]), set(data["glue_after"]), set(data.get("paired", [])))


class GlueCounts:
    """What `Detokenizer.learn` counts, as a fold: `add` sentences, `update` with the counts of
    other shards (sums, so the order does not matter), then `learn`. The binarize stage counts
    the training targets shard by shard on its workers and learns once from the sum. `add` hands
    whole lists to `Counter.update` (counted in C); only a sentence that repeats a token walks it
    token by token, for the odd / even occurrences of quotes. A pair is counted under one string,
    "a" + `PAIR` + "b", not a tuple: a third of the objects, which is what keeps the sum of many
    shards' counts (unpickled, merged, freed) from fragmenting the stage's memory."""

    def __init__(self) -> None:
        self.pair_total: Counter[str] = Counter()  # adjacent token pairs, "a" PAIR "b"
        self.pair_glued: Counter[str] = Counter()  # ... with no whitespace between them
        self.odd: Counter[str] = Counter()  # a token's odd occurrences in a sentence (1st, 3rd, ...)
        self.odd_glued: Counter[str] = Counter()  # ... glued to the next token
        self.odd_glued_left: Counter[str] = Counter()  # ... glued to the previous token (hyphens do, quotes don't)
        self.even: Counter[str] = Counter()  # its even occurrences (2nd, 4th, ...)
        self.even_glued: Counter[str] = Counter()  # ... glued to the previous token

    def counters(self) -> tuple[Counter, ...]:
        return (self.pair_total, self.pair_glued, self.odd, self.odd_glued, self.odd_glued_left, self.even,
                self.even_glued)

    def add(self, tokens: list[str], flags: str) -> None:
        """One sentence's tokens and whitespace flags ("0": glued to the next token)."""
        pairs = [a + PAIR + b for a, b in zip(tokens, tokens[1:])]
        self.pair_total.update(pairs)
        self.pair_glued.update([p for p, f in zip(pairs, flags) if f == "0"])
        if len(set(tokens)) == len(tokens):  # every occurrence is a first one: odd
            self.odd.update(tokens)
            self.odd_glued.update([t for t, f in zip(tokens[:-1], flags) if f == "0"])
            self.odd_glued_left.update([t for t, f in zip(tokens[1:], flags) if f == "0"])
            return
        seen: Counter[str] = Counter()
        for i, tok in enumerate(tokens):
            seen[tok] += 1
            glued_left = i > 0 and flags[i - 1] == "0"
            if seen[tok] % 2:  # odd occurrence: does it glue to the next token?
                self.odd[tok] += 1
                self.odd_glued[tok] += flags[i] == "0" and i + 1 < len(tokens)
                self.odd_glued_left[tok] += glued_left
            else:  # even occurrence: does it glue to the previous one?
                self.even[tok] += 1
                self.even_glued[tok] += glued_left

    def update(self, other: GlueCounts) -> None:
        for mine, theirs in zip(self.counters(), other.counters()):
            mine.update(theirs)

    def learn(self, min_count: int = 2) -> Detokenizer:
        """The detokenizer these counts teach (module docstring)."""
        pair_glued = self.pair_glued
        pair_total = {cast(tuple[str, str], tuple(key.split(PAIR))): (n, pair_glued[key])
                      for key, n in self.pair_total.items()}
        paired = {t for t, n in self.even.items() if n >= min_count and self.even_glued[t] * 2 > n
                  and self.odd_glued[t] * 2 > self.odd[t] and self.odd_glued_left[t] * 2 < self.odd[t]}

        def majority(position: int, skip: set[str]) -> set[str]:
            total, glued = Counter[str](), Counter[str]()
            for pair, (n, n_glued) in pair_total.items():
                if pair[1 - position] not in skip:  # the other side must not explain the glue
                    total[pair[position]] += n
                    glued[pair[position]] += n_glued
            return {t for t, n in total.items() if n >= min_count and glued[t] * 2 > n}

        glue_before = majority(1, set())  # "." "," "'s": glued to whatever precedes
        glue_after = majority(0, glue_before)  # "(": glued to whatever follows
        glue_before = majority(1, glue_after)
        fallback = Detokenizer(set(), set(), glue_before, glue_after)
        glue_pairs, space_pairs = set[tuple[str, str]](), set[tuple[str, str]]()
        for pair, (n, n_glued) in pair_total.items():
            if n < min_count:
                continue
            glued = n_glued * 2 > n
            if glued != fallback.glued(*pair):  # store only where the pair overrules the tokens
                (glue_pairs if glued else space_pairs).add(pair)
        return Detokenizer(glue_pairs, space_pairs, glue_before - paired, glue_after - paired, paired)
