"""The terminology bench (`bench/terminology.py`): its term rule on a small dictionary in Ding's
format, and its smoke run on the test package: it builds the glossary by its rule, writes and
reads it back as `--glossary FILE` would, translates with and without it the server's way and
writes every figure. The copy model's BLEU is not asserted, only that each step ran and that with
the glossary every term is in the output (the swap appends a term whose placeholder the model
dropped, and the copy model has no digits to copy placeholders with)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.corpus import ROOT
from support.onnx import sentences

pytestmark = pytest.mark.slow

DING = """# Version :: test
Kanu {n} | Kanus {pl} | Kanu fahren; paddeln :: canoe | canoes | to canoe
Haus {n} | Häuser {pl} :: house | houses
Haus {n}; Zuhause {n} :: home
Mai {m} :: May
Iglu {m,n} :: igloo
schnell {adj} :: fast
"""


def test_the_term_rule_takes_nouns_with_one_translation_that_every_reference_has(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.terminology import candidates, occurs, read_dictionary, read_forms, term_set

    ding = tmp_path / "de-en"
    ding.write_text(DING, encoding="utf-8")
    assert candidates("Kanus fahren. Ein Iglu, „Haus“ und das Haus am Ufer", "de") == ["Iglu", "Haus", "Ufer"]
    assert candidates("The canoes of the igloo", "en") == ["canoes", "igloo"]
    table = read_dictionary(ding, "de", {"kanu", "kanus", "haus", "iglu", "schnell", "mai"})
    assert table["kanu"] == {"canoe": "canoe"} and table["haus"] == {"house": "house", "home": "home"}
    assert "schnell" not in table  # not a noun
    pairs = [("Ein rotes Kanu im Mai.", "A red canoe in May."), ("Zwei Kanus und ein Haus.", "Two canoes and a house."),
             ("Das Iglu.", "The igloo."), ("Ein Iglu aus Eis.", "An ice house.")]
    terms = term_set(pairs, "de", table)
    # Haus: two translations; Iglu: pair 4's reference lacks `igloo`, though pair 3's has it
    assert terms == {"kanu": ("Kanu", "canoe"), "mai": ("Mai", "May"), "kanus": ("Kanus", "canoes")}
    assert read_forms(ding, "en", {"canoe"})["canoe"] >= {"canoe", "canoes", "canoees"}
    assert read_forms(ding, "de", {"haus"})["haus"] >= {"haus", "häuser", "häusern", "hauses"}
    assert occurs("Die STRASSE ist nass.", "Straße") and not occurs("The canoes", "canoe")


def test_the_smoke_bench_runs_every_step_on_the_test_package(package: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    lines = sentences(40, seed=5)
    src = [f"{line} Kanu s1" if k % 2 else line for k, line in enumerate(lines)]
    ref = [f"{line} canoe s1" if k % 2 else line for k, line in enumerate(lines)]
    (data / "test_2016_flickr.de").write_text("\n".join(src) + "\n")
    (data / "test_2016_flickr.en").write_text("\n".join(ref) + "\n")
    (tmp_path / "de-en").write_text(DING, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "bench.terminology", "--smoke", "--model", str(package),
                          "--data", str(data), "--split", "test_2016_flickr", "--lexicon", str(tmp_path / "de-en"),
                          "--glossary-out", str(tmp_path / "glossary.tsv"), "--out", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads((tmp_path / "terminology.json").read_text())
    res = result["results"]
    assert result["bench"] == "terminology" and res["smoke"] is True and res["direction"] == "de-en"
    assert res["glossary_terms"] == 1 and res["terms_sample"] == [["Kanu", "canoe"]]
    assert (tmp_path / "glossary.tsv").read_text().splitlines()[1].split("\t")[:2] == ["Kanu", "canoe"]
    assert res["sentences"] == 16 and res["term_occurrences"] == 16  # 20 pairs with the term, --smoke keeps 16
    assert res["recall_with"] == 1.0 and 0.0 <= res["recall_without"] <= 1.0
    assert isinstance(res["bleu_with"], float) and isinstance(res["bleu_without"], float)
    assert set(res["criteria"]) == {"recall_with_at_least_0.95", "bleu_not_below_by_more_than_0.5"}
    assert res["by_split"]["test_2016_flickr"]["term_occurrences"] == 16
    assert all("canoe" in e["with"] for e in res["examples"]) and len(res["examples"]) == 5
