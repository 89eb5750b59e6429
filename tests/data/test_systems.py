"""Systems' translations read as corpora (nmt.data.systems, nmt.config.systems), on small files
written here: a pair per output, the test-suite lines without a reference, the general-test
segments split into sentences, the selection strategies, the thinning of templated lines, both
language orders, the references as dev, and the configuration's checks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from nmt import ranking
from nmt.config.data import CorpusConfig
from nmt.config.loader import from_dict
from nmt.config.systems import systems_source
from nmt.data import systems
from nmt.data.consensus import consensus_scores
from nmt.data.formats import source_chunks
from nmt.errors import ConfigError, DataError
from support.systems import HYP_FILES, HYPS, REF, SRC, write, write_set


def entry(**options) -> dict:
    return {"de": "src.de", "en": list(HYP_FILES), "reference": "ref.en", **options}


def read(folder: Path, fmt: str = "systems", langs: tuple[str, str] = ("de", "en"), notes: Counter | None = None,
         **options) -> list[tuple[str, str]]:
    spec = systems_source(fmt, options.pop("raw", None) or entry(**options), ("de", "en"), "splits.x")
    return [p for _, a, b in systems.systems_chunks(spec, folder, langs, 4, notes) for p in zip(a, b)]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_set(tmp_path / "wmt")
    return tmp_path / "wmt"


def test_all_gives_a_pair_per_output_and_splits_the_segments(folder: Path) -> None:
    notes: Counter = Counter()
    pairs = read(folder, notes=notes, split_sentences=True)
    sentences = [("Der Zug kommt um 8 Uhr an.", "The train arrives at 8 am."),
                 ("Er ist pünktlich.", "It is punctual."),
                 ("Der Zug kommt um 8 Uhr an.", "The train arrives at 8 o'clock."),
                 ("Er ist pünktlich.", "It is on time.")]
    whole = (SRC[0], HYPS["C"][0])  # one sentence in English, two in German: kept whole
    assert pairs[:5] == [*sentences, whole]
    assert pairs[5:] == [(SRC[i], HYPS[s][i]) for i in range(1, 5) for s in "ABC"]  # test-suite lines included
    assert notes[systems.SUITE] == 3 and notes[systems.GENERAL] == 2
    assert notes[systems.SPLIT] == 2 and notes[systems.WHOLE] == 1 and notes[systems.SENTENCE_PAIRS] == 4


def test_without_splitting_a_segment_is_one_pair(folder: Path) -> None:
    assert read(folder, split_sentences=False)[:3] == [(SRC[0], HYPS[s][0]) for s in "ABC"]


def test_max_words_whole_leaves_out_a_long_segment_that_stays_whole(folder: Path) -> None:
    """A paragraph whose sides split into different sentence counts stays whole; over the limit it is
    left out (dev sets are copied with no length rule, and the tokenize gate bounds every split)."""
    words = max(len(SRC[0].split()), len(HYPS["C"][0].split()))
    notes: Counter = Counter()
    kept = read(folder, notes=notes, max_words_whole=words)
    assert (SRC[0], HYPS["C"][0]) in kept and notes[systems.TOO_LONG] == 0
    notes = Counter()
    short = read(folder, notes=notes, max_words_whole=words - 1)
    assert (SRC[0], HYPS["C"][0]) not in short and notes[systems.TOO_LONG] == 1 and notes[systems.WHOLE] == 0
    assert len(short) == len(kept) - 1  # the split segments and the short lines stay


def test_consensus_keeps_one_output_a_line_the_one_the_others_agree_with(folder: Path) -> None:
    pairs = read(folder, select="consensus", split_sentences=False)
    best = [ranking.best("ABC", lambda s, i=i: consensus_scores([HYPS[x][i] for x in "ABC"])["ABC".index(s)])
            for i in range(5)]
    assert pairs == [(SRC[i], HYPS[best[i]][i]) for i in range(5)]
    assert best[1] != "C" and best[2] != "C"  # not the French output, not the copy of the source


def test_top_k_keeps_k_outputs_a_line(folder: Path) -> None:
    pairs = read(folder, select="top_k", top_k=2, split_sentences=False)
    assert len(pairs) == 10
    assert (SRC[1], HYPS["C"][1]) not in pairs and (SRC[2], HYPS["C"][2]) not in pairs  # French, copy: out
    assert (SRC[1], HYPS["A"][1]) in pairs and (SRC[1], HYPS["B"][1]) in pairs


def test_thinning_keeps_max_per_template_lines_of_a_template(folder: Path) -> None:
    notes: Counter = Counter()
    pairs = read(folder, notes=notes, max_per_template=1, split_sentences=False)
    assert {s for s, _ in pairs} == {SRC[0], SRC[1], SRC[2], SRC[4]}  # "raum 7 ist frei" is "Raum 12 ist frei."'s
    assert notes[systems.THINNED] == 1
    assert systems.template("Raum 12 ist frei.") == systems.template("raum 7 ist  frei") == "raum 0 ist frei"
    assert len(read(folder, max_per_template=2, split_sentences=False)) == 15


def test_segments_choose_test_suite_or_general_test_lines(folder: Path) -> None:
    suite = read(folder, segments="suite", split_sentences=False)
    general = read(folder, segments="general", split_sentences=False)
    assert {s for s, _ in suite} == set(SRC[2:]) and {s for s, _ in general} == set(SRC[:2])


def test_pairs_follow_the_mix_language_order(tmp_path: Path) -> None:
    """English sources with German outputs in a [de, en] mix: (machine German, human English)."""
    write(tmp_path, "src.en", ["The cat sleeps.", "He reads."])
    write(tmp_path, "a.de", ["Die Katze schläft.", "Er liest."])
    raw = {"en": "src.en", "de": ["a.de"]}
    assert read(tmp_path, raw=raw) == [("Die Katze schläft.", "The cat sleeps."), ("Er liest.", "He reads.")]
    assert read(tmp_path, raw=raw, langs=("en", "de")) == [("The cat sleeps.", "Die Katze schläft."),
                                                            ("He reads.", "Er liest.")]


def test_references_are_read_for_the_lines_that_have_one(folder: Path) -> None:
    pairs = read(folder, "references", raw={"de": "src.de", "en": ["ref.en"]})
    assert pairs == [("Der Zug kommt um 8 Uhr an.", "The train arrives at 8 o'clock."),
                     ("Er ist pünktlich.", "It is on time."), (SRC[1], REF[1])]


def test_a_system_file_of_another_length_is_a_data_error(folder: Path) -> None:
    write(folder, "src.hyp.B.en", HYPS["B"][:3])
    with pytest.raises(DataError, match=r"src\.hyp\.B\.en has 3 lines but .* has more"):
        read(folder)


def corpus(split: dict) -> CorpusConfig:
    files = [{"name": n, "url": "file:///unused", "sha256": "0" * 64} for n in ["src.de", "ref.en", *HYP_FILES]]
    return from_dict(CorpusConfig, {"languages": ["de", "en"], "requires_train": False, "files": files,
                                    "splits": {"wmt": split}}, key="data.corpora.wmt")


def test_a_corpus_declares_a_systems_split_and_source_chunks_reads_it(folder: Path) -> None:
    split = {"format": "systems", **entry(select="consensus", max_per_template=1, split_sentences=False)}
    source = corpus(split).source("wmt")
    assert source.names == ["src.de", *HYP_FILES, "ref.en"]
    notes: Counter = Counter()
    pairs = [p for _, a, b in source_chunks(source, folder, ("de", "en"), 100, notes=notes) for p in zip(a, b)]
    assert len(pairs) == 4 and notes[systems.OUTPUTS] == 4


@pytest.mark.parametrize("split,message", [
    ({"format": "systems", **entry(), "en": ["src.hyp.A.en", "missing.en"]},
     r"wmt\.file: 'missing\.en' is not produced"),
    ({"format": "systems", **entry(select="top_k", top_k=3)}, r"wmt\.top_k: must be less than the 3 outputs"),
    ({"format": "systems", **entry(select="best")}, r"wmt\.select: 'best' is not one of"),
    ({"format": "systems", "de": "src.de", "en": list(HYP_FILES), "segments": "suite"},
     r"wmt\.segments: .*needs `reference`"),
    ({"format": "systems", "de": "src.de", "en": "src.hyp.A.en"},
     r"one language with one file .* and the other with a list"),
    ({"format": "systems", **entry(), "max_per_templat": 1}, r"unknown keys \['max_per_templat'\]"),
    ({"format": "systems", **entry(split_sentences="yes")}, r"wmt\.split_sentences: expected bool"),
    ({"format": "systems", **entry(max_words_whole=-1)}, r"wmt\.max_words_whole: must be >= 0"),
])
def test_a_bad_systems_split_is_refused_naming_the_key(split: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        corpus(split)
