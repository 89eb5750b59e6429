"""bench/general_rounds.py: a round's figures are the reports its commit holds, read from git; and the
peers block puts our scores beside the published ones, saying where ours are missing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bench import general_rounds
from tools.publish.general import peers, rounds
from tools.publish.sources import Sources

ROOT = Path(__file__).resolve().parents[2]
ROUND_1 = "38af36f"  # both directions' round-1 reports committed


def _git_has(rev: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True).returncode == 0


@pytest.mark.skipif(not _git_has(ROUND_1), reason="a clone without the round-1 commit (shallow)")
def test_a_round_is_the_reports_its_commit_holds() -> None:
    got = general_rounds.round_figures("round 1", ROUND_1)
    for direction in ("de-en", "en-de"):
        metrics = json.loads(subprocess.run(["git", "show", f"{ROUND_1}:reports/general/{direction}/metrics.json"],
                                            cwd=ROOT, capture_output=True, text=True, check=True).stdout)
        mine = got["directions"][direction]
        assert {k: v["sacrebleu"] for k, v in mine["scores"].items()} == {k: v["sacrebleu"] for k, v in metrics.items()}
        assert mine["train"]["epochs"] >= 1 and mine["commit"] != ROUND_1  # the run's own commit, found by git log
    with pytest.raises(SystemExit, match="no reports/general"):
        general_rounds.round_figures("before", "e14e234")  # the general pipeline did not exist yet


@pytest.mark.skipif(not _git_has(ROUND_1), reason="a clone without the round-1 commit (shallow)")
def test_a_direction_not_retrained_since_an_earlier_round_is_left_out_of_the_later(tmp_path: Path) -> None:
    general_rounds.main(["--round", f"one={ROUND_1}", "--round", f"again={ROUND_1}", "--out", str(tmp_path)])
    first, again = json.loads((tmp_path / "general_rounds.json").read_text())["results"]["rounds"]
    assert set(first["directions"]) == {"de-en", "en-de"} and again["directions"] == {}
    text = rounds(Sources(tmp_path / "reports", tmp_path))  # docs/data.md's block: dev and test, round by round
    dev = first["directions"]["de-en"]["train"]["val_loss"]
    assert f"| de-en | dev: val loss | {dev:.3f} | - |" in text and "| en-de | epochs, updates | 7, " in text


def test_a_round_without_its_revision_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        general_rounds.main(["--round", "no revision"])
    assert "expected LABEL=REV" in capsys.readouterr().err


def test_the_peers_block_puts_ours_beside_the_published_and_names_what_is_missing(tmp_path: Path) -> None:
    bench, reports = tmp_path / "bench", tmp_path / "reports"
    bench.mkdir()
    (bench / "peers_published.json").write_bytes((ROOT / "bench/results/peers_published.json").read_bytes())
    (reports / "general" / "de-en").mkdir(parents=True)
    scores = {"newstest2014": 17.25, "newstest2019": 19.0, "tatoeba_test": 41.0}
    (reports / "general" / "de-en" / "metrics.json").write_text(
        json.dumps({name: {"sacrebleu": bleu} for name, bleu in scores.items()}))
    text = peers(Sources(reports, bench))
    assert "| de-en | `newstest2014` | **17.2** | 34.0 | 33.5 | 35.7 | 30.0 |" in text
    assert "| en-de | `newstest2019` | not trained yet |" in text  # no en-de report here
    assert "| en-de | `newstest2014` | not scored here (no mirror) |" in text
    assert "Source: `bench/results/peers_published.json`" in text
