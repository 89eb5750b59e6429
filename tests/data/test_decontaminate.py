"""Decontamination (nmt.data.decontaminate): planted exact and near duplicates of dev/test
sentences in a training set of unrelated sentences.

The index is 500 pairs of newstest2014 (and 300 of newstest2013, to tell the sets apart); the
training set is newstest2012 (unrelated news of the same kind) with copies planted: exact ones
(case, punctuation and whitespace changed), near ones (a word changed in a long sentence), and
short sentences that differ from a test sentence by a word, which are different sentences and
must not be flagged. Skipped where the WMT mirror is absent.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

from nmt.config.mix import DecontaminateConfig
from nmt.data.decontaminate import ContaminationIndex, Decontaminator, MinHasher, normalize
from support.corpus import ROOT

LANGS = ("de", "en")
CFG = DecontaminateConfig(enabled=True)  # the defaults general/params.yaml also sets
SEED = 38
LONG = 150  # normalized characters of a "long" sentence, for the near duplicates


def wmt_folder(mirror: Path) -> Path:
    """The WMT news mirror beside the Multi30k one (or in the shared data folder)."""
    for folder in (mirror.parent / "wmt-news", ROOT.parent / "shared" / "data" / "wmt-news"):
        if (folder / "newstest2014.de-en.de").is_file():
            return folder
    pytest.skip(f"WMT news mirror not found beside {mirror}")


def read(folder: Path, name: str, n: int | None = None) -> tuple[list[str], list[str]]:
    de, en = ((folder / f"{name}.de-en.{lang}").read_text(encoding="utf-8").splitlines() for lang in LANGS)
    return de[:n], en[:n]


@pytest.fixture(scope="module")
def sets(mirror: Path) -> dict[str, tuple[list[str], list[str]]]:
    folder = wmt_folder(mirror)
    return {"newstest2014": read(folder, "newstest2014", 500), "newstest2013": read(folder, "newstest2013", 300),
            "train": read(folder, "newstest2012")}


def index(sets) -> Decontaminator:
    decon = Decontaminator(CFG, LANGS)
    for name in ("newstest2014", "newstest2013"):
        decon.add(*sets[name], name)
    return decon


def check(decon: Decontaminator, a: list[str], b: list[str]) -> list[bool]:
    return decon.check(a, b, np.zeros(len(a), dtype=bool)).tolist()


# --- what is planted ------------------------------------------------------------------------------

# ways to change a sentence that keep it the same sentence
VARIANTS = [
    str.upper,
    str.lower,
    lambda s: re.sub(r"(?<!\S)[^\w\s]+|[^\w\s]+(?!\S)", "", s),  # punctuation at word edges removed
    lambda s: "  " + re.sub(r" ", "   ", s) + " \t",  # whitespace runs
    lambda s: re.sub(r"[.!?]$", "!!!", s.replace(",", " ,")).replace('"', "„"),  # punctuation changed
    lambda s: s.replace(" ", "\u00a0").casefold(),  # no-break spaces, case folded
]


def change_a_word(text: str, rng: random.Random) -> str:
    """`text` with one word (of 5+ letters, not the first or last) replaced by another."""
    words = text.split(" ")
    candidates = [j for j, w in enumerate(words) if len(w) >= 5 and w.isalpha() and 0 < j < len(words) - 1]
    j = rng.choice(candidates)
    words[j] = "Wortwechsel" if words[j] != "Wortwechsel" else "Beispiel"
    return " ".join(words)


def plant_exact(sets, rng: random.Random, n: int) -> tuple[list[str], list[str], list[str]]:
    """n training pairs with one side a changed copy of a test sentence; (de, en, the set of each)."""
    de, en, owners = [], [], []
    train_de, train_en = sets["train"]
    for j in range(n):
        owner = "newstest2014" if j % 3 else "newstest2013"
        i = rng.randrange(len(sets[owner][0]))
        vary = VARIANTS[j % len(VARIANTS)]
        filler = rng.randrange(len(train_de))
        if j % 2:
            de.append(vary(sets[owner][0][i]))
            en.append(train_en[filler])
        else:
            de.append(train_de[filler])
            en.append(vary(sets[owner][1][i]))
        owners.append(owner)
    return de, en, owners


def plant_near(sets, rng: random.Random) -> tuple[list[str], list[str]]:
    """Every long newstest2014 pair with a word changed on one side (the other side unrelated)."""
    test_de, test_en = sets["newstest2014"]
    train_de, train_en = sets["train"]
    de, en = [], []
    for j, i in enumerate(k for k in range(len(test_de)) if min(len(normalize(test_de[k])),
                                                                 len(normalize(test_en[k]))) >= LONG):
        filler = rng.randrange(len(train_de))
        if j % 2:
            de.append(change_a_word(test_de[i], rng))
            en.append(train_en[filler])
        else:
            de.append(train_de[filler])
            en.append(change_a_word(test_en[i], rng))
    return de, en


SWAP_WORDS = {"de": ["Haus", "Baum", "Zeit", "Welt", "Stadt", "Kinder", "Zeitung", "Regierung", "Fußballspiel"],
              "en": ["house", "tree", "time", "world", "city", "children", "newspaper", "government", "champagne"]}


def another_word(text: str, lang: str) -> str:
    """`text` with its longest word (of letters only) replaced by a different word of about its length."""
    words = text.split(" ")
    cores = [w.strip(".,;:!?\"'") for w in words]
    j = max((k for k, c in enumerate(cores) if c.isalpha()), key=lambda k: len(cores[k]))
    new = min((w for w in SWAP_WORDS[lang] if w.casefold() != cores[j].casefold()),
              key=lambda w: abs(len(w) - len(cores[j])))
    words[j] = words[j].replace(cores[j], new)
    return " ".join(words)


def short_test_sentences(sets) -> list[tuple[str, int]]:
    """(sentence, side) of the test sentences too short for the near look-up, of two words or more."""
    out = []
    for side in (0, 1):
        for text in sets["newstest2014"][side]:
            norm = normalize(text)
            if len(norm) < CFG.near_min_chars and len(norm.split()) >= 2:
                out.append((text, side))
    return out


# --- planted duplicates ---------------------------------------------------------------------------


def test_unrelated_sentences_are_not_flagged(sets) -> None:
    decon = index(sets)
    assert check(decon, *sets["train"]) == [False] * len(sets["train"][0])
    assert decon.per_set() == {}


def test_exact_copies_are_all_found(sets) -> None:
    decon = index(sets)
    de, en, owners = plant_exact(sets, random.Random(SEED), 120)
    found = check(decon, de, en)
    missed = [(x, y) for x, y, f in zip(de, en, found) if not f]
    assert all(found), f"{len(missed)} of {len(de)} exact copies missed, e.g. {missed[:3]}"
    assert decon.per_set() == {"newstest2013": {"exact": owners.count("newstest2013"), "near": 0},
                               "newstest2014": {"exact": owners.count("newstest2014"), "near": 0}}


def test_near_duplicates_are_found(sets) -> None:
    decon = index(sets)
    de, en = plant_near(sets, random.Random(SEED))
    assert len(de) >= 100  # long sentences enough to measure a rate
    found = check(decon, de, en)
    rate = sum(found) / len(found)
    print(f"\nnear duplicates (a word changed, {LONG}+ characters): {rate:.1%} of {len(found)} found")
    assert rate >= 0.9, f"{rate:.1%} of {len(found)} near duplicates found"
    assert decon.per_set() == {"newstest2014": {"exact": 0, "near": sum(found)}}


def test_short_sentences_that_differ_by_a_word_are_not_flagged(sets) -> None:
    decon = index(sets)
    short = short_test_sentences(sets)
    assert len(short) >= 10
    changed = [another_word(text, LANGS[side]) for text, side in short]
    assert all(normalize(c) != normalize(t) and len(normalize(c).split()) == len(normalize(t).split())
               for c, (t, _) in zip(changed, short))
    filler_de, filler_en = sets["train"]
    de = [c if side == 0 else filler_de[i] for i, (c, (_, side)) in enumerate(zip(changed, short))]
    en = [c if side == 1 else filler_en[i] for i, (c, (_, side)) in enumerate(zip(changed, short))]
    assert check(decon, de, en) == [False] * len(short), list(zip(de, en))
    # while their exact copies are found
    de = [t if side == 0 else filler_de[i] for i, (t, side) in enumerate(short)]
    en = [t if side == 1 else filler_en[i] for i, (t, side) in enumerate(short)]
    assert check(decon, de, en) == [True] * len(short)


def test_a_planted_training_set_counts_per_set(sets) -> None:
    """Exact and near copies among all of newstest2012, shuffled: exactly the planted pairs are flagged,
    counted under the set they copy."""
    rng = random.Random(SEED + 1)
    ex_de, ex_en, owners = plant_exact(sets, rng, 60)
    near_de, near_en = plant_near(sets, rng)
    rows = [(a, b, "exact", o) for a, b, o in zip(ex_de, ex_en, owners)]
    rows += [(a, b, "near", "newstest2014") for a, b in zip(near_de, near_en)]
    rows += [(a, b, None, None) for a, b in zip(*sets["train"])]
    rng.shuffle(rows)
    decon = index(sets)
    found = []
    for start in range(0, len(rows), 1000):  # chunk by chunk, as the validate stage calls it
        part = rows[start:start + 1000]
        found += check(decon, [r[0] for r in part], [r[1] for r in part])
    assert not any(f for f, r in zip(found, rows) if r[2] is None)  # no unrelated pair
    assert all(f for f, r in zip(found, rows) if r[2] == "exact")
    near = [f for f, r in zip(found, rows) if r[2] == "near"]
    assert sum(near) >= 0.9 * len(near)
    per_set = decon.per_set()
    assert list(per_set) == ["newstest2013", "newstest2014"]
    assert per_set["newstest2013"] == {"exact": owners.count("newstest2013"), "near": 0}
    assert per_set["newstest2014"] == {"exact": owners.count("newstest2014"), "near": sum(near)}
    assert sum(v for c in per_set.values() for v in c.values()) == sum(found)


def test_skipped_pairs_are_not_looked_up(sets) -> None:
    decon = index(sets)
    de, en = sets["newstest2014"][0][:4], sets["newstest2014"][1][:4]
    assert decon.check(de, en, np.array([True, False, True, False])).tolist() == [False, True, False, True]
    assert decon.per_set() == {"newstest2014": {"exact": 2, "near": 0}}


def test_each_side_is_looked_up_in_its_language(sets) -> None:
    """An English test sentence on the German side is not a copy of it (sides are indexed per language)."""
    decon = index(sets)
    test_de, test_en = sets["newstest2014"]
    assert check(decon, [test_en[0]], ["Something else entirely, and long enough to be compared."]) == [False]
    assert check(decon, ["Etwas ganz anderes."], [test_en[0]]) == [True]


def test_a_sentence_in_two_sets_counts_for_the_first_indexed() -> None:
    decon = Decontaminator(CFG, LANGS)
    decon.add(["Das ist ein Satz."], ["This is a sentence."], "first")
    decon.add(["Das ist ein Satz."], ["This is a sentence."], "second")
    assert check(decon, ["Das ist ein Satz!"], ["x"]) == [True]
    assert decon.per_set() == {"first": {"exact": 1, "near": 0}}


def test_empty_and_punctuation_only_sentences_are_not_indexed() -> None:
    """A test set's empty line must not remove every training pair with an empty side."""
    decon = Decontaminator(CFG, LANGS)
    decon.add(["", "...", "Ein Satz."], ["", "—", "A sentence."], "test")
    assert check(decon, ["", "!!!", "Ein Satz"], ["", "?", "Something else"]) == [False, False, True]


