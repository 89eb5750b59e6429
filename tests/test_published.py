"""Every figure in the README and docs/ comes from a committed result.

The publish stage renders the generated blocks from `reports/*.json` and `bench/results/*.json`;
these tests re-render them and fail on any difference, fail on a figure stated outside a block
(settings and the paper's constants excepted, each with its reason), and check that the stage
follows a retrain: new metrics, re-rendered pages, the check green again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from nmt.errors import DataError
from support.corpus import ROOT
from tools.publish import benches
from tools.publish.blocks import figures_outside, names, render_text
from tools.publish.stage import main, pages, render_pages
from tools.publish.tables import SETS, Sources

PAGES = pages(ROOT / "README.md", ROOT / "docs")
SOURCES = Sources(ROOT / "reports", ROOT / "bench" / "results")
RERENDER = "run `dvc repro publish` (python -m tools.publish.stage, as dvc.yaml states it) and commit the pages"

# Figures allowed outside generated blocks: settings a user types or reads in params.yaml, the
# paper's constants and section numbers, versions, and the fixed example outputs of tests.
ALLOWED = [
    r"Python 3\.1[12]( or 3\.1[12])?", r"3\.11-3\.12", r"torch's `?2\.13\.0\+cpu`? wheel", r"opset \d+",
    r"\(\d\.\d(\.\d)?\)",  # the paper's section numbers, e.g. (5.3)
    r"section \d\.\d", r"Adam \(0\.9, 0\.98, 1e-9\)", r"eps 0\.1", r"1/65536",
    r"v0\.0\.\d", r"nmt-0\.1\.0", r"fastapi below 0\.151",
    r"default 0\.0", r"\(0\.5\)",  # promote.max_bleu_drop and export.max_ct2_bleu_gap, params.yaml defaults
    r"a 60 s start-up timeout", r"\b600 s\b",  # Prefect settings (prefect.toml), the flow's lock wait
    r"127\.0\.0\.1",
    r"beam 4 with length penalty 1\.0",  # a decoding the decode peers bench measures (a common default)
]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_generated_block_is_as_rendered_from_the_committed_results(page: Path) -> None:
    assert render_pages([page], SOURCES)[page] == page.read_text(encoding="utf-8"), f"{page} is stale: {RERENDER}"
    for which in ("general", "pairs", "finetune"):
        assert render_pages([page], SOURCES, which)[page] == page.read_text(encoding="utf-8"), \
            f"{page}'s {which} blocks are stale: run {which}/dvc.yaml's publish " \
            f"(python -m tools.publish.stage --{which})"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_figure_outside_a_generated_block(page: Path) -> None:
    found = figures_outside(page.read_text(encoding="utf-8"), str(page), ALLOWED)
    assert not found, (f"{page.relative_to(ROOT)} states {found} outside generated blocks: put them in a block "
                       "rendered from a committed result (tools/publish/tables.py), or drop them")


@pytest.mark.parametrize("which", ["default", "general", "pairs", "finetune"])
def test_the_generated_blocks_read_only_what_the_publish_stage_depends_on(monkeypatch: pytest.MonkeyPatch,
                                                                          which: str) -> None:
    """So DVC re-runs publish whenever a figure's source changes (each pipeline's publish, its blocks)."""
    read: list[Path] = []
    original = Sources._read

    def recording(self: Sources, path: Path, remedy: str):  # type: ignore[no-untyped-def]
        read.append(path)
        return original(self, path, remedy)

    monkeypatch.setattr(Sources, "_read", recording)
    render_pages(PAGES, SOURCES, which)
    dvcfile = "dvc.yaml" if which == "default" else f"{which}/dvc.yaml"
    deps = yaml.safe_load((ROOT / dvcfile).read_text())["stages"]["publish"]["deps"]
    uncovered = {str(p.relative_to(ROOT)) for p in read
                 if not any(p == ROOT / d or (ROOT / d) in p.parents for d in deps)}
    assert not uncovered, f"{dvcfile}'s publish stage does not depend on {sorted(uncovered)}"
    # before any fine-tune has run its blocks read nothing: tests/test_published_finetune.py reads fixtures
    assert read or (which == "finetune" and not list((ROOT / "reports" / "finetune").glob("*/compare/compare.json")))


def test_every_block_is_used_and_every_renderer_cites_its_source() -> None:
    used = {name for page in PAGES for name in names(page.read_text(), str(page))}
    known = {name for blocks in SETS.values() for name in blocks}
    assert used == known, f"blocks without a page: {known - used}; pages naming unknown: {used - known}"
    assert sum(map(len, SETS.values())) == len(known), "a block name in two sets: one pipeline's publish owns it"
    for name, render in {k: v for blocks in SETS.values() for k, v in blocks.items()}.items():
        assert "Source: `" in render(SOURCES), f"block {name} does not name its source"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A copy of the pages and their sources, to publish into."""
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copytree(ROOT / "reports", tmp_path / "reports", ignore=shutil.ignore_patterns("*.png", "*.html"))
    shutil.copytree(ROOT / "bench" / "results", tmp_path / "bench" / "results")
    return tmp_path


