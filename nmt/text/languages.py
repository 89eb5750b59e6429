"""What the project knows of each language, as data (torch-free): its English name, its script, and a
sentence to warm a model up with. Nothing else in nmt/ names a language: a stage, the server or a
report asks here, and a language missing from the table gets its code as its name, no warm-up
sentence of its own and no script rule (the stage that needed one says so in its report).

The names are ISO 639-1's English names; the table covers the 60 languages the detector knows
(`nmt.text.langid`) and so every language `source: auto` can route. The warm-up sentences are image
descriptions in the style of Multi30k (a man riding a bicycle down a street), written for the
languages a model here has been trained in and their neighbours.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nmt.text.tokenizer import import_spacy

NEUTRAL_WARM_UP = "1, 2, 3."  # a language without a sentence below: digits and punctuation every model reads


@dataclass(frozen=True)
class Language:
    """One language."""

    code: str  # ISO 639-1
    name: str  # English name
    script: str  # ISO 15924 of its usual writing: Latn, Cyrl, Arab, ...
    warm_up: str | None = None  # a short sentence decoded once before a model of this source serves


_NAMES = """am Amharic Ethi|ar Arabic Arab|az Azerbaijani Latn|be Belarusian Cyrl|bg Bulgarian Cyrl|bn Bengali Beng|
ca Catalan Latn|cs Czech Latn|da Danish Latn|de German Latn|el Greek Grek|en English Latn|es Spanish Latn|
et Estonian Latn|eu Basque Latn|fa Persian Arab|fi Finnish Latn|fr French Latn|gu Gujarati Gujr|he Hebrew Hebr|
hi Hindi Deva|hr Croatian Latn|hu Hungarian Latn|hy Armenian Armn|is Icelandic Latn|it Italian Latn|
ja Japanese Jpan|ka Georgian Geor|kn Kannada Knda|ko Korean Kore|ku Kurdish Latn|lo Lao Laoo|lt Lithuanian Latn|
lv Latvian Latn|ml Malayalam Mlym|mr Marathi Deva|ms Malay Latn|nl Dutch Latn|no Norwegian Latn|or Oriya Orya|
pa Punjabi Guru|pl Polish Latn|pt Portuguese Latn|ro Romanian Latn|ru Russian Cyrl|sk Slovak Latn|
sl Slovenian Latn|sq Albanian Latn|sr Serbian Cyrl|sv Swedish Latn|ta Tamil Taml|te Telugu Telu|th Thai Thai|
tl Tagalog Latn|tr Turkish Latn|uk Ukrainian Cyrl|ur Urdu Arab|vi Vietnamese Latn|yo Yoruba Latn|zh Chinese Hans"""

_WARM_UP = {
    "de": "Ein Mann fährt mit dem Fahrrad eine Straße hinunter.",
    "en": "A man rides a bicycle down a street.",
    "fr": "Un homme descend une rue à vélo.",
    "cs": "Muž jede na kole po ulici.",
    "es": "Un hombre baja por una calle en bicicleta.",
    "it": "Un uomo va in bicicletta lungo una strada.",
    "nl": "Een man fietst door een straat.",
    "pt": "Um homem anda de bicicleta por uma rua.",
    "pl": "Mężczyzna jedzie na rowerze ulicą.",
}

LANGUAGES: dict[str, Language] = {
    code: Language(code, name, script, _WARM_UP.get(code))
    for code, name, script in (entry.split() for entry in _NAMES.replace("\n", "").split("|"))
}


def language(code: str) -> Language:
    """What the table knows of `code`; a code it lacks: its code as its name, script unknown ("")."""
    return LANGUAGES.get(code) or Language(code, code, "")


def name(code: str) -> str:
    """The English name of `code` ("French"), or the code itself when the table lacks it."""
    return language(code).name


def warm_up(code: str) -> str:
    """A sentence in `code` to warm a model up with, or `NEUTRAL_WARM_UP`."""
    return language(code).warm_up or NEUTRAL_WARM_UP


def unknown_to_spacy(codes: Iterable[str]) -> list[str]:
    """The codes among `codes` spaCy has no tokenizer for (`spacy.blank` would fail on them)."""
    spacy, missing = import_spacy(), []
    for code in codes:
        try:
            spacy.util.get_lang_class(code)
        except ImportError:
            missing.append(code)
    return missing