def test_near_threshold_and_min_chars_are_the_configured_ones() -> None:
    text = "Der Bundestag hat am Donnerstag nach langer Debatte das neue Gesetz zur Reform der Pflege beschlossen."
    changed = text.replace("Donnerstag", "Mittwoch")
    assert len(normalize(text)) > 80
    loose = Decontaminator(DecontaminateConfig(enabled=True, near_threshold=0.5), LANGS)
    strict = Decontaminator(DecontaminateConfig(enabled=True, near_threshold=1.0), LANGS)
    exact_only = Decontaminator(DecontaminateConfig(enabled=True, near_threshold=0.5, near_min_chars=200), LANGS)
    for d in (loose, strict, exact_only):
        d.add([text], ["x"], "test")
    assert check(loose, [changed], ["y"]) == [True] and loose.per_set() == {"test": {"exact": 0, "near": 1}}
    assert check(strict, [changed], ["y"]) == [False]
    assert check(exact_only, [changed], ["y"]) == [False]
    assert check(exact_only, [text.upper()], ["y"]) == [True]


def test_minhash_estimates_jaccard_similarity() -> None:
    hasher = MinHasher(256, 5)
    a = "the quick brown fox jumps over the lazy dog near the river bank"
    b = "the quick brown fox jumps over the lazy cat near the river bank"

    def grams(s: str) -> set[str]:
        return {s[i:i + 5] for i in range(len(s) - 4)}

    jaccard = len(grams(a) & grams(b)) / len(grams(a) | grams(b))
    estimate = float(np.mean(hasher.signature(a) == hasher.signature(b)))
    assert abs(estimate - jaccard) < 0.1, (estimate, jaccard)
    assert np.array_equal(hasher.signature(a), MinHasher(256, 5).signature(a))  # seeded: the same every run
    assert float(np.mean(hasher.signature(a) == hasher.signature("completely different words here"))) < 0.1


