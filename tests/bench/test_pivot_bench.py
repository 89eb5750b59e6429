"""bench/pivot.py on relabelled copies of the test package (fr-en, en-de, and fr-de as the direct one):
the route through English is the second package's translation of the first's, scored against the
target side, and a package that does not go into English is refused."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from bench import pivot
from nmt.translate.local import LocalTranslator
from support.onnx import sentences
from support.serve import relabelled_package


def test_the_route_through_english_is_scored_against_the_target_side(package: Path, tmp_path: Path) -> None:
    for src, tgt in (("fr", "en"), ("en", "de"), ("fr", "de")):
        relabelled_package(package, tmp_path / f"{src}-{tgt}", src, tgt)
    lines = sentences(6, seed=11)
    data = tmp_path / "data" / "multi30k"
    data.mkdir(parents=True)
    for lang in ("fr", "de"):
        (data / f"test_2016_flickr.{lang}.gz").write_bytes(gzip.compress("".join(s + "\n" for s in lines).encode()))
    assert pivot.main(["--first", str(tmp_path / "fr-en"), "--second", str(tmp_path / "en-de"), "--direct",
                       str(tmp_path / "fr-de"), "--data", str(tmp_path / "data"), "--results", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "pivot.json").read_text())["results"]["rows"]
    assert [r["route"] for r in rows] == ["fr -> en -> de", "fr -> de"] and all(r["sentences"] == 6 for r in rows)
    first, second = LocalTranslator.open(tmp_path / "fr-en"), LocalTranslator.open(tmp_path / "en-de")
    through = second.translate(first.translate(lines).texts).texts
    from sacrebleu.metrics import BLEU

    assert rows[0]["sacrebleu"] == round(BLEU().corpus_score(through, [lines]).score, 2)
    with pytest.raises(SystemExit, match="must translate into English"):
        pivot.main(["--first", str(tmp_path / "fr-de"), "--second", str(tmp_path / "en-de"),
                    "--data", str(tmp_path / "data"), "--results", str(tmp_path)])
