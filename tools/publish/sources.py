"""The committed results a generated block is rendered from, and Markdown helpers.

`Sources` reads the stage reports under `reports/` and the bench results under
`bench/results/`; a missing or unreadable file is a `DataError` saying which stage or bench
writes it. `table()`, `pct()` and `measured()` format what the renderers
(`tools.publish.reports`, `tools.publish.benches`) say.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nmt.errors import DataError


@dataclass(frozen=True)
class Sources:
    """The folders the figures come from (dvc.yaml passes them to the publish stage)."""

    reports: Path  # reports/: metrics.json, export.json, ctranslate2.json, validation/*.json
    bench: Path  # bench/results/: one JSON file per bench (bench/common/record.py)

    def _read(self, path: Path, remedy: str) -> Any:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError(f"{path}: not found; {remedy}") from None
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: cannot read ({exc}); {remedy}") from None

    def report(self, name: str) -> Any:
        """`reports/<name>.json`, written by a pipeline stage."""
        return self._read(self.reports / f"{name}.json", "run the pipeline first (`dvc repro`)")

    def result(self, name: str) -> Any:
        """`bench/results/<name>.json`, written by `bench/<name>.py`."""
        return self._read(self.bench / f"{name}.json", f"run `python -m bench.{name}` (or `make bench`)")


def table(header: list[str], rows: list[list[Any]], align: str) -> str:
    """A Markdown table; `align` has one letter per column: l (left) or r (right)."""
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def pct(share: float) -> str:
    return f"{share:.1%}".replace(".0%", "%")


def measured(result: dict[str, Any], name: str) -> str:
    """The source line of a bench block: file, machine, date, command, repeats."""
    cpu = result["machine"]["cpu"]
    family = f"family {cpu['family']} model {cpu['model_number']}, " if cpu.get("family") else ""
    return (f"Source: `bench/results/{name}.json`, measured {result['date'][:10]} on {cpu['model']} "
            f"({family}{cpu['cores']} cores{', ' + ', '.join(cpu['flags'][-3:]) if cpu['flags'] else ''}) with "
            f"`{result['command']}` (best of {result['repeats']}).")


def not_yet(name: str, command: str, source: str | None = None) -> str:
    """A block before its source's first run: the command that writes its source (`source`, default
    the bench result `bench/results/<name>.json`), and no figure."""
    source = source or f"bench/results/{name}.json"
    return (f"Not measured on this machine yet: `{command}` writes `{source}` and `dvc repro "
            f"publish` renders its table here.\n\nSource: `{source}` (not written yet).")