def test_index_holds_only_long_sentences_for_the_near_look_up() -> None:
    idx = ContaminationIndex(CFG)
    idx.add(["Kurz.", "Ein Satz, der lang genug für den Vergleich ist."], "test")
    assert len(idx.exact) == 2 and len(idx.signatures) == 1 and idx.owners == ["test"]
    assert sum(len(v) for v in idx.buckets.values()) == CFG.bands


# --- normalize ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("  Hello,   World!  ", "hello world"),  # punctuation gone, whitespace collapsed and stripped
    ("Straße", "strasse"),  # case folded, not just lowered
    ("GROSSE Straße", "grosse strasse"),
    ("ﬁne", "fine"),  # NFKC: the ligature is two letters
    ("ＡＢＣ１２３", "abc123"),  # NFKC: full-width forms
    ("Cafe\u0301", "café"),  # NFKC composes the accent
    ("Tom's car — 3,5 € (ok)", "tom s car 3 5 ok"),  # symbols and punctuation are separators
    ("snake_case\tand\nlines", "snake case and lines"),  # underscores and every whitespace too
    ("Привет, мир!", "привет мир"),  # letters of any script stay
    ("„Anführungszeichen“ «quotes»", "anführungszeichen quotes"),
    ("...", ""),
    ("", ""),
])
def test_normalize(text: str, expected: str) -> None:
    assert normalize(text) == expected
    assert normalize(expected) == expected  # idempotent


def test_normalize_makes_the_variants_equal(sets) -> None:
    for text in sets["newstest2014"][0][:50] + sets["newstest2014"][1][:50]:
        assert {normalize(vary(text)) for vary in VARIANTS} == {normalize(text)}, text
