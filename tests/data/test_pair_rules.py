"""Language-specific data rules on another pair (issue 65): a rule without data for the pair (the
German-English dictionary, the detector, the Latin-script share) is switched off with a line in the
validate report's notes, never a crash and never a silent German default; a language spaCy has no
tokenizer for stops the validate stage with an error naming the field, before anything is written (a
model's languages passed that stage, so the tokenizer itself need not check)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from nmt.config.data import DataConfig, ValidateConfig
from nmt.config.loader import from_dict
from nmt.config.mix import CleanConfig
from nmt.data.cleaning import rules_for_pair
from nmt.data.validate import validate_corpus
from nmt.errors import ConfigError
from nmt.text import languages
from support.corpus import synthetic_pairs

ALL = CleanConfig(same=True, min_alpha=0.3, max_other_script=0.2, langid=True, min_lexical=0.3, dedupe=True)


def test_german_english_keeps_every_rule() -> None:
    assert rules_for_pair(ALL, ("de", "en")) == (ALL, [])
    assert rules_for_pair(ALL, ("en", "de")) == (ALL, [])


def test_french_english_loses_the_dictionary_only_and_says_so() -> None:
    cfg, notes = rules_for_pair(ALL, ("fr", "en"))
    assert cfg == dataclasses.replace(ALL, min_lexical=0.0)
    assert len(notes) == 1 and "min_lexical switched off for fr-en" in notes[0] and "German-English" in notes[0]


def test_another_script_loses_the_latin_share_rule() -> None:
    cfg, notes = rules_for_pair(ALL, ("ru", "en"))
    assert cfg.max_other_script == 1.0 and cfg.min_lexical == 0.0 and cfg.langid
    assert any("max_other_script switched off for ru-en" in n and "Cyrl" in n for n in notes)


def test_a_language_the_detector_does_not_know_loses_the_language_rule() -> None:
    cfg, notes = rules_for_pair(ALL, ("ga", "en"))  # Irish: spaCy tokenizes it, eldc does not know it
    assert not cfg.langid and cfg.max_other_script == 1.0
    assert any("langid switched off for ga-en" in n and "'ga'" in n for n in notes)


def test_the_table_names_and_warms_up_the_new_languages() -> None:
    assert (languages.name("fr"), languages.name("cs"), languages.name("qq")) == ("French", "Czech", "qq")
    assert languages.warm_up("cs") == "Muž jede na kole po ulici."
    assert languages.warm_up("ga") == languages.NEUTRAL_WARM_UP
    assert {c for c, lang in languages.LANGUAGES.items() if lang.script == "Latn"} >= {"de", "en", "fr", "cs"}


def _mix(tmp_path: Path, langs: tuple[str, str]) -> DataConfig:
    """A one-corpus mix in `langs` (synthetic sentences: their language does not matter to the rules kept)."""
    a, b = synthetic_pairs(300)
    raw = tmp_path / "raw" / "lines"
    raw.mkdir(parents=True)
    splits = {"train": (a[:200], b[:200]), "val": (a[200:250], b[200:250]), "test": (a[250:], b[250:])}
    files = []
    for split, sides in splits.items():
        for lang, lines in zip(langs, sides):
            (raw / f"{split}.{lang}").write_text("".join(s + "\n" for s in lines), encoding="utf-8")
            files.append({"name": f"{split}.{lang}", "url": "file:///unused", "sha256": "0" * 64})
    corpus = {"languages": list(langs), "files": files,
              "splits": {s: {lang: f"{s}.{lang}" for lang in langs} for s in splits}}
    sources = [{"corpus": "lines", "split": "train", "role": "train"},
               {"corpus": "lines", "split": "val", "role": "dev"},
               {"corpus": "lines", "split": "test", "role": "test"}]
    return from_dict(DataConfig, {"corpus": "mix", "direction": "-".join(langs), "corpora": {"lines": corpus},
                                  "mixes": {"mix": {"languages": list(langs), "sources": sources}}}, key="data")


def test_the_validate_report_says_which_rule_was_switched_off(tmp_path: Path) -> None:
    cfg = ValidateConfig(min_pairs=10, min_train_pairs=100, clean=CleanConfig(same=True, min_lexical=0.3,
                                                                              lexicon=str(tmp_path / "no-such")))
    gate = validate_corpus(_mix(tmp_path, ("fr", "en")), cfg, tmp_path / "raw", tmp_path / "clean", tmp_path / "rep")
    assert gate.success  # the dictionary was never opened: its path does not exist
    notes = json.loads((tmp_path / "rep" / "raw.json").read_text())["stats"]["notes"]
    assert len(notes) == 1 and "min_lexical switched off for fr-en" in notes[0]
    assert "min_lexical switched off for fr-en" in (tmp_path / "rep" / "raw.md").read_text()


def test_a_language_spacy_cannot_tokenize_names_the_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"data\.mixes\.mix\.languages: spaCy has no tokenizer for \['qq'\]"):
        validate_corpus(_mix(tmp_path, ("qq", "en")), ValidateConfig(), tmp_path / "raw", tmp_path / "clean",
                        tmp_path / "rep")
    assert not (tmp_path / "clean").exists() and not (tmp_path / "rep").exists()
    assert languages.unknown_to_spacy(["fr", "qq", "cs", "ga"]) == ["qq"]
