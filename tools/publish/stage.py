"""Stage 9, publish: render the generated blocks of the README and docs/ from committed results.

Every figure the README and `docs/*.md` quote from a measurement lives in a generated block
(`tools.publish.blocks`) that this stage re-renders from `reports/*.json` (the stages' metrics and
gate reports) and `bench/results/*.json` (`make bench`), so a retrain, a changed parameter or a
new bench run leaves the documentation in step with the results it states. Text outside the
blocks is left as written. `reports/published.json` records which file holds which blocks and
the SHA-256 of every source they were rendered from. A block without a renderer, or a missing
source, fails the stage with a message naming the file (and line) and changes no file. With
`--general` (general/dvc.yaml's publish) it renders the general configuration's blocks
(`GENERAL_BLOCKS`: both directions' scores, `reports/general/`) instead, each run leaving the
other's blocks as they are; with `--pairs` (pairs/dvc.yaml's publish) the other pairs' blocks
(`PAIRS_BLOCKS`, `reports/pairs/`); with `--finetune` (finetune/dvc.yaml's publish) the fine-tunes'
(`FINETUNE_BLOCKS`, `reports/finetune/`).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nmt.command import arg, stage_main
from nmt.errors import DataError
from nmt.files.atomic import atomic_write_text
from nmt.files.digest import sha256_file
from tools.publish.blocks import names, render_text
from tools.publish.tables import SETS, Sources

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PublishParams:
    """The publish stage reads no params.yaml section: what it renders is fixed by the blocks."""


@dataclass(frozen=True)
class PublishPaths:
    readme: Path = arg("the README to render (README.md)")
    docs: Path = arg("folder of Markdown pages to render (docs)")
    reports: Path = arg("the stages' reports (reports)")
    bench: Path = arg("bench results (bench/results)")
    out: Path = arg("record of what was rendered from what (reports/published.json)")
    general: bool = arg("render the general configuration's blocks (general/dvc.yaml), not the default's",
                        default=False)
    pairs: bool = arg("render the other language pairs' blocks (pairs/dvc.yaml), not the default's", default=False)
    finetune: bool = arg("render the fine-tunes' blocks (finetune/dvc.yaml), not the default's", default=False)

    @property
    def which(self) -> str:
        """The set of blocks to render: "general", "pairs", "finetune" or "default"."""
        chosen = [name for name in ("general", "pairs", "finetune") if getattr(self, name)]
        if len(chosen) > 1:
            raise DataError(f"{' and '.join('--' + c for c in chosen)}: pass one (each pipeline's publish renders "
                            "its own blocks)")
        return chosen[0] if chosen else "default"


def pages(readme: Path, docs: Path) -> list[Path]:
    return [readme, *sorted(docs.glob("*.md"))]


def render_pages(files: Sequence[Path], sources: Sources, which: str = "default") -> dict[Path, str]:
    """The new text of every file (the blocks of the set `which` names in `SETS`; the other sets' are
    kept); raises `DataError` before anything is written."""
    mine = SETS[which]
    others = {name for key, blocks in SETS.items() if key != which for name in blocks}
    rendered = {}
    for path in files:
        text = path.read_text(encoding="utf-8")

        def render(name: str, where: Path = path) -> str | None:
            if name in others:
                return None
            if name not in mine:
                raise DataError(f"{where}: generated block {name!r} has no renderer; known blocks: "
                                f"{', '.join(sorted({*mine, *others}))} (tools/publish/tables.py)")
            try:
                return mine[name](sources)
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                raise DataError(f"{where}: block {name!r}: its source lacks {exc}; re-run what writes it "
                                "(the stage or bench named in the block's source line)") from None

        rendered[path] = render_text(text, render, str(path))
    return rendered


def publish(paths: PublishPaths) -> dict[str, object]:
    files = pages(paths.readme, paths.docs)
    rendered = render_pages(files, Sources(paths.reports, paths.bench), paths.which)
    for path, text in rendered.items():
        if text != path.read_text(encoding="utf-8"):
            atomic_write_text(path, text)
            log.info("rendered %s", path)
    patterns = {"general": ("general/*/*.json", "general/*/validation/*.json"),
                "pairs": ("pairs/*/*.json", "pairs/*/validation/*.json", "pairs/*/train/live/plots/metrics/epoch_s.tsv",
                          "train/live/plots/metrics/epoch_s.tsv"),
                "finetune": ("finetune/*/compare/compare.json", "finetune/*/validation/*.json"),
                "default": ("*.json", "validation/*.json")}[paths.which]
    sources = sorted([*(f for pattern in patterns for f in paths.reports.glob(pattern)), *paths.bench.glob("*.json")])
    mine = SETS[paths.which]
    blocks = {str(p): [n for n in names(t, str(p)) if n in mine] for p, t in rendered.items()}
    record = {"blocks": {page: found for page, found in blocks.items() if found},
              "sources": {str(p): sha256_file(p) for p in sources if p != paths.out}}
    atomic_write_text(paths.out, json.dumps(record, indent=1) + "\n")
    return record


def run(params: PublishParams, paths: PublishPaths) -> dict[str, object]:
    return publish(paths)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("publish", __doc__.split("\n\n")[0], PublishPaths, PublishParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
