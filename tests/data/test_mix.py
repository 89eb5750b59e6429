"""The validate stage on a mix of corpora (nmt.data.mixing through validate_corpus).

Small corpora in every published form (two line files, a TSV with an attribution column, a TMX
with inline markup and a unit missing a language, Moses-escaped files) are mixed with roles:
the splits written (train, val, one per test source, test sets whole), the per-source counts,
weights, dev shares, decontamination and the gate's failures (outputs left as they were). Then
a single corpus: the mix-only settings refused, a TSV validated like line files. Last, one slow
test of general/params.yaml's mix, downloaded and validated from the mirror.
"""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from nmt.config.data import DataConfig, ValidateConfig
from nmt.config.loader import from_dict
from nmt.config.mix import CleanConfig, DecontaminateConfig
from nmt.config.params import load_params
from nmt.data import mixing
from nmt.data.download import MIRROR_ENV, download_corpus
from nmt.data.validate import validate_corpus
from nmt.errors import ConfigError, DownloadError, GateError
from nmt.files.lines import read_lines
from support.corpus import ROOT, sha256, synthetic_pairs, write_corpus
from support.download import file_hashes
from support.validate import assert_untouched, report, run_validate, with_sentinel

LANGS = ("de", "en")
ZERO = "0" * 64  # validate never checks hashes: the files are written in place
SPLITS = ["train", "val", "test", "tabs_test"]

# --- the corpora --------------------------------------------------------------------------------


def tagged(tag: str, n: int, seed: int) -> tuple[list[str], list[str]]:
    """n distinct aligned pairs, marked with `tag` so that no two sources share one by chance."""
    de, en = synthetic_pairs(n, seed=seed)
    return [f"{tag} {s}" for s in de], [f"{tag} {s}" for s in en]


def held_out(tag: str, n: int) -> tuple[list[str], list[str]]:
    """Dev/test pairs, unlike any training pair."""
    return ([f"{tag} {i}: Die Katze schläft auf dem Sofa im Wohnzimmer." for i in range(n)],
            [f"{tag} {i}: The cat sleeps on the sofa in the living room." for i in range(n)])


def joined(*parts: tuple[list[str], list[str]]) -> tuple[list[str], list[str]]:
    return [s for p in parts for s in p[0]], [s for p in parts for s in p[1]]


