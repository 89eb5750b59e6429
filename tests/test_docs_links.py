"""The README is a front door: short, and every link in it and in docs/ leads somewhere.

`broken_links(path)` reads one markdown file and returns its relative links that do not
resolve: the file (relative to the linking file) must exist and an `#anchor` must be a
heading of the target, slugged as GitHub does. Links inside code are not links and are skipped,
and so are http(s) and mailto links.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support.corpus import ROOT

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 250

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"`+[^`]*`+")
EXTERNAL = ("http://", "https://", "mailto:")


def prose_lines(text: str) -> list[str]:
    """The lines of a markdown text outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation but '-' and '_' removed, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a markdown file's headings; repeats get -1, -2, ... as on GitHub."""
    found: set[str] = set()
    counts: dict[str, int] = {}
    for line in prose_lines(path.read_text(encoding="utf-8")):
        if match := HEADING.match(line):
            base = slug(match.group(2))
            repeats = counts.get(base, 0)
            counts[base] = repeats + 1
            found.add(f"{base}-{repeats}" if repeats else base)
    return found


def links(path: Path) -> list[str]:
    """The link targets of a markdown file, outside code blocks and inline code."""
    targets = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        targets += LINK.findall(INLINE_CODE.sub("", line))
    return targets


def broken_links(path: Path) -> list[str]:
    """The relative links of `path` whose file or heading anchor does not exist, with the reason."""
    broken = []
    for target in links(path):
        if target.lower().startswith(EXTERNAL):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif anchor and linked.suffix != ".md":
            broken.append(f"{target}: an anchor into {linked.name}, which is not markdown")
        elif anchor and anchor not in anchors(linked):
            broken.append(f"{target}: no heading '#{anchor}' in {linked.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == [], f"{page.relative_to(ROOT)}: broken links"


def test_the_readme_is_read_in_five_minutes() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; move detail into docs/"


def test_the_readme_links_every_docs_page() -> None:
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in links(README)}
    assert [p.name for p in PAGES[1:] if p.resolve() not in linked] == []
    assert len(PAGES) > 1, "no docs/*.md found"


def test_the_checker_reports_a_missing_file_a_missing_anchor_and_a_missing_same_file_anchor(
    tmp_path: Path,
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# Page\n\n## Model lifecycle: registry, promotion\n")
    (tmp_path / "README.md").write_text(
        "# Title\n\n## Set up\n\n## Set up\n\n"
        "[ok](docs/page.md) [ok](docs/page.md#model-lifecycle-registry-promotion) [ok](#set-up-1)\n"
        "[web](https://example.org/x#y) [mail](mailto:a@b.c) `[code](nowhere.md)`\n"
        "```\n[in a block](nowhere.md)\n# not a heading\n```\n"
        "[gone](docs/missing.md) [bad anchor](docs/page.md#model-lifecycle) [bad here](#not-a-heading)\n"
    )
    assert broken_links(tmp_path / "README.md") == [
        f"docs/missing.md: no file {(tmp_path / 'docs' / 'missing.md').resolve()}",
        "docs/page.md#model-lifecycle: no heading '#model-lifecycle' in page.md",
        "#not-a-heading: no heading '#not-a-heading' in README.md",
    ]


def test_slugs_follow_github() -> None:
    assert slug("Model lifecycle: experiments, registry, promotion, fetch") == (
        "model-lifecycle-experiments-registry-promotion-fetch"
    )
    assert slug("What `dvc repro train` does") == "what-dvc-repro-train-does"
    assert slug("Decoding: ONNX Runtime and CTranslate2 against torch") == (
        "decoding-onnx-runtime-and-ctranslate2-against-torch"
    )
    assert slug("snake_case and-dash") == "snake_case-and-dash"
