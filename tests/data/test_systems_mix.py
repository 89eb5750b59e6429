"""Systems' translations in a mix, through the validate stage (nmt.data.mixing): the cleaning rules
take machine-made copies and wrong-language outputs, decontamination takes the pairs of dev and
test sentences and of the blind files' sentences (source side, counted per file, zeros too), the
reader's notes land in the report; a blind folder that is not there fails the gate. Last, one
slow test reads the real WMT mirror when it is there."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from nmt.config.data import DataConfig, ValidateConfig
from nmt.config.loader import from_dict
from nmt.config.mix import CleanConfig, DecontaminateConfig
from nmt.config.systems import systems_source
from nmt.data import systems
from nmt.data.validate import validate_corpus
from nmt.errors import GateError
from nmt.files.lines import read_lines
from support.systems import HYP_FILES, HYPS, SRC, write, write_set

ZERO = "0" * 64
TEST = ("Ein Hund rennt über die grüne Wiese.", "The cat sleeps on the sofa.")  # hyp A's line 2 is its English
DEV = ("Die Sonne scheint heute sehr hell.", "The sun is shining very brightly today.")
BLIND = {"de-en.1.de": ["Sie sollen lesen.", "Etwas ganz anderes steht hier."],  # the source of line 5
         "en-de.1.en": ["Nothing like any line here."], "README.md": ["Sie sollen lesen."]}  # README: not read


def mix(raw: Path) -> dict:
    write_set(raw / "wmt")
    write(raw / "sets", "dev.de", [DEV[0]])
    write(raw / "sets", "dev.en", [DEV[1]])
    write(raw / "sets", "test.de", [TEST[0]])
    write(raw / "sets", "test.en", [TEST[1]])
    files = lambda *names: [{"name": n, "url": "file:///unused", "sha256": ZERO} for n in names]  # noqa: E731
    corpora = {
        "wmt": {"languages": ["de", "en"], "requires_train": False, "licence": "WMT: research use; cite Kocmi et al.",
                "files": files("src.de", "ref.en", *HYP_FILES),
                "splits": {"de-en": {"format": "systems", "de": "src.de", "en": list(HYP_FILES),
                                     "reference": "ref.en", "split_sentences": False}}},
        "sets": {"languages": ["de", "en"], "requires_train": False, "files": files("dev.de", "dev.en", "test.de",
                                                                                     "test.en"),
                 "splits": {"dev": {"de": "dev.de", "en": "dev.en"}, "test": {"de": "test.de", "en": "test.en"}}},
    }
    sources = [{"corpus": "wmt", "split": "de-en", "role": "train"}, {"corpus": "sets", "split": "dev", "role": "dev"},
               {"corpus": "sets", "split": "test", "role": "test"}]
    return {"corpus": "mix", "direction": "de-en", "corpora": corpora,
            "mixes": {"mix": {"languages": ["de", "en"], "sources": sources}}}


def blind_folder(tmp_path: Path) -> Path:
    for name, lines in BLIND.items():
        write(tmp_path / "blind", name, lines)
    return tmp_path / "blind"


def config(blind: tuple[str, ...]) -> ValidateConfig:
    return ValidateConfig(min_pairs=1, min_train_pairs=1, max_filtered_rate=1.0, max_duplicate_rate=1.0,
                          clean=CleanConfig(same=True, langid=True, dedupe=True),
                          decontaminate=DecontaminateConfig(enabled=True, blind=blind))


def run(tmp_path: Path, blind: tuple[str, ...]):
    data = from_dict(DataConfig, mix(tmp_path / "raw"), key="data")
    return validate_corpus(data, config(blind), tmp_path / "raw", tmp_path / "clean", tmp_path / "reports")


def test_machine_pairs_go_through_the_rules_and_every_decontamination(tmp_path: Path) -> None:
    run(tmp_path, (str(blind_folder(tmp_path)),))
    stats = json.loads((tmp_path / "reports" / "raw.json").read_text(encoding="utf-8"))["stats"]
    wmt = stats["sources"]["wmt.de-en"]
    assert wmt["pairs_in"] == 15
    # line 5's outputs: A and B are pairs of a blind sentence, C repeats A (the duplicate look-up comes first)
    assert {k: v for k, v in wmt["dropped"].items() if v} == {"in a dev or test set": 2 + 1, "repeated pair": 2,
                                                             "same text on both sides": 1, "wrong language": 1}
    assert stats["decontamination"] == {"blind/de-en.1.de": {"exact": 2, "near": 0},
                                        "blind/en-de.1.en": {"exact": 0, "near": 0},
                                        "test": {"exact": 1, "near": 0}}
    assert stats["blind"] == {"blind/de-en.1.de": 2, "blind/en-de.1.en": 1}
    assert wmt["read"][systems.SUITE] == 3 and wmt["read"][systems.OUTPUTS] == 15
    assert stats["provenance"]["wmt"]["licence"] == "WMT: research use; cite Kocmi et al."
    train = list(zip(read_lines(tmp_path / "clean" / "train.de"), read_lines(tmp_path / "clean" / "train.en")))
    expected = [(SRC[i], HYPS[s][i]) for i in range(4) for s in "ABC"]
    for dropped in [(SRC[1], HYPS["A"][1]), (SRC[1], HYPS["C"][1]), (SRC[2], HYPS["C"][2]), (SRC[3], HYPS["B"][3])]:
        expected.remove(dropped)  # a test sentence, French, a copy of the source, a repeat
    assert ("Sie sollen lesen.", "They should read.") not in train
    assert train == expected


def test_without_blind_folders_the_blind_sentences_stay(tmp_path: Path) -> None:
    run(tmp_path, ())
    train_de = read_lines(tmp_path / "clean" / "train.de")
    assert train_de.count("Sie sollen lesen.") == 2  # "They should read." twice: one is a repeat


def test_a_missing_blind_folder_fails_the_gate_naming_it(tmp_path: Path) -> None:
    with pytest.raises(GateError):
        run(tmp_path, (str(tmp_path / "nowhere"),))
    report = json.loads((tmp_path / "reports" / "raw.json").read_text(encoding="utf-8"))
    failed = [c for c in report["checks"] if not c["success"]]
    assert any("nowhere" in c["observed"] and "does not exist" in c["observed"] for c in failed)


MIRROR = Path(__file__).resolve().parents[3] / "shared" / "data" / "wmt-systems"


@pytest.mark.slow
@pytest.mark.skipif(not (MIRROR / "wmttest2024.en-de.src.en").is_file(), reason="no WMT systems mirror")
def test_the_real_wmt24_files_read_as_a_systems_split() -> None:
    hyps = sorted(p.name for p in MIRROR.glob("wmttest2024.en-de.hyp.*.de"))
    spec = systems_source("systems", {"en": "wmttest2024.en-de.src.en", "de": hyps, "select": "consensus"},
                          ("de", "en"), "splits.wmt24")
    notes: Counter = Counter()
    pairs = [p for _, a, b in systems.systems_chunks(spec, MIRROR, ("de", "en"), 1000, notes) for p in zip(a, b)]
    assert len(hyps) == 26 and notes[systems.LINES] == 998 and notes[systems.OUTPUTS] == 998
    assert len(pairs) == 998 - notes[systems.SPLIT] + notes[systems.SENTENCE_PAIRS] > 998