def rows(pairs: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    return [a for a, _ in pairs], [b for _, b in pairs]


LINES_CLEAN = tagged("Linie", 100, 1)
LINES_BAD = [("Hallo Welt", "Hallo Welt!"),  # same text on both sides
             ("Zimmer 12 ist frei", "Room 13 is free"),  # numbers differ
             ("", "Empty"),  # empty side
             (LINES_CLEAN[0][0], LINES_CLEAN[1][0])]  # repeated pair
LINES_TRAIN = joined(LINES_CLEAN, rows(LINES_BAD))
LINES_VAL = held_out("Wert", 20)
DIRTY = [("", "Empty"), ("Gleich", "Gleich"), ("Ein Hund", "A dog runs across the green field in the morning sun"),
         ("123", "###"), (" ".join(["Wort"] * 40), "x")]
LINES_TEST = joined(held_out("Probe", 20), rows(DIRTY))

TABS_CLEAN = tagged("Tab", 100, 4)
TABS_BAD = [("Siehe www.a.de", "See www.b.de"),  # URLs differ
            (" ".join(["Wort"] * 35), " ".join(["word"] * 35)),  # over 30 words
            (LINES_CLEAN[0][1], LINES_CLEAN[1][1])]  # repeated across sources (lines.train has it first)
TABS_TRAIN = joined(TABS_CLEAN, rows(TABS_BAD))
TABS_TEST = held_out("Satz", 15)

MEMORY_CLEAN = tagged("Speicher", 60, 6)
MARKUP = ('Ein <bpt i="1">&lt;b&gt;</bpt>roter<ept i="1">&lt;/b&gt;</ept> Ball <ph x="1">&lt;br/&gt;</ph>rollt '
          '7 mal.', "A <hi>red</hi> ball   rolls 7 times.")
MARKUP_TEXT = ("Ein roter Ball rollt 7 mal.", "A red ball rolls 7 times.")

MOSES_N = 60
MOSES_BAD = ("&#91; 123 456 &#93;", "&#91; 789 &#93;")  # hardly a letter once unescaped

RULES = CleanConfig(same=True, min_alpha=0.3, numbers=True, urls=True, dedupe=True)
CFG = ValidateConfig(max_words=30, min_pairs=5, min_train_pairs=50, max_filtered_rate=0.1, max_duplicate_rate=0.05,
                     clean=RULES, decontaminate=DecontaminateConfig(enabled=True))


def write(path: Path, lines: list[str]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{s}\n" for s in lines), encoding="utf-8")
    return path.name


def tsv(de: list[str], en: list[str]) -> list[str]:
    return [f"{e}\t{d}\tCC-BY 2.0 (France) Attribution: tatoeba.org #{i} (CK) & #{i + 7} (Pfirsichbaeumchen)"
            for i, (d, e) in enumerate(zip(de, en))]


def tmx(units: list[tuple[str | None, str | None]]) -> str:
    body = []
    for de, en in units:
        tuvs = "".join(f'<tuv xml:lang="{lang}"><seg>{seg}</seg></tuv>' for lang, seg in (("de-DE", de), ("EN", en))
                       if seg is not None)
        body.append(f"  <tu>{tuvs}</tu>\n")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4">\n<header srclang="en" datatype="plaintext" '
            f'segtype="sentence" adminlang="en" o-tmf="x" creationtool="test" creationtoolversion="1"/>\n<body>\n'
            f'{"".join(body)}</body>\n</tmx>\n')


def moses_lines() -> tuple[list[str], list[str]]:
    de = [f"Moses {i} : das ist &quot; ein Hund &quot; , oder ?" for i in range(MOSES_N)]
    en = [f"Moses {i} : it &apos;s a dog , isn &apos;t it ?" for i in range(MOSES_N)]
    return de + [MOSES_BAD[0]], en + [MOSES_BAD[1]]


def files(*names: str) -> list[dict]:
    return [{"name": n, "url": "file:///unused", "sha256": ZERO} for n in names]


def mix_data(raw: Path) -> dict:
    """Write four corpora under raw/<corpus>/ and return the `data` section of their mix (a plain dict)."""
    write(raw / "lines" / "train.de", LINES_TRAIN[0])
    write(raw / "lines" / "train.en", LINES_TRAIN[1])
    write(raw / "lines" / "val.de", LINES_VAL[0])
    write(raw / "lines" / "val.en", LINES_VAL[1])
    write(raw / "lines" / "test.de", LINES_TEST[0])
    write(raw / "lines" / "test.en", LINES_TEST[1])
    write(raw / "tabs" / "deu.txt", tsv(*TABS_TRAIN))
    write(raw / "tabs" / "test.tsv", tsv(*TABS_TEST))
    units = [*zip(*MEMORY_CLEAN), MARKUP, (None, "Only English here."), (MEMORY_CLEAN[0][5], MEMORY_CLEAN[1][5])]
    (raw / "memory").mkdir(parents=True)
    (raw / "memory" / "memory.tmx").write_text(tmx(units), encoding="utf-8")
    de, en = moses_lines()
    write(raw / "moses" / "tgt.txt", de)
    write(raw / "moses" / "src.txt", en)
    corpora = {
        "lines": {"languages": ["de", "en"], "files": files("train.de", "train.en", "val.de", "val.en", "test.de",
                                                            "test.en"),
                  "splits": {s: {"de": f"{s}.de", "en": f"{s}.en"} for s in ("train", "val", "test")}},
        "tabs": {"languages": ["de", "en"], "requires_train": False, "files": files("deu.txt", "test.tsv"),
                 "splits": {"train": {"format": "tsv", "file": "deu.txt", "en": 0, "de": 1},
                            "test": {"format": "tsv", "file": "test.tsv", "en": 0, "de": 1}}},
        "memory": {"languages": ["en", "de"], "requires_train": False, "files": files("memory.tmx"),
                   "splits": {"train": {"format": "tmx", "file": "memory.tmx"}}},
        "moses": {"languages": ["de", "en"], "requires_train": False, "files": files("tgt.txt", "src.txt"),
                  "splits": {"train": {"format": "moses", "de": "tgt.txt", "en": "src.txt"}}},
    }
    sources = [{"corpus": "lines", "split": "train", "role": "train"},
               {"corpus": "tabs", "split": "train", "role": "train"},
               {"corpus": "memory", "split": "train", "role": "train"},
               {"corpus": "moses", "split": "train", "role": "train"},
               {"corpus": "lines", "split": "val", "role": "dev"},
               {"corpus": "lines", "split": "test", "role": "test"},
               {"corpus": "tabs", "split": "test", "role": "test", "name": "tabs_test"}]
    return {"corpus": "mix", "direction": "de-en", "corpora": corpora,
            "mixes": {"mix": {"languages": ["de", "en"], "sources": sources}}}


def source(data: dict, label: str) -> dict:
    """The source entry of `data`'s mix with that label."""
    for s in data["mixes"]["mix"]["sources"]:
        if s.get("name") == label or f"{s['corpus']}.{s['split']}" == label:
            return s
    raise KeyError(label)


def config(data: dict) -> DataConfig:
    return from_dict(DataConfig, data, key="data")


def validate(tmp_path: Path, data: dict, cfg: ValidateConfig = CFG):
    return validate_corpus(config(data), cfg, tmp_path / "raw", tmp_path / "clean", tmp_path / "reports")


def out(tmp_path: Path, split: str) -> tuple[list[str], list[str]]:
    return read_lines(tmp_path / "clean" / f"{split}.de"), read_lines(tmp_path / "clean" / f"{split}.en")


def pairs(sides: tuple[list[str], list[str]]) -> list[tuple[str, str]]:
    return list(zip(*sides))


def nonzero(counts: dict) -> dict:
    return {k: v for k, v in counts.items() if v}


@pytest.fixture
def data(tmp_path: Path) -> dict:
    return mix_data(tmp_path / "raw")


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 16 pairs: every look-up (repeats, weights, dev shares) crosses chunk boundaries."""
    monkeypatch.setattr(mixing, "CHUNK_LINES", 16)


# --- the splits ---------------------------------------------------------------------------------


def expected_train() -> list[tuple[str, str]]:
    """The kept pairs of the four train sources, in source order."""
    moses_de = [f'Moses {i}: das ist "ein Hund", oder?' for i in range(MOSES_N)]
    moses_en = [f"Moses {i}: it's a dog, isn't it?" for i in range(MOSES_N)]
    return pairs(LINES_CLEAN) + pairs(TABS_CLEAN) + pairs(MEMORY_CLEAN) + [MARKUP_TEXT] + list(zip(moses_de, moses_en))


def test_a_mix_writes_train_val_and_a_split_per_test_source(tmp_path: Path, data: dict, small_chunks) -> None:
    gate = validate(tmp_path, data)
    assert gate.success, [c for c in gate.checks if not c.success]
    assert config(data).splits == SPLITS
    assert sorted(p.name for p in (tmp_path / "clean").iterdir()) == sorted(f"{s}.{lang}" for s in SPLITS
                                                                            for lang in LANGS)
    assert pairs(out(tmp_path, "train")) == expected_train()
    assert out(tmp_path, "val") == LINES_VAL
    assert out(tmp_path, "tabs_test") == TABS_TEST  # the TSV's columns, its third one ignored
    assert report(tmp_path)["stats"]["splits"] == {"train": len(expected_train()), "val": 20,
                                                   "test": 25, "tabs_test": 15}


def test_test_sets_keep_every_line_even_dirty_ones(tmp_path: Path, data: dict) -> None:
    assert validate(tmp_path, data).success
    assert out(tmp_path, "test") == LINES_TEST  # empty sides, copies, extreme ratios, long lines: all kept
    assert pairs(out(tmp_path, "test"))[-len(DIRTY):] == DIRTY


def test_formats_are_read_as_published(tmp_path: Path, data: dict) -> None:
    assert validate(tmp_path, data).success
    train = pairs(out(tmp_path, "train"))
    assert MARKUP_TEXT in train  # TMX: native codes dropped, <hi> kept, whitespace collapsed
    assert ("Moses 0: das ist \"ein Hund\", oder?", "Moses 0: it's a dog, isn't it?") in train
    assert not any("&apos;" in s or "&quot;" in s or "&#91;" in s or "\t" in s for p in train for s in p)
    assert not any("Attribution" in s for p in train for s in p)


def test_the_report_names_each_corpus_with_its_licence_and_file_hashes(tmp_path: Path, data: dict) -> None:
    gate = validate(tmp_path, data)
    cfg = config(data)
    assert set(gate.stats["provenance"]) == set(cfg.used_corpora())
    for name, entry in gate.stats["provenance"].items():
        corpus = cfg.corpora[name]
        assert entry == {"licence": corpus.licence, "files": {f.name: f.sha256 for f in corpus.files}}


def test_per_source_stats(tmp_path: Path, data: dict, small_chunks) -> None:
    gate = validate(tmp_path, data)
    assert gate.success
    stats = report(tmp_path)["stats"]["sources"]
    assert stats == json.loads(json.dumps(gate.stats["sources"]))  # the report holds what the gate recorded
    assert list(stats) == ["lines.train", "tabs.train", "memory.train", "moses.train", "lines.val", "test",
                           "tabs_test"]
    expected = {
        "lines.train": (104, {"same text on both sides": 1, "numbers differ": 1, "empty de": 1, "repeated pair": 1},
                        100),
        "tabs.train": (103, {"URLs or e-mail addresses differ": 1, "de over 30 words": 1, "repeated pair": 1}, 100),
        "memory.train": (63, {"tmx: tu without de": 1, "repeated pair": 1}, 61),  # the skipped unit came in
        "moses.train": (61, {"letters under 0.3 of characters": 1}, 60),
    }
    for label, (pairs_in, dropped, kept) in expected.items():
        s = stats[label]
        assert (s["role"], s["weight"], s["pairs_in"], nonzero(s["dropped"]), s["to_val"], s["written"]) == (
            "train", 1.0, pairs_in, dropped, 0, kept), (label, s)
    for label, n in (("lines.val", 20), ("test", 25), ("tabs_test", 15)):
        assert (stats[label]["pairs_in"], stats[label]["written"], nonzero(stats[label]["dropped"])) == (n, n, {})
    assert stats["test"]["role"] == "test" and stats["lines.val"]["role"] == "dev"
    checks = {c.name: c for c in gate.checks}
    assert checks["tabs.train: dropped by the rules"].observed == "2 of 103 (1.942%)"
    assert checks["lines.train: repeated pairs"].observed == "1 of 104 (0.962%)"


def test_pairs_out_is_what_a_source_gives_to_train(tmp_path: Path, data: dict) -> None:
    assert validate(tmp_path, data).success
    stats = report(tmp_path)["stats"]["sources"]
    for label in ("lines.train", "tabs.train", "moses.train"):
        assert stats[label]["pairs_out"] == stats[label]["written"], (label, stats[label])


def test_pairs_out_of_a_tmx_source_with_a_skipped_unit(tmp_path: Path, data: dict) -> None:
    assert validate(tmp_path, data).success
    s = report(tmp_path)["stats"]["sources"]["memory.train"]
    assert s["pairs_out"] == s["written"] == 61, s


def test_a_skipped_tmx_unit_is_counted_once_with_a_dev_share(tmp_path: Path, data: dict) -> None:
    source(data, "memory.train")["dev_share"] = 0.2
    assert validate(tmp_path, data).success
    s = report(tmp_path)["stats"]["sources"]["memory.train"]
    assert s["dropped"]["tmx: tu without de"] == 1, s


# --- weights and dev shares ---------------------------------------------------------------------


def test_weight_2_writes_each_kept_pair_twice(tmp_path: Path, data: dict, small_chunks) -> None:
    source(data, "tabs.train")["weight"] = 2
    assert validate(tmp_path, data).success
    train = Counter(pairs(out(tmp_path, "train")))
    assert all(train[p] == 2 for p in pairs(TABS_CLEAN))
    assert all(train[p] == 1 for p in pairs(LINES_CLEAN))
    assert all(train[p] == 0 for p in TABS_BAD[:2])  # dropped pairs are written no time
    s = report(tmp_path)["stats"]["sources"]["tabs.train"]
    assert (s["weight"], s["pairs_out"], s["written"]) == (2.0, 100, 200)
    assert report(tmp_path)["stats"]["splits"]["train"] == len(expected_train()) + 100


def test_a_fractional_weight_writes_a_share_of_the_pairs_twice_by_their_text(tmp_path: Path, data: dict,
                                                                              small_chunks) -> None:
    source(data, "lines.train")["weight"] = 1.5
    assert validate(tmp_path, data).success
    first = (tmp_path / "clean" / "train.de").read_bytes(), (tmp_path / "clean" / "train.en").read_bytes()
    train = Counter(pairs(out(tmp_path, "train")))
    twice = {p for p in pairs(LINES_CLEAN) if train[p] == 2}
    assert all(train[p] in (1, 2) for p in pairs(LINES_CLEAN))
    assert 30 <= len(twice) <= 70, len(twice)  # about half of 100
    assert report(tmp_path)["stats"]["sources"]["lines.train"]["written"] == 100 + len(twice)

    assert validate(tmp_path, data).success  # deterministic: the same files again
    assert ((tmp_path / "clean" / "train.de").read_bytes(), (tmp_path / "clean" / "train.en").read_bytes()) == first

    # decided by the pair's text, not its position: reversed, the same pairs are doubled
    write(tmp_path / "raw" / "lines" / "train.de", LINES_TRAIN[0][::-1])
    write(tmp_path / "raw" / "lines" / "train.en", LINES_TRAIN[1][::-1])
    assert validate(tmp_path, data).success
    train = Counter(pairs(out(tmp_path, "train")))
    assert {p for p in pairs(LINES_CLEAN) if train[p] == 2} == twice


def test_dev_share_moves_pairs_to_val_and_not_to_train(tmp_path: Path, data: dict, small_chunks) -> None:
    source(data, "tabs.train")["dev_share"] = 0.3
    assert validate(tmp_path, data).success
    train, val = set(pairs(out(tmp_path, "train"))), pairs(out(tmp_path, "val"))
    moved = val[len(LINES_VAL[0]):]
    assert val[:len(LINES_VAL[0])] == pairs(LINES_VAL)  # the dev source first
    assert 15 <= len(moved) <= 45 and set(moved) <= set(pairs(TABS_CLEAN)), len(moved)
    assert not set(moved) & train
    assert set(pairs(TABS_CLEAN)) == set(moved) | (train & set(pairs(TABS_CLEAN)))  # every clean pair: one of the two
    s = report(tmp_path)["stats"]["sources"]["tabs.train"]
    assert s["to_val"] == len(moved) and s["written"] == s["pairs_out"] == 100 - len(moved)
    assert report(tmp_path)["stats"]["splits"]["val"] == 20 + len(moved)


def test_dev_share_keeps_dirty_pairs_out_of_val(tmp_path: Path, data: dict) -> None:
    """The dev share is taken among the pairs that pass the rules: a bad pair goes to neither split."""
    source(data, "lines.train")["dev_share"] = 0.99
    assert validate(tmp_path, data, dataclasses.replace(CFG, min_train_pairs=10)).success
    val = set(pairs(out(tmp_path, "val")))
    assert not val & set(LINES_BAD[:3])
    s = report(tmp_path)["stats"]["sources"]["lines.train"]
    assert nonzero(s["dropped"]) == {"same text on both sides": 1, "numbers differ": 1, "empty de": 1}
    assert s["to_val"] == s["pairs_in"] - 3 - s["written"]


# --- decontamination ----------------------------------------------------------------------------


def plant(tmp_path: Path, extra: list[tuple[str, str]]) -> None:
    """Append pairs to lines.train."""
    de, en = LINES_TRAIN[0] + [a for a, _ in extra], LINES_TRAIN[1] + [b for _, b in extra]
    write(tmp_path / "raw" / "lines" / "train.de", de)
    write(tmp_path / "raw" / "lines" / "train.en", en)


LEAKS = [(LINES_TEST[0][3].upper(), "Something else entirely."),  # a sentence of `test`, case changed
         # a sentence of `tabs_test`, punctuation changed
         ("Etwas ganz anderes, das hier nichts zu suchen hat.", TABS_TEST[1][4].replace(":", " -")),
         (TABS_TEST[0][5], TABS_TEST[1][5]),  # a whole pair of `tabs_test`
         (LINES_VAL[0][2], "Noch etwas anderes.")]  # of the dev set


def test_a_training_pair_with_a_test_sentence_is_removed_and_counted_under_the_test_set(
        tmp_path: Path, data: dict, small_chunks) -> None:
    plant(tmp_path, LEAKS)
    gate = validate(tmp_path, data)
    assert gate.success
    train = set(pairs(out(tmp_path, "train")))
    assert not train & set(LEAKS)
    assert pairs(out(tmp_path, "train")) == expected_train()
    stats = report(tmp_path)["stats"]
    assert stats["decontamination"] == {"lines.val": {"exact": 1, "near": 0}, "tabs_test": {"exact": 2, "near": 0},
                                        "test": {"exact": 1, "near": 0}}
    assert nonzero(stats["sources"]["lines.train"]["dropped"]) == {
        "same text on both sides": 1, "numbers differ": 1, "empty de": 1, "repeated pair": 1, mixing.OVERLAP: 4}
    assert out(tmp_path, "test") == LINES_TEST and out(tmp_path, "tabs_test") == TABS_TEST  # test sets untouched


def test_overlap_with_remove_false_fails_the_gate_and_keeps_the_previous_output(tmp_path: Path, data: dict) -> None:
    plant(tmp_path, LEAKS[:1])
    sentinel = with_sentinel(tmp_path)
    cfg = dataclasses.replace(CFG, decontaminate=DecontaminateConfig(enabled=True, remove=False))
    with pytest.raises(GateError) as err:
        validate(tmp_path, data, cfg)
    msg = str(err.value)
    assert "train: no dev or test sentence" in msg and "1 training pairs overlap" in msg and "'test'" in msg
    assert_untouched(tmp_path, sentinel)
    assert report(tmp_path)["success"] is False


def test_without_overlap_remove_false_passes(tmp_path: Path, data: dict) -> None:
    cfg = dataclasses.replace(CFG, decontaminate=DecontaminateConfig(enabled=True, remove=False))
    gate = validate(tmp_path, data, cfg)
    assert gate.success and gate.stats["decontamination"] == {}
    assert any(c.name == "train: no dev or test sentence" and c.success for c in gate.checks)


def test_a_test_sentence_does_not_reach_val_through_a_dev_share(tmp_path: Path, data: dict) -> None:
    leaks = [(f"{t} ", e) for t, e in pairs(TABS_TEST)]  # every tabs_test pair, a space added
    plant(tmp_path, leaks)
    source(data, "lines.train")["dev_share"] = 0.5
    assert validate(tmp_path, data).success
    assert not set(pairs(out(tmp_path, "val"))) & set(leaks)


# --- the gate, per source -----------------------------------------------------------------------


def test_a_source_over_its_own_max_filtered_rate_fails_naming_it(tmp_path: Path, data: dict) -> None:
    source(data, "tabs.train")["max_filtered_rate"] = 0.01  # it loses 2 of 103
    sentinel = with_sentinel(tmp_path)
    with pytest.raises(GateError) as err:
        validate(tmp_path, data)
    msg = str(err.value)
    assert ("tabs.train: dropped by the rules: 2 of 103 (1.942%) (expected share <= 0.01; set by "
            "data.mixes.mix.sources[1].max_filtered_rate)") in msg
    assert "lines.train" not in msg and "\n" not in msg  # the others pass validate's 0.1
    assert_untouched(tmp_path, sentinel)


def test_a_source_may_allow_more_than_validate(tmp_path: Path, data: dict) -> None:
    cfg = dataclasses.replace(CFG, max_filtered_rate=0.005)
    with pytest.raises(GateError) as err:
        validate(tmp_path, data, cfg)
    assert "lines.train: dropped by the rules" in str(err.value)
    for label in ("lines.train", "tabs.train", "memory.train", "moses.train"):
        source(data, label)["max_filtered_rate"] = 0.05
    assert validate(tmp_path, data, cfg).success


def test_a_source_over_its_max_duplicate_rate_fails_naming_it(tmp_path: Path, data: dict) -> None:
    source(data, "memory.train")["max_duplicate_rate"] = 0.0
    with pytest.raises(GateError, match=r"memory\.train: repeated pairs: 1 of 63 \(1\.587%\)"):
        validate(tmp_path, data)


def test_too_few_training_pairs_fail(tmp_path: Path, data: dict) -> None:
    with pytest.raises(GateError, match=r"train: pairs: 321 \(expected >= 1000; set by validate\.min_train_pairs\)"):
        validate(tmp_path, data, dataclasses.replace(CFG, min_train_pairs=1000))


# --- unreadable sources: one-line errors naming file and line, outputs untouched -----------------


def assert_one_line(msg: str, *parts: str) -> None:
    assert "\n" not in msg, msg
    for part in parts:
        assert part in msg, (part, msg)


def _one_column(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[41] = "just one column"
    write(path, lines)


def _unclosed_seg(path: Path) -> None:
    text = path.read_text(encoding="utf-8").splitlines()
    text[10] = text[10].replace("</seg>", "", 1)  # an unclosed <seg> in the 4th unit
    path.write_text("\n".join(text) + "\n", encoding="utf-8")


def _two_lines_short(path: Path) -> None:
    write(path, read_lines(path)[:-2])


@pytest.mark.parametrize(("file", "corrupt", "parts"), [
    ("memory/memory.tmx", _unclosed_seg, ("{path}:11:", "malformed XML", "well-formed")),
    ("moses/src.txt", _two_lines_short, ("tgt.txt has 61 lines", "src.txt has 59")),
], ids=["a TMX that is not well-formed", "Moses files of unequal length"])
def test_a_bad_source_file_is_one_line_naming_it_and_keeps_the_outputs(tmp_path: Path, data: dict, file: str,
                                                                      corrupt, parts: tuple[str, ...]) -> None:
    path = tmp_path / "raw" / file
    corrupt(path)
    sentinel = with_sentinel(tmp_path)
    with pytest.raises(GateError) as err:
        validate(tmp_path, data)
    assert_one_line(str(err.value), *(part.format(path=path) for part in parts))
    assert_untouched(tmp_path, sentinel)


# --- malformed lines: skipped and counted up to the source's share, past it a failure naming the key ----


def _not_utf8(path: Path, line: int) -> None:
    rows = path.read_bytes().split(b"\n")
    rows[line - 1] = rows[line - 1].replace(b"Tab", b"T\xe4b", 1)  # Latin-1, not UTF-8
    path.write_bytes(b"\n".join(rows))


def malformed_tabs(tmp_path: Path) -> Path:
    """tabs/deu.txt with line 10 not UTF-8 and line 42 of one column (103 rows; its rules drop 2 more)."""
    path = tmp_path / "raw" / "tabs" / "deu.txt"
    _one_column(path)
    _not_utf8(path, 10)
    return path


def test_malformed_lines_are_skipped_counted_by_kind_and_listed(tmp_path: Path, data: dict) -> None:
    malformed_tabs(tmp_path)
    assert validate(tmp_path, data).success  # 4 of 103 (3.9%) within validate's 0.1
    stats = report(tmp_path)["stats"]["sources"]["tabs.train"]
    assert stats["dropped"]["malformed: invalid UTF-8"] == 1
    assert stats["dropped"]["malformed: fewer than 2 tab-separated columns"] == 1
    assert stats["first_lines_skipped"] == {"malformed: invalid UTF-8": [10],
                                            "malformed: fewer than 2 tab-separated columns": [42]}
    assert stats["pairs_in"] == 103 and stats["pairs_out"] == 98  # 2 malformed, 2 by the rules, 1 repeated
    kept = set(pairs(out(tmp_path, "train")))
    assert (TABS_CLEAN[0][9], TABS_CLEAN[1][9]) not in kept and (TABS_CLEAN[0][41], TABS_CLEAN[1][41]) not in kept
    assert (TABS_CLEAN[0][10], TABS_CLEAN[1][10]) in kept


@pytest.mark.parametrize(("own", "key"), [(True, "data.mixes.mix.sources[1].max_filtered_rate"),
                                          (False, "validate.max_filtered_rate")])
def test_malformed_lines_past_the_share_fail_naming_the_key_and_the_lines(tmp_path: Path, data: dict, own: bool,
                                                                          key: str) -> None:
    malformed_tabs(tmp_path)
    cfg = CFG
    if own:
        source(data, "tabs.train")["max_filtered_rate"] = 0.03
    else:
        cfg = dataclasses.replace(CFG, max_filtered_rate=0.03)
        for label in ("lines.train", "memory.train", "moses.train"):
            source(data, label)["max_filtered_rate"] = 0.1
    sentinel = with_sentinel(tmp_path)
    with pytest.raises(GateError) as err:
        validate(tmp_path, data, cfg)
    assert_one_line(str(err.value), "tabs.train: dropped by the rules: 4 of 103 (3.883%); 2 malformed lines skipped, "
                    "first: invalid UTF-8 at 10; fewer than 2 tab-separated columns at 42",
                    f"(expected share <= 0.03; set by {key})")
    assert_untouched(tmp_path, sentinel)


def test_a_test_set_with_malformed_lines_past_the_share_fails(tmp_path: Path, data: dict) -> None:
    path = tmp_path / "raw" / "tabs" / "test.tsv"
    write(path, [*path.read_text(encoding="utf-8").splitlines()[:13], "one", "two"])  # 2 of 15
    with pytest.raises(GateError) as err:
        validate(tmp_path, data)
    assert_one_line(str(err.value), "tabs_test: malformed lines: 2 of 15; 2 malformed lines skipped, first: fewer "
                    "than 2 tab-separated columns at 14, 15",
                    "(expected share <= 0.1; set by validate.max_filtered_rate)")


def test_a_corpus_in_other_languages_says_so_and_sees_swapped_columns(tmp_path: Path) -> None:
    pytest.importorskip("eldc")
    raw = tmp_path / "raw"
    de = [f"Der Zug {i} fährt heute sehr pünktlich in den großen Bahnhof der Stadt ein." for i in range(80)]
    en = [f"Train {i} is arriving very punctually today at the big station of the city." for i in range(80)]
    write(raw / "own" / "mine.tsv", [f"{d}\t{e}" for d, e in zip(de, en)])  # de in column 0
    val = held_out("Wert", 20)
    write(raw / "own" / "val.de", val[0])
    write(raw / "own" / "val.en", val[1])
    own = {"languages": ["de", "en"], "files": files("mine.tsv", "val.de", "val.en"),
           "splits": {"train": {"format": "tsv", "file": "mine.tsv", "en": 0, "de": 1},  # swapped by mistake
                      "val": {"de": "val.de", "en": "val.en"}}}
    data = {"corpus": "mix", "direction": "de-en", "corpora": {"own": own},
            "mixes": {"mix": {"languages": ["de", "en"], "sources": [
                {"corpus": "own", "split": "train", "role": "train"},
                {"corpus": "own", "split": "val", "role": "dev"}]}}}
    cfg = dataclasses.replace(CFG, min_train_pairs=10, clean=CleanConfig(langid=True, langid_min_chars=10))
    with pytest.raises(GateError) as err:
        validate(tmp_path, data, cfg)
    assert_one_line(str(err.value), "own.train: in de and en: 80 of 80 pairs failed the language check; the two sides "
                    "look swapped (the de side reads as en and the en side as de): swap the languages' columns or "
                    "files of train (expected most pairs in de and en; set by data.corpora.own.splits.train)")


def zip_mix(srv: Path, member: str) -> dict:
    """A mix whose training corpus is a zip with one TSV member (as Tatoeba), served from `srv`."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("deu.txt", "".join(f"{row}\n" for row in tsv(*TABS_CLEAN)))
        zf.writestr("_about.txt", "attribution\n")
    srv.mkdir(parents=True, exist_ok=True)
    (srv / "deu-eng.zip").write_bytes(buf.getvalue())
    dev = write_corpus(srv, {"val": LINES_VAL, "test": held_out("Probe", 20)}, gz=True)
    corpora = {
        "anki": {"languages": ["de", "en"], "requires_train": False,
                 "files": [{"name": "deu-eng.zip", "url": (srv / "deu-eng.zip").as_uri(),
                            "sha256": sha256(buf.getvalue()), "members": {"deu.txt": member}}],
                 "splits": {"train": {"format": "tsv", "file": "deu.txt", "en": 0, "de": 1}}},
        "held": dev | {"requires_train": False},
    }
    sources = [{"corpus": "anki", "split": "train", "role": "train"},
               {"corpus": "held", "split": "val", "role": "dev"},
               {"corpus": "held", "split": "test", "role": "test"}]
    return {"corpus": "mix", "direction": "de-en", "corpora": corpora, "retries": 0, "backoff_s": 0.0,
            "timeout_s": 5.0, "mixes": {"mix": {"languages": ["de", "en"], "sources": sources}}}


def test_download_of_a_mix_and_a_zip_without_the_named_member(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    data = zip_mix(tmp_path / "srv", "deu.txt")
    download_corpus(config(data), raw)
    assert sorted(p.relative_to(raw).as_posix() for p in raw.rglob("*") if p.is_file()) == [
        "anki/deu.txt", "held/test.de.gz", "held/test.en.gz", "held/val.de.gz", "held/val.en.gz"]
    assert validate(tmp_path, data, dataclasses.replace(CFG, min_train_pairs=10)).success
    assert pairs(out(tmp_path, "train")) == pairs(TABS_CLEAN)
    before = {d.name: file_hashes(d) for d in raw.iterdir()}

    data = zip_mix(tmp_path / "srv", "deu-eng/deu.txt")
    with pytest.raises(DownloadError) as err:
        download_corpus(config(data), raw)
    assert_one_line(str(err.value), "deu-eng.zip", "no member 'deu-eng/deu.txt' (for deu.txt)", "members")
    assert {d.name: file_hashes(d) for d in raw.iterdir()} == before  # earlier outputs intact
    assert not [p for p in raw.rglob(".download-*")]


# --- a single corpus ----------------------------------------------------------------------------


@pytest.mark.parametrize(("cfg", "setting"), [
    (ValidateConfig(min_pairs=10, min_train_pairs=100, clean=CleanConfig(same=True)), "validate.clean"),
    (ValidateConfig(min_pairs=10, min_train_pairs=100, decontaminate=DecontaminateConfig(enabled=True)),
     "validate.decontaminate"),
])
def test_a_single_corpus_refuses_the_mix_settings(tmp_path: Path, tiny_corpus: dict, cfg: ValidateConfig,
                                                 setting: str) -> None:
    sentinel = with_sentinel(tmp_path)
    with pytest.raises(ConfigError) as err:
        run_validate(tmp_path, tiny_corpus, cfg, raw_dir=tmp_path / "src_corpus")
    assert_one_line(str(err.value), setting, "'tiny' is a single corpus", "data.mixes")
    assert_untouched(tmp_path, sentinel)


def single_tsv(tmp_path: Path, extra: list[str] = ()) -> dict:
    raw = tmp_path / "raw"
    de, en = synthetic_pairs(300, seed=1)
    lines = tsv(de, en) + list(extra)
    write(raw / "train.tsv", lines)
    val = write_corpus(raw, {"val": synthetic_pairs(40, seed=2)}, gz=False)
    return {"languages": ["de", "en"], "files": files("train.tsv") + val["files"],
            "splits": {"train": {"format": "tsv", "file": "train.tsv", "en": 0, "de": 1}, "val": val["splits"]["val"]}}


def test_a_single_corpus_in_tsv_is_validated_like_line_files(tmp_path: Path) -> None:
    bad = ["Hello\t", f"{synthetic_pairs(300, seed=1)[1][0]}\t{synthetic_pairs(300, seed=1)[0][0]}\tagain"]
    corpus = single_tsv(tmp_path, bad)  # an empty German side, and a repeated pair
    cfg = ValidateConfig(min_pairs=10, min_train_pairs=100)
    gate = run_validate(tmp_path, corpus, cfg, raw_dir=tmp_path / "raw")
    assert gate.success
    de, en = synthetic_pairs(300, seed=1)
    assert read_lines(tmp_path / "clean" / "train.de") == de + [de[0]]  # the empty row dropped, the repeat kept
    assert read_lines(tmp_path / "clean" / "train.en") == en + [en[0]]
    assert read_lines(tmp_path / "clean" / "val.de") == synthetic_pairs(40, seed=2)[0]
    stats = report(tmp_path)["stats"]["train"]
    assert (stats["pairs"], stats["pairs_kept"], stats["rows_with_problems"], stats["duplicate_pairs"]) == (
        302, 301, 1, 1)
    assert stats["row_problems"]["empty de"] == 1
    assert any(c.name == "train: aligned" and c.observed == "train.tsv: 302 pairs" for c in gate.checks)


def test_a_single_corpus_tsv_row_with_one_column_is_skipped_and_counted(tmp_path: Path) -> None:
    corpus = single_tsv(tmp_path, ["no tab here"])
    cfg = ValidateConfig(min_pairs=10, min_train_pairs=100)
    assert run_validate(tmp_path, corpus, cfg, raw_dir=tmp_path / "raw").success
    stats = report(tmp_path)["stats"]["train"]
    assert stats["skipped"] == {"malformed: fewer than 2 tab-separated columns": 1}
    assert stats["first_lines_skipped"] == {"malformed: fewer than 2 tab-separated columns": [301]}
    assert stats["pairs"] == 301 and stats["pairs_kept"] == 300
    again = tmp_path / "again"
    again.mkdir()
    sentinel = with_sentinel(again)
    with pytest.raises(GateError) as err:
        run_validate(again, corpus, dataclasses.replace(cfg, max_filtered_rate=0.001), raw_dir=tmp_path / "raw")
    assert_one_line(str(err.value), "train: rows with problems: 1 of 301 (0.332%) (expected share <= 0.001; set by "
                    "validate.max_filtered_rate)")
    assert_untouched(again, sentinel)


# --- general/params.yaml's mix, from the mirror ---------------------------------------------------


def shared_data(mirror: Path) -> Path:
    for root in (mirror.parent, ROOT.parent / "shared" / "data"):
        if all((root / c / "SHA256SUMS").is_file() for c in ("multi30k", "tatoeba", "wmt-news", "onmt-sample",
                                                             "wmt-systems", "blind")):
            return root
    pytest.skip(f"the mirror of general/params.yaml's corpora is not beside {mirror}")


@pytest.mark.slow
def test_the_general_mix_from_the_mirror(tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = shared_data(mirror)
    params = load_params(ROOT / "general" / "params.yaml")
    decon = dataclasses.replace(params.validate.decontaminate, blind=(str(root / "blind"),))  # wherever the clone is
    params = dataclasses.replace(params, validate=dataclasses.replace(params.validate, decontaminate=decon))
    if params.validate.clean.min_lexical > 0 and not Path(params.validate.clean.lexicon).is_file():
        pytest.skip(f"validate.clean.min_lexical needs {params.validate.clean.lexicon} (apt-get install trans-de-en)")
    monkeypatch.setenv(MIRROR_ENV, str(root))
    raw, clean = tmp_path / "raw", tmp_path / "validated"
    download_corpus(params.data, raw)
    assert sorted(p.name for p in raw.iterdir()) == ["multi30k", "onmt-sample", "tatoeba", "wmt-news", "wmt-systems"]
    gate = validate_corpus(params.data, params.validate, raw, clean, tmp_path / "reports")
    assert gate.success
    stats = gate.stats
    summary = json.dumps({"decontamination": stats["decontamination"], "splits": stats["splits"]})
    print(f"\n{summary}")

    # the Tatoeba test overlaps the 2018 training file: thousands of pairs dropped, counted under it
    assert stats["decontamination"]["tatoeba_test"]["exact"] >= 1000, summary
    assert stats["sources"]["tatoeba.train"]["dropped"][mixing.OVERLAP] >= 1000

    # the systems' outputs (consensus per test-suite line) train; the general-test lines are dev; the blind
    # sources are indexed and counted, zeros too
    for split, at_least in (("wmt23-de-en", 18_000), ("wmt23-en-de", 20_000)):
        tally = stats["sources"][f"wmt-systems.{split}"]
        assert tally["written"] >= at_least and tally["read"]["test-suite lines (no reference)"] > 19_000, tally
    assert stats["sources"]["wmt-systems.wmt24-en-de-ref"]["written"] > 998  # split into sentences
    assert {k for k in stats["decontamination"] if k.startswith("blind/")} == {
        "blind/de-en.1.de", "blind/de-en.2.de", "blind/de-en.3.de", "blind/en-de.1.en", "blind/en-de.2.en"}

    # Multi30k train is clean: the rules take under 1%
    m30k = stats["sources"]["multi30k.train"]
    rules = sum(v for k, v in m30k["dropped"].items() if k not in (mixing.REPEATED, mixing.OVERLAP))
    assert m30k["pairs_in"] == 29_000 and rules / m30k["pairs_in"] < 0.01, m30k

    # test sets are whole
    assert stats["sources"]["tatoeba_test"]["written"] == 17_565
    assert len(read_lines(clean / "tatoeba_test.de")) == len(read_lines(clean / "tatoeba_test.en")) == 17_565
    assert len(read_lines(clean / "test_2016_flickr.en")) == 1_000
    assert sorted(p.name for p in clean.iterdir()) == sorted(f"{s}.{lang}" for s in params.data.splits
                                                             for lang in LANGS)

    # no training pair has a sentence of a test set
    train_de, train_en = set(read_lines(clean / "train.de")), set(read_lines(clean / "train.en"))
    for split in params.data.splits[2:]:
        assert not train_de & set(read_lines(clean / f"{split}.de")) - {""}, split
        assert not train_en & set(read_lines(clean / f"{split}.en")) - {""}, split
