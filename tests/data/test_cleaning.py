"""Cleaning rules (nmt.data.cleaning, nmt.data.lexicon): noise injected into clean data.

A seeded sample of Multi30k train from the mirror (clean, aligned captions) gets a few percent of
each kind of noise: wrong-language pairs, swapped sides, copies, and misaligned pairs (right
languages, plausible lengths: a target replaced by the target of the pair next in length). The
rules of general/params.yaml's `validate.clean`, loaded from that file, must catch each kind and
drop almost no clean pair. Then each rule on hand-written pairs, and the duplicate look-up.

The dictionary rule (`min_lexical`) needs Ding's dictionary, /usr/share/trans/de-en (Debian
package trans-de-en, installed in CI); without it the misaligned assertions are skipped and the
other kinds are measured with that rule off.
"""

from __future__ import annotations

import dataclasses
import gzip
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from nmt.config.mix import CleanConfig
from nmt.config.params import load_params
from nmt.data import lexicon
from nmt.data.cleaning import (
    Cleaner,
    SeenPairs,
    alpha_share,
    number_mismatch,
    numbers,
    other_script_share,
    pair_digests,
    same,
    url_mismatch,
    urls,
)
from nmt.data.lexicon import LexicalScore
from nmt.errors import ConfigError
from nmt.text.langid import LanguageIdentifier
from support.corpus import ROOT

GENERAL = ROOT / "general" / "params.yaml"
LANGS = ("de", "en")
SAMPLE = 6_000  # pairs of Multi30k train (29,000), for speed
SHARE = 0.03  # of the sample, per kind of noise
SEED = 38

# Everyday sentences in languages around the pair: the wrong-language noise.
FOREIGN = {
    "fr": ["Je voudrais un café et un croissant, s'il vous plaît.", "Le train pour Lyon part dans dix minutes.",
           "Nous allons au marché tous les samedis matin.", "Mon frère travaille dans une petite boulangerie.",
           "Il fait très beau aujourd'hui, allons nous promener.", "Elle a oublié ses clés dans la voiture.",
           "Les enfants jouent dans le jardin derrière la maison.", "Pouvez-vous me dire où se trouve la gare ?",
           "J'ai lu ce livre pendant les vacances d'été.", "Un homme en chemise bleue attend le bus.",
           "La réunion a été reportée à jeudi prochain.", "Nous avons mangé une soupe délicieuse hier soir."],
    "es": ["Me gustaría reservar una mesa para dos personas.", "El museo está cerrado los lunes.",
           "Mi hermana vive en un piso cerca del parque.", "¿A qué hora sale el próximo autobús?",
           "Los niños están jugando al fútbol en la calle.", "Hoy hace mucho calor y no tengo ganas de salir.",
           "Compramos pan, queso y tomates en el mercado.", "Una mujer con un vestido rojo baila en la plaza.",
           "No encuentro mis gafas por ninguna parte.", "Vamos a la playa todos los veranos con mis abuelos.",
           "El perro duerme tranquilamente junto a la chimenea.", "¿Puedes ayudarme a llevar estas cajas?"],
    "it": ["Vorrei un bicchiere d'acqua, per favore.", "Il negozio apre alle nove di mattina.",
           "Mio padre cucina la pasta ogni domenica.", "I bambini giocano nel cortile della scuola.",
           "Dove posso comprare i biglietti per il treno?", "Oggi piove e resto a casa a leggere.",
           "Una ragazza con i capelli lunghi suona la chitarra.", "Abbiamo visitato una chiesa molto antica in centro.",
           "Il gatto dorme sul divano tutto il giorno.", "Domani andiamo al mare con gli amici.",
           "Non ho capito bene, puoi ripetere?", "La cena è pronta, venite a tavola."],
    "nl": ["Ik wil graag een kopje koffie met melk.", "De winkel is op zondag gesloten.",
           "Mijn zus fietst elke dag naar haar werk.", "Waar is het dichtstbijzijnde station?",
           "De kinderen spelen buiten in de tuin.", "Het regent al de hele ochtend.",
           "Een man met een hoed leest de krant op een bankje.", "We hebben gisteren heerlijk gegeten bij mijn ouders.",
           "Kun je mij helpen met mijn huiswerk?", "De hond rent achter een bal aan in het park.",
           "Volgende week gaan we op vakantie naar Frankrijk.", "Ik heb mijn telefoon thuis laten liggen."],
    "pl": ["Poproszę kawę z mlekiem i kawałek ciasta.", "Sklep jest zamknięty w niedzielę.",
           "Mój brat pracuje w szpitalu w Krakowie.", "Gdzie jest najbliższy przystanek autobusowy?",
           "Dzieci bawią się na placu zabaw przed szkołą.", "Dzisiaj jest bardzo zimno i pada śnieg.",
           "Kobieta w czerwonym płaszczu czeka na tramwaj.", "Wczoraj wieczorem oglądaliśmy ciekawy film.",
           "Czy możesz mi pomóc nieść te torby?", "Pies śpi spokojnie obok kominka.",
           "W przyszłym tygodniu jedziemy nad morze.", "Zapomniałem kluczy do mieszkania."],
}
FOREIGN_SENTENCES = [s for group in FOREIGN.values() for s in group]
KINDS = ("wrong language", "swapped", "copy", "misaligned")
# the rule each kind should be counted under (the first rule it fails, as the report shows it)
EXPECTED_RULE = {"wrong language": "wrong language", "swapped": "wrong language",
                 "copy": "same text on both sides", "misaligned": "dictionary coverage under {:g}"}
