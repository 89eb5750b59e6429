"""Blind test sets in the decontamination index.

A blind set is a file of source sentences whose references are kept elsewhere
(`../shared/data/blind/`: `de-en.1.de`, `en-de.2.en`, ...). No training pair may contain one of its
sentences, or a near copy: the files of every folder in `validate.decontaminate.blind` are indexed
beside the dev and test sets, each file by the language its name ends in (`.de`: German), source
side only, and the validate report (and so the model card) counts the training pairs dropped for
each file under `blind/<file name>`, zeros included. Files that do not end in one of the mix's
languages (a README, SHA256SUMS) are not read. A folder that is missing or holds no such file is a
`DataError`: a misspelt path must not pass as "no overlap".
"""

from __future__ import annotations

import logging
from pathlib import Path

from nmt.data.decontaminate import Decontaminator
from nmt.errors import DataError
from nmt.files.lines import read_lines

log = logging.getLogger(__name__)


def blind_files(folder: Path, langs: tuple[str, str]) -> list[tuple[Path, str]]:
    """The files of `folder` whose suffix is one of `langs`, with that language, by name."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"{folder}: validate.decontaminate.blind names a folder that does not exist; give the "
                        "folder of the blind test sources (e.g. ../shared/data/blind) or remove it")
    found = sorted((p, p.suffix[1:]) for p in folder.iterdir() if p.is_file() and p.suffix[1:] in langs)
    if not found:
        raise DataError(f"{folder}: no file ending in .{' or .'.join(langs)}; validate.decontaminate.blind must "
                        "name folders of source files named by their language (de-en.1.de)")
    return found


def index_blind(decon: Decontaminator, folders: tuple[str, ...], langs: tuple[str, str]) -> dict[str, int]:
    """Index every blind file of `folders` in `decon`; {"blind/<name>": lines indexed}."""
    lines: dict[str, int] = {}
    for folder in folders:
        for path, lang in blind_files(Path(folder), langs):
            owner = f"blind/{path.name}"
            if owner in lines:
                raise DataError(f"{path}: two blind folders hold a file named {path.name}; rename one")
            sentences = read_lines(path)
            decon.add_side(lang, sentences, owner)
            lines[owner] = len(sentences)
    log.info("blind sets indexed for decontamination: %s", lines)
    return lines