def _publish(site: Path) -> int:
    return main(["--readme", str(site / "README.md"), "--docs", str(site / "docs"), "--reports",
                 str(site / "reports"), "--bench", str(site / "bench" / "results"), "--out",
                 str(site / "reports" / "published.json")])


def test_a_retrain_changes_the_pages_through_the_stage_and_the_check_stays_green(site: Path) -> None:
    metrics = json.loads((site / "reports" / "metrics.json").read_text())
    split = next(iter(metrics))
    metrics[split]["sacrebleu"], metrics[split]["chrf"] = 12.34, 56.78  # what a retrain with changed params writes
    (site / "reports" / "metrics.json").write_text(json.dumps(metrics))
    sources = Sources(site / "reports", site / "bench" / "results")
    site_pages = pages(site / "README.md", site / "docs")
    assert render_pages(site_pages, sources) != {p: p.read_text() for p in site_pages}  # stale now
    assert _publish(site) == 0
    assert "**12.34**" in (site / "README.md").read_text()
    assert "chrF 56.78" in (site / "docs" / "evaluation.md").read_text()
    assert render_pages(site_pages, sources) == {p: p.read_text() for p in site_pages}
    record = json.loads((site / "reports" / "published.json").read_text())
    assert "results" in record["blocks"][str(site / "README.md")]


@pytest.mark.parametrize("damage, message", [
    ("missing", "decode_peers.json: not found; run `python -m bench.decode_peers`"),
    ("malformed", "block 'results': its source lacks 'beam_size'; re-run what writes it"),
])
def test_a_bad_source_fails_the_stage_and_changes_no_page(site: Path, capsys: pytest.CaptureFixture[str],
                                                          damage: str, message: str) -> None:
    before = {p: p.read_text() for p in pages(site / "README.md", site / "docs")}
    if damage == "missing":
        (site / "bench" / "results" / "decode_peers.json").unlink()
    else:  # a metrics file of an older format
        (site / "reports" / "metrics.json").write_text(json.dumps({"test": {"sacrebleu": 1.0, "sentences": 1,
                                                                            "decoding": {}}}))
    assert _publish(site) == 1
    assert message in capsys.readouterr().err
    assert {p: p.read_text() for p in before} == before


def test_each_publish_renders_its_own_blocks_and_keeps_the_others(site: Path) -> None:
    """The default pipeline's publish never rewrites a general block (nor reads its sources), and back."""
    metrics = site / "reports" / "general" / "de-en" / "metrics.json"
    scores = json.loads(metrics.read_text())
    name = next(iter(scores))
    scores[name]["sacrebleu"] = 98.76  # what a general retrain writes
    metrics.write_text(json.dumps(scores))
    before = (site / "README.md").read_text()
    assert _publish(site) == 0 and (site / "README.md").read_text() == before  # the default's: unchanged
    assert main(["--general", "--readme", str(site / "README.md"), "--docs", str(site / "docs"), "--reports",
                 str(site / "reports"), "--bench", str(site / "bench" / "results"), "--out",
                 str(site / "reports" / "general" / "published.json")]) == 0
    after = (site / "README.md").read_text()
    assert "**98.76**" in after and after.replace("**98.76**", "") != before.replace("**98.76**", "")
    record = json.loads((site / "reports" / "general" / "published.json").read_text())
    assert record["blocks"][str(site / "README.md")] == ["general-results"]
    assert _publish(site) == 0 and (site / "README.md").read_text() == after  # the default's keeps the new block


def test_blocks_render_in_place_and_report_malformed_markers() -> None:
    text = "intro 1.5x\n<!-- begin generated: a -->\nold 9.9%\n<!-- end generated: a -->\noutro"
    rendered = render_text(text, lambda name: f"new {name} 2.5x", "page.md")
    assert rendered.split("\n")[0] == "intro 1.5x" and "new a 2.5x" in rendered and "9.9%" not in rendered
    assert rendered.endswith("<!-- end generated: a -->\noutro")
    assert render_text(rendered, lambda name: f"new {name} 2.5x", "page.md") == rendered  # idempotent
    assert figures_outside(rendered, "page.md") == ["1.5x"]  # inside the block: sourced; outside: not
    assert figures_outside("`3.5 s` and\n```\n7.5%\n```\n[a](x-1.2.md) and 4 x 2", "p.md") == []
    with pytest.raises(DataError, match=r"page\.md:2: block 'a' is never closed"):
        render_text("x\n<!-- begin generated: a -->\n", str, "page.md")
    with pytest.raises(DataError, match=r"page\.md:1: end of block 'b' without its begin marker"):
        render_text("<!-- end generated: b -->", str, "page.md")


def test_a_block_without_a_renderer_is_named(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- begin generated: nonesuch -->\n<!-- end generated: nonesuch -->\n")
    with pytest.raises(DataError, match="'nonesuch' has no renderer"):
        render_pages([page], SOURCES)


def test_a_missing_bench_result_says_how_to_make_it(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"decode_peers\.json: not found; run `python -m bench\.decode_peers`"):
        benches.decode_peers(Sources(tmp_path, tmp_path))