TARGET = {"wrong language": 0.95, "swapped": 0.95, "copy": 0.95, "misaligned": 0.70}
MAX_CLEAN_DROPPED = 0.01


def general_clean() -> CleanConfig:
    """`validate.clean` as general/params.yaml sets it (the whole file validated on the way)."""
    return load_params(GENERAL).validate.clean


def lexicon_missing(cfg: CleanConfig) -> str | None:
    if Path(cfg.lexicon).is_file():
        return None
    return (f"the dictionary rule (min_lexical) needs {cfg.lexicon}: apt-get install trans-de-en "
            "(CI installs it); misaligned pairs are not measured without it")


def identifier():
    """The language check as the validate stage builds it (nmt.data.validate.validate_corpus)."""
    ident = LanguageIdentifier.for_languages(LANGS)
    return lambda texts, lang: ident.mismatch(texts, lang, LANGS)


def read_gz(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()


def neighbours_by_length(texts: list[str]) -> list[int]:
    """For each text, the index of the text next to it when all are sorted by length (the last: the one
    before it): a replacement of plausible length."""
    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    out = [0] * len(texts)
    for pos, i in enumerate(order):
        out[i] = order[pos + 1] if pos + 1 < len(order) else order[pos - 1]
    return out


@pytest.fixture(scope="module")
def multi30k(mirror: Path) -> tuple[list[str], list[str]]:
    de, en = read_gz(mirror / "train.de.gz"), read_gz(mirror / "train.en.gz")
    assert len(de) == len(en) == 29_000
    return de, en


@dataclasses.dataclass
class Noisy:
    """The injected sample and what the cleaner did with it."""

    de: list[str]
    en: list[str]
    kinds: dict[str, list[int]]  # kind -> indices of its pairs
    clean: list[int]  # indices of the pairs left as published
    dropped: np.ndarray
    counts: Counter
    cfg: CleanConfig

    def rate(self, idx: list[int]) -> float:
        return float(self.dropped[idx].mean())

    def summary(self) -> str:
        rates = ", ".join(f"{k}: {self.rate(v):.1%} of {len(v)}" for k, v in self.kinds.items())
        return f"caught {rates}; clean pairs dropped: {self.rate(self.clean):.2%} of {len(self.clean)}"


def inject(de_all: list[str], en_all: list[str], seed: int = SEED) -> tuple[list[str], list[str], dict, list[int]]:
    """A seeded sample of SAMPLE pairs with SHARE of each kind of noise; (de, en, kinds, clean)."""
    rng = random.Random(seed)
    picked = rng.sample(range(len(de_all)), SAMPLE)
    outside = sorted(set(range(len(de_all))) - set(picked))  # English sentences of pairs not in the sample
    de, en = [de_all[i] for i in picked], [en_all[i] for i in picked]
    a, b = list(de), list(en)
    order = list(range(SAMPLE))
    rng.shuffle(order)
    k = int(SAMPLE * SHARE)
    kinds = {kind: sorted(order[j * k:(j + 1) * k]) for j, kind in enumerate(KINDS)}
    clean = sorted(order[len(KINDS) * k:])
    for j, i in enumerate(kinds["wrong language"]):
        if j % 3 == 0:
            b[i] = FOREIGN_SENTENCES[j % len(FOREIGN_SENTENCES)]  # the English side in another language
        elif j % 3 == 1:
            a[i] = FOREIGN_SENTENCES[j % len(FOREIGN_SENTENCES)]  # the German side in another language
        else:
            a[i] = en_all[rng.choice(outside)]  # English on the German side
    for i in kinds["swapped"]:
        a[i], b[i] = en[i], de[i]
    for j, i in enumerate(kinds["copy"]):
        if j % 3 == 0:
            a[i] = b[i] = de[i]
        elif j % 3 == 1:
            a[i] = b[i] = en[i]
        else:
            a[i], b[i] = en[i].upper().rstrip("."), en[i]  # a copy with case and punctuation changed
    nxt = neighbours_by_length(en)
    for i in kinds["misaligned"]:
        b[i] = en[nxt[i]]  # the target of the pair next in length
    noise = [i for idx in kinds.values() for i in idx]
    assert all((a[i], b[i]) != (de[i], en[i]) for i in noise)  # every injected pair is changed
    assert all(b[i] != en[i] and nxt[i] != i for i in kinds["misaligned"])
    return a, b, kinds, clean


@pytest.fixture(scope="module")
def clean_cfg() -> CleanConfig:
    cfg = general_clean()
    return cfg if lexicon_missing(cfg) is None else dataclasses.replace(cfg, min_lexical=0.0)


@pytest.fixture(scope="module")
def noisy(multi30k, clean_cfg: CleanConfig) -> Noisy:
    a, b, kinds, clean = inject(*multi30k)
    counts: Counter = Counter()
    cleaner = Cleaner(clean_cfg, LANGS, identifier())
    dropped = np.zeros(SAMPLE, dtype=bool)
    for start in range(0, SAMPLE, 2_000):  # in chunks, as the validate stage reads a source
        part = slice(start, start + 2_000)
        dropped[part] = cleaner.apply(a[part], b[part], np.zeros(len(a[part]), dtype=bool), counts)
    result = Noisy(a, b, kinds, clean, dropped, counts, clean_cfg)
    print(f"\n{result.summary()}\nper rule: {dict(counts)}")
    return result


@pytest.mark.parametrize("kind", ["wrong language", "swapped", "copy"])
def test_injected_noise_is_caught(noisy: Noisy, kind: str) -> None:
    rate = noisy.rate(noisy.kinds[kind])
    missed = [(noisy.de[i], noisy.en[i]) for i in noisy.kinds[kind] if not noisy.dropped[i]][:5]
    assert rate >= TARGET[kind], f"{kind}: {rate:.1%} caught (target {TARGET[kind]:.0%}), missed e.g. {missed}"


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_is_counted_under_its_rule(noisy: Noisy, kind: str) -> None:
    """Run alone, a kind's pairs are counted (mostly) under the rule made for them."""
    if kind == "misaligned" and noisy.cfg.min_lexical == 0:
        pytest.skip(lexicon_missing(general_clean()))
    idx = noisy.kinds[kind]
    counts: Counter = Counter()
    Cleaner(noisy.cfg, LANGS, identifier()).apply([noisy.de[i] for i in idx], [noisy.en[i] for i in idx],
                                                 np.zeros(len(idx), dtype=bool), counts)
    rule = EXPECTED_RULE[kind].format(noisy.cfg.min_lexical)
    least = 0.6 if kind == "misaligned" else TARGET[kind]
    assert counts[rule] >= least * len(idx), f"{kind}: {dict(counts)}"


def test_clean_pairs_are_kept(noisy: Noisy) -> None:
    rate = noisy.rate(noisy.clean)
    lost = [(noisy.de[i], noisy.en[i]) for i in noisy.clean if noisy.dropped[i]][:5]
    assert rate < MAX_CLEAN_DROPPED, f"{rate:.2%} of the clean pairs dropped ({noisy.summary()}), e.g. {lost}"


def test_misaligned_pairs_are_caught_in_the_sample(noisy: Noisy) -> None:
    """The dictionary rule catches most misaligned pairs of the sample (the other rules catch almost
    none: right languages, plausible lengths). The issue's 70% target is asserted on the whole of
    Multi30k below: 180 pairs are too few to tell 68% from 71%."""
    if noisy.cfg.min_lexical == 0:
        pytest.skip(lexicon_missing(general_clean()))
    rate = noisy.rate(noisy.kinds["misaligned"])
    assert rate >= 0.6, f"misaligned: {rate:.1%} caught ({noisy.summary()})"
    without = Cleaner(dataclasses.replace(noisy.cfg, min_lexical=0.0), LANGS, identifier())
    idx = noisy.kinds["misaligned"]
    others = without.apply([noisy.de[i] for i in idx], [noisy.en[i] for i in idx], np.zeros(len(idx), bool), Counter())
    assert others.mean() < 0.1  # it is the dictionary rule that catches them


def test_misaligned_catch_rate_on_all_of_multi30k(multi30k) -> None:
    """Every pair of Multi30k train misaligned with the pair next in length (29,000 pairs: the rate to
    within half a point), through all of general/params.yaml's rules."""
    cfg = general_clean()
    if (why := lexicon_missing(cfg)) is not None:
        pytest.skip(why)
    de, en = multi30k
    nxt = neighbours_by_length(en)
    b = [en[j] for j in nxt]
    dropped = Cleaner(dataclasses.replace(cfg, dedupe=False), LANGS, identifier()).apply(
        de, b, np.zeros(len(de), dtype=bool), Counter())
    rate = float(dropped.mean())
    print(f"\nmisaligned (all of Multi30k train): {rate:.1%} caught")
    assert rate >= TARGET["misaligned"], f"misaligned: {rate:.1%} caught (target 70%)"


# --- each rule on hand-written pairs -------------------------------------------------------------


def mask(rule, pairs: list[tuple[str, str]]) -> list[bool]:
    return rule([a for a, _ in pairs], [b for _, b in pairs]).tolist()


def test_same_sides_after_normalization() -> None:
    pairs = [("Ein Hund.", "ein  hund"),  # case, punctuation and whitespace do not make a translation
             ("Ein Hund.", "A dog."),
             ("Hallo", "Hallo!"),
             ("", ""),  # empty sides are the row checks' concern
             ("...", "!!!")]  # nothing left after normalization
    assert mask(same, pairs) == [True, False, True, False, False]


@pytest.mark.parametrize(("de", "en", "bad"), [
    ("Das kostet 3,5 Euro.", "That costs 3.5 euros.", False),  # decimal comma vs point
    ("Es kamen 1.000 Leute.", "1,000 people came.", False),  # thousands separators
    ("Es kamen 1.000 Leute.", "1000 people came.", False),
    ("Zimmer 12 und 14", "rooms 14 and 12", False),  # a set: order does not matter
    ("Er ist 20 Jahre alt.", "He is 21 years old.", True),
    ("Er ist 20 Jahre alt.", "He is 20 years old, born in 2004.", True),  # a number on one side only
    ("Er ist zwanzig Jahre alt.", "He is 20 years old.", False),  # spelled out on one side: fine
    ("Er ist 20 Jahre alt.", "He is twenty years old.", False),
    ("Keine Zahlen hier.", "No numbers here.", False),
])
def test_numbers_rule(de: str, en: str, bad: bool) -> None:
    assert mask(number_mismatch, [(de, en)]) == [bad]


def test_numbers_are_canonical_whatever_the_separators() -> None:
    assert numbers("3,5 und 1.000.000 und 7") == {"3.5", "1000000", "7"}
    assert numbers("3.5 and 1,000,000 and 7") == {"3.5", "1000000", "7"}
    assert numbers("35") != numbers("3,5")  # a decimal mark is not a thousands separator
    assert numbers("keine") == frozenset()


@pytest.mark.parametrize(("de", "en", "bad"), [
    ("Siehe www.example.com.", "See www.example.com", False),  # trailing punctuation is not part of it
    ("Mehr unter https://Example.org/a?b=1", "More at https://example.org/a?b=1.", False),  # case-insensitive
    ("Schreib an info@example.de!", "Write to info@example.de.", False),
    ("Siehe www.example.com.", "See www.example.org.", True),
    ("Siehe www.example.com.", "See the website.", True),  # on one side only
    ("Schreib an info@example.de!", "Write to help@example.de.", True),
    ("Keine Adresse.", "No address.", False),
])
def test_urls_rule(de: str, en: str, bad: bool) -> None:
    assert mask(url_mismatch, [(de, en)]) == [bad]


def test_urls_are_normalized() -> None:
    assert urls("Go to WWW.Example.COM/Path). Or mail A.B@x.de, now") == {"www.example.com/path", "a.b@x.de"}


def test_other_script_share() -> None:
    assert other_script_share("Привет, мир!") == 1.0
    assert other_script_share("Café Müller, façade, Øre, Ærø, Straße") == 0.0  # Latin with diacritics
    assert other_script_share("1234 !!!") == 0.0  # no letters at all
    assert other_script_share("Tokyo heißt 東京") == pytest.approx(2 / 12)
    assert other_script_share("the α particle") == pytest.approx(1 / 12)


def test_letter_share() -> None:
    assert alpha_share("Hallo Welt") == 1.0
    assert alpha_share("") == 1.0 and alpha_share("   ") == 1.0
    assert alpha_share("123 456 !!") == 0.0
    assert alpha_share("ab 12") == 0.5  # spaces do not count


def cleaner(**rules) -> Cleaner:
    return Cleaner(CleanConfig(**rules), LANGS)


def apply(c: Cleaner, pairs: list[tuple[str, str]], dropped: list[bool] | None = None) -> tuple[list[bool], Counter]:
    counts: Counter = Counter()
    skip = np.zeros(len(pairs), dtype=bool) if dropped is None else np.array(dropped)
    out = c.apply([a for a, _ in pairs], [b for _, b in pairs], skip, counts)
    return out.tolist(), counts


def test_letter_share_and_script_rules_through_the_cleaner() -> None:
    pairs = [("Ein Hund läuft.", "A dog runs."),
             ("@@ 123 ###", "A dog runs."),  # hardly a letter
             ("Ein Hund läuft.", "Собака бежит."),  # Cyrillic
             ("Der Ort heißt Tokio (東京).", "The place is called Tokyo (東京).")]  # a little of another script
    out, counts = apply(cleaner(min_alpha=0.3, max_other_script=0.1), pairs)
    assert out == [False, True, True, True]
    assert counts == {"letters under 0.3 of characters": 1, "non-Latin letters over 0.1": 2}
    out, _ = apply(cleaner(min_alpha=0.3, max_other_script=0.2), pairs)
    assert out == [False, True, True, False]


def test_every_rule_off_drops_nothing() -> None:
    pairs = [("Hallo", "Hallo"), ("1", "2"), ("www.a.de", "x"), ("Привет", "Привет"), ("Hallo", "Hallo")]
    c = Cleaner(CleanConfig(), LANGS)
    assert c.rules() == []
    assert apply(c, pairs) == ([False] * 5, Counter())


def test_a_pair_is_counted_under_the_first_rule_it_fails() -> None:
    pairs = [("Zimmer 12", "Zimmer 12"),  # a copy (its numbers agree)
             ("Zimmer 12", "Room 13"),  # numbers differ
             ("Zimmer 12 http://a.de", "zimmer 12, HTTP://A.DE"),  # a copy whose URLs agree
             ("Zimmer 12, www.a.de", "Room 13, www.b.de"),  # numbers and URLs differ: numbers come first
             ("Raum 7", "Room 7")]
    out, counts = apply(cleaner(same=True, numbers=True, urls=True), pairs)
    assert out == [True, True, True, True, False]
    assert counts == {"same text on both sides": 2, "numbers differ": 2, "URLs or e-mail addresses differ": 0}


def test_pairs_already_dropped_are_not_looked_at_again() -> None:
    pairs = [("Hallo", "Hallo"), ("Hallo", "Hallo"), ("Ein Hund", "A dog")]
    out, counts = apply(cleaner(same=True, dedupe=True), pairs, dropped=[True, False, False])
    assert out == [True, True, False]
    assert counts == {"same text on both sides": 1, "repeated pair": 0}


def test_langid_rule_needs_an_identifier() -> None:
    with pytest.raises(ValueError, match="language identifier"):
        apply(cleaner(langid=True), [("Ein Hund läuft.", "A dog runs.")])


def test_langid_rule_and_its_minimum_length() -> None:
    pairs = [("Ein Hund läuft über die Straße.", "A dog runs across the street."),
             ("A dog runs across the street.", "Ein Hund läuft über die Straße."),  # swapped
             ("Danke.", "Merci beaucoup, mon ami."),  # French target
             ("Hi.", "Hallo.")]  # swapped, short
    out, counts = apply(Cleaner(CleanConfig(langid=True), LANGS, identifier()), pairs)
    assert out == [False, True, True, True] and counts == {"wrong language": 3}
    out, _ = apply(Cleaner(CleanConfig(langid=True, langid_min_chars=8), LANGS, identifier()), pairs)
    assert out == [False, True, True, False]  # the short sides are not judged


# --- the dictionary rule, on a small dictionary in Ding's format ---------------------------------

DING = """\
# Version :: test
Hund {m} [zool.] | Hunde {pl} :: dog | dogs
Mann {m}; Männer {pl} :: man; men
Frau {f} | Frauen {pl} :: woman | women
Ball {m} :: ball
Park {m} :: park
rot {adj} :: red
blau {adj} :: blue
Hemd {n} :: shirt
spielen {vi} | spielend | er/sie spielt :: to play | playing | he/she plays
laufen {vi} | er/sie läuft :: to run | he/she runs
Straße {f} :: street; road
Wer anderen eine Grube gräbt, fällt selbst hinein. [Sprw.] :: Curses, like chickens, come home to roost. [prov.]
"""


@pytest.fixture
def ding(tmp_path: Path) -> Path:
    path = tmp_path / "de-en"
    path.write_text(DING, encoding="utf-8")
    return path


def test_lexical_coverage(ding: Path) -> None:
    lex = LexicalScore(ding, LANGS)
    assert lex.coverage("Ein Mann in einem blauen Hemd spielt Ball.", "A man in a blue shirt plays ball.") == 1.0
    assert lex.coverage("Die Frau läuft auf der Straße.", "A woman runs on the road.") == 1.0
    assert lex.coverage("Ein Mann in einem blauen Hemd spielt Ball.", "A woman runs on the road.") == 0.0
    # de: Männer and Hund known, Männer found (1/2); en: men known and found (1/1); the mean of the sides
    assert lex.coverage("Zwei Männer und ein Hund.", "Two men and a cat.") == 0.75
    assert lex.coverage("Ein Tisch.", "A table.") is None  # nothing the dictionary knows: nothing to judge
    # words of a proverb (more than three words a side) are no word translations
    assert lex.coverage("Eine Grube.", "Chickens come home.") is None


def test_lexical_rule_in_the_cleaner(ding: Path) -> None:
    pairs = [("Ein Mann in einem blauen Hemd spielt Ball.", "A man in a blue shirt plays ball."),
             ("Ein Mann in einem blauen Hemd spielt Ball.", "A woman runs on the road."),  # misaligned
             ("Ein Tisch.", "A table.")]  # unknown words: kept
    out, counts = apply(Cleaner(CleanConfig(min_lexical=0.3, lexicon=str(ding)), LANGS), pairs)
    assert out == [False, True, False] and counts == {"dictionary coverage under 0.3": 1}


def test_lexical_rule_without_the_dictionary_says_how_to_get_it(tmp_path: Path) -> None:
    c = Cleaner(CleanConfig(min_lexical=0.3, lexicon=str(tmp_path / "nope")), LANGS)
    with pytest.raises(ConfigError) as err:
        apply(c, [("Hund", "dog")])
    msg = str(err.value)
    assert "validate.clean.lexicon" in msg and "nope" in msg and "trans-de-en" in msg and "min_lexical: 0" in msg


def test_the_word_memo_is_bounded_and_starts_afresh_when_full(ding: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More word types than the memo holds (the general mix with the WMT systems' outputs has them): the
    memo starts afresh and the word being looked up is still answered (it once raised KeyError)."""
    monkeypatch.setattr(lexicon, "MEMO_WORDS", 2)
    lex = LexicalScore(ding, LANGS)
    assert lex.coverage("Ein Mann in einem blauen Hemd spielt Ball.", "A man in a blue shirt plays ball.") == 1.0
    assert len(lex._memo) <= 2
    assert lex.coverage("Zwei Männer und ein Hund.", "Two men and a cat.") == 0.75


def test_lexical_rule_is_german_english_only(ding: Path) -> None:
    with pytest.raises(ConfigError, match="German-English"):
        LexicalScore(ding, ("de", "fr"))


# --- repeated pairs -------------------------------------------------------------------------------


def seen_pairs(seen: SeenPairs, pairs: list[tuple[str, str]], skip: list[bool] | None = None) -> list[bool]:
    s = np.zeros(len(pairs), dtype=bool) if skip is None else np.array(skip)
    return seen.repeated(pair_digests([a for a, _ in pairs], [b for _, b in pairs]), s).tolist()


def test_seen_pairs_keeps_the_first_within_a_chunk() -> None:
    seen = SeenPairs()
    assert seen_pairs(seen, [("a", "x"), ("b", "y"), ("a", "x"), ("a", "x"), ("a", "z")]) == [
        False, False, True, True, False]
    assert len(seen.seen) == 3 and list(seen.seen) == sorted(seen.seen)


def test_seen_pairs_keeps_the_first_across_chunks() -> None:
    seen = SeenPairs()
    assert seen_pairs(seen, [("a", "x"), ("b", "y")]) == [False, False]
    assert seen_pairs(seen, [("c", "z"), ("b", "y"), ("c", "z")]) == [False, True, True]
    assert seen_pairs(seen, [("a", "x"), ("d", "w")]) == [True, False]
    assert len(seen.seen) == 4


def test_seen_pairs_are_pair_level() -> None:
    """Tatoeba gives several translations of one sentence: only the same pair is a repeat."""
    seen = SeenPairs()
    assert seen_pairs(seen, [("Hallo!", "Hi."), ("Hallo!", "Hello."), ("Hi.", "Hallo!")]) == [False] * 3


def test_seen_pairs_ignore_skipped_pairs() -> None:
    seen = SeenPairs()
    # a skipped pair is neither a repeat nor remembered: its next, unskipped, copy is the first
    assert seen_pairs(seen, [("a", "x"), ("a", "x"), ("b", "y")], skip=[True, False, True]) == [False, False, False]
    assert seen_pairs(seen, [("b", "y"), ("a", "x")]) == [False, True]
    assert seen_pairs(seen, [("a", "x"), ("b", "y")], skip=[True, True]) == [False, False]
    assert seen_pairs(seen, []) == []


def test_dedupe_through_the_cleaner_across_chunks() -> None:
    c = cleaner(same=True, dedupe=True)
    out, counts = apply(c, [("Ein Hund", "A dog"), ("Hallo", "Hallo"), ("Ein Hund", "A dog")])
    assert out == [False, True, True] and counts == {"same text on both sides": 1, "repeated pair": 1}
    out, counts = apply(c, [("Hallo", "Hallo"), ("Ein Hund", "A dog"), ("Eine Katze", "A cat")])
    assert out == [True, True, False] and counts == {"same text on both sides": 1, "repeated pair": 1}
