"""Language identification (nmt.text.langid): German and English told apart, other European
languages named, scores in range, and `mismatch`, the cleaning rule's decision: a swapped side is
flagged even when short, a text without letters is never judged."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from nmt.text.langid import LANGUAGES, UNDETERMINED, Detection, LanguageIdentifier

PAIR = ("de", "en")
GERMAN = ["Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt ein Fenster.",
          "Ich habe heute keine Zeit, aber morgen können wir uns treffen.",
          "Wo ist der nächste Bahnhof?", "Die Kinder spielen im Garten.", "Tom schläft."]
ENGLISH = ["A man in a blue shirt is standing on a ladder cleaning a window.",
           "I don't have time today, but we can meet tomorrow.",
           "Where is the nearest train station?", "The children are playing in the garden.", "Tom is asleep."]
OTHERS = {"fr": "Je voudrais un café et un croissant, s'il vous plaît.",
          "es": "Me gustaría reservar una mesa para dos personas.",
          "it": "Vorrei un bicchiere d'acqua, per favore.",
          "nl": "Ik wil graag een kopje koffie met melk.",
          "pl": "Poproszę kawę z mlekiem i kawałek ciasta."}
SHORT = [("Danke.", "de"), ("Wo ist er?", "de"), ("Es regnet.", "de"), ("Lauf!", "de"),
         ("Run!", "en"), ("Hi.", "en"), ("I'm tired.", "en"), ("Where is he?", "en")]
NO_LETTERS = ["", "1234 - 5678", "!!!", "😀 🎉", "3,5 % / 20 €"]


@pytest.fixture(scope="module")
def ident() -> LanguageIdentifier:
    return LanguageIdentifier.for_languages(PAIR)


def test_candidates_are_the_pair_and_the_common_european_languages(ident: LanguageIdentifier) -> None:
    assert ident.languages[:len(LANGUAGES)] == LANGUAGES and set(PAIR) <= set(ident.languages)
    assert LanguageIdentifier.for_languages(("en", "uk")).languages == ("en", "uk", *[x for x in LANGUAGES
                                                                                      if x != "en"])


@pytest.mark.parametrize(("texts", "lang"), [(GERMAN, "de"), (ENGLISH, "en")])
def test_german_and_english_are_identified(ident: LanguageIdentifier, texts: list[str], lang: str) -> None:
    found = [ident.detect(t) for t in texts]
    assert [d.language for d in found] == [lang] * len(texts), found
    assert all(0.0 < d.confidence <= 100.0 for d in found), found


@pytest.mark.parametrize("lang", sorted(OTHERS))
def test_other_languages_are_named(ident: LanguageIdentifier, lang: str) -> None:
    d = ident.detect(OTHERS[lang])
    assert d.language == lang, d
    assert 0.0 <= d.confidence <= 100.0 and d.reliable


def test_french_is_named_fr_and_is_wrong_for_either_side(ident: LanguageIdentifier) -> None:
    text = "Les enfants jouent dans le jardin derrière la maison."
    assert ident.detect(text).language == "fr"
    assert ident.mismatch([text], "de", PAIR).tolist() == [True]
    assert ident.mismatch([text], "en", PAIR).tolist() == [True]


def test_confidence_is_a_score_between_0_and_100(ident: LanguageIdentifier) -> None:
    for text in GERMAN + ENGLISH + list(OTHERS.values()) + [s for s, _ in SHORT] + NO_LETTERS:
        d = ident.detect(text)
        assert isinstance(d, Detection) and 0.0 <= d.confidence <= 100.0, (text, d)
        assert round(d.confidence, 1) == d.confidence


def test_mismatch_flags_the_swapped_side(ident: LanguageIdentifier) -> None:
    assert ident.mismatch(GERMAN, "de", PAIR).tolist() == [False] * len(GERMAN)
    assert ident.mismatch(ENGLISH, "en", PAIR).tolist() == [False] * len(ENGLISH)
    assert ident.mismatch(ENGLISH, "de", PAIR).tolist() == [True] * len(ENGLISH)  # English on the German side
    assert ident.mismatch(GERMAN, "en", PAIR).tolist() == [True] * len(GERMAN)


def test_mismatch_flags_a_swapped_short_text(ident: LanguageIdentifier) -> None:
    """Short texts are often not 'reliable' for eldc; the pair's other language is flagged anyway."""
    texts = [s for s, _ in SHORT]
    right = [ident.mismatch([s], lang, PAIR)[0] for s, lang in SHORT]
    other = {"de": "en", "en": "de"}
    swapped = [ident.mismatch([s], other[lang], PAIR)[0] for s, lang in SHORT]
    assert right == [False] * len(SHORT), list(zip(texts, right))
    assert swapped == [True] * len(SHORT), list(zip(texts, swapped))
    assert any(not ident.detect(s).reliable for s in texts)  # the case the pair rule exists for


@pytest.mark.parametrize("text", NO_LETTERS)
def test_a_text_without_letters_is_undetermined_and_not_flagged(ident: LanguageIdentifier, text: str) -> None:
    d = ident.detect(text)
    assert (d.language, d.confidence, d.reliable) == (UNDETERMINED, 0.0, False)
    assert ident.mismatch([text], "de", PAIR).tolist() == [False]
    assert ident.mismatch([text], "en", PAIR).tolist() == [False]


@pytest.mark.parametrize(("detected", "flagged"), [
    (Detection("de", 90.0, True), False),  # its own language
    (Detection("de", 60.0, False), False),
    (Detection("en", 60.0, False), True),  # the pair's other language: flagged even when unreliable
    (Detection("en", 95.0, True), True),
    (Detection("da", 80.0, False), False),  # an unreliable third language ("Hund" -> Danish): kept
    (Detection("fr", 90.0, True), True),  # a reliable third language: flagged
    (Detection(UNDETERMINED, 0.0, False), False),
])
def test_mismatch_decision(monkeypatch: pytest.MonkeyPatch, detected: Detection, flagged: bool) -> None:
    ident = LanguageIdentifier.for_languages(PAIR)
    monkeypatch.setattr(ident, "detect", lambda text: detected)
    assert ident.mismatch(["whatever"], "de", PAIR).tolist() == [flagged]


def test_mismatch_of_nothing_is_empty(ident: LanguageIdentifier) -> None:
    out = ident.mismatch([], "de", PAIR)
    assert out.shape == (0,) and out.dtype == bool


def test_threads_get_the_same_answers(ident: LanguageIdentifier) -> None:
    texts = (GERMAN + ENGLISH + list(OTHERS.values())) * 4
    expected = [ident.detect(t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(ident.detect, texts)) == expected
