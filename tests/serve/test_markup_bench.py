"""The markup bench's smoke run (`bench/markup.py --smoke`) on the learned copy package: it builds the
tagged set by its rule, translates tagged and plain text the server's way and writes every figure.
The share of tags on their word is asserted exactly, on the one line whose alignment the learned
model is checked on where it is made (tests/support/learned.py); the other figures are not asserted
(the copy model has no digits to copy placeholders with), only that each step ran and that every
output is well-formed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.corpus import ROOT
from support.learned import ALIGN_SOURCE

pytestmark = pytest.mark.slow


def test_the_tagging_rule_wraps_names_numbers_and_single_translations() -> None:
    sys.path.insert(0, str(ROOT))
    from bench.markup import candidates, tag_line, wraps

    src = "Ein Mann aus Boston trägt 2 Kanus & ein Iglu, 77,8 Prozent."
    ref = "A man from Boston carries 2 canoes & an igloo, 77.8 percent."

    class Lexicon:
        table = {"de": {"kanus": {"canoe"}, "iglu": {"igloo"}, "mann": {"man", "husband"}}}

    found = candidates(src, ref, Lexicon())
    assert [(w, e) for _, w, e in found] == [("Boston", "Boston"), ("2", "2"), ("Kanus", "canoes"),
                                             ("Iglu", "igloo")]  # Mann: two translations; 77,8 is not 77.8
    assert tag_line(src, found[:1]) == ('Ein Mann aus <b data-w="0">Boston</b> trägt 2 Kanus &amp; ein Iglu, '
                                        "77,8 Prozent.")
    assert wraps("the canoe", "canoes") and not wraps("a man carries the canoes", "canoes") and not wraps("", "x")


@pytest.mark.isa  # the share of tags on their word hangs on the model's own scores: also with a lower ISA forced
def test_the_smoke_bench_runs_every_step_on_the_learned_package(learned_package: Path, tmp_path: Path) -> None:
    """Every line is `ALIGN_SOURCE` (five symbols, each once, each a word with a digit: all five are
    candidates by the bench's rule, one drawn per sentence by its seeded draw). The learned package
    decodes with beam 4, alpha 0.6, and the fixture checks that beam search copies this line and that
    leaving any of its words out drops that word's copy most, by `ALIGN_MARGIN` nats: so on any host
    the untagged output is the line itself and the aligner puts every tag on its own word's copy, and
    both shares are exactly 1. An aligner that missed, or a bench that scored the wrong tag, gives less."""
    sys.path.insert(0, str(ROOT))
    from bench.markup import build_set

    data = tmp_path / "data"
    data.mkdir()
    lines = [ALIGN_SOURCE] * 20  # the smoke run takes 16 of them
    for lang in ("de", "en"):
        (data / f"test_2016_flickr.{lang}").write_text("\n".join(lines) + "\n")
    # the words the smoke run tags (its seed 1, one per sentence): more than one of the line's words
    assert len({item["words"][0] for item in build_set(lines, lines, None, 1, 1)[:16]}) > 2
    run = subprocess.run([sys.executable, "-m", "bench.markup", "--smoke", "--model", str(learned_package),
                          "--data", str(data), "--split", "test_2016_flickr", "--out", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads((tmp_path / "markup.json").read_text())
    res = result["results"]
    assert result["bench"] == "markup" and res["smoke"] is True
    assert res["sentences"] == 16 and res["tags"] == res["sentences"]  # one tag per sentence
    assert set(res["criteria"]) == {"wraps_expected_at_least_0.9", "wraps_expected_when_translated_at_least_0.9",
                                    "bleu_within_1", "all_well_formed"}
    # the server's path (tags by the model's alignment) beside the placeholders it had before
    assert res["placeholders"]["tags"] == res["tags"] and res["placeholders"]["well_formed"] == 1.0
    # the copy: every expected word is in the untagged output, and every tag wraps it (the fixture's margins)
    assert res["tags_whose_word_the_untagged_output_has"] == res["tags"]
    assert res["wraps_expected"] == 1.0 and res["wraps_expected_when_translated"] == 1.0
    assert res["well_formed"] == 1.0 and res["bleu_untagged"] == 100.0
    assert res["by_split"]["test_2016_flickr"]["tags"] == res["tags"]
    assert all('<b data-w="0">' in e["output"] and '<b data-w="0">' in e["per_text_node"] for e in res["examples"])
    assert res["per_text_node"]["tags"] == res["tags"] and res["per_text_node"]["well_formed"] == 1.0
