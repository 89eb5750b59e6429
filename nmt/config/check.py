"""`nmt check-params FILE...`: a params file checked whole before any stage runs.

A stage reads only its own sections (`load_sections`), so a mistake in another section surfaces only
when that stage runs, perhaps an hour in. This checks every section at once, as the stages will read
them (a file that names a recipe laid over it: nmt/config/recipe.py): unknown keys (with the nearest
known one), missing keys, types and ranges, then the rules that join two sections, such as a test set
that the data does not have. `make repro`, `make repro-general`, `make repro-pairs` and `make finetune`
run it on their files first. Exit status 0 when every file passes, 1 when one does not (each problem one
line naming the file and the key), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nmt.config.finetune import FinetuneConfig
from nmt.config.loader import from_dict, read_params
from nmt.config.params import Params
from nmt.errors import ConfigError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WithFinetune(Params):
    finetune: FinetuneConfig | None = None  # a fine-tune's own section (finetune/*.yaml), else absent


def check(path: Path) -> tuple[Params, FinetuneConfig | None]:
    """The whole file at `path`, typed; `ConfigError` names the first key at fault."""
    data = read_params(path, WithFinetune)
    finetune = data.pop("finetune", None)
    params = from_dict(Params, data, source=str(path), complete=True)
    ft = None if finetune is None else from_dict(FinetuneConfig, finetune, key="finetune", source=str(path),
                                                   complete=True)
    problems = across_sections(params, ft)
    if problems:
        raise ConfigError("\n".join(f"{path}: {p}" for p in problems))
    return params, ft


def across_sections(params: Params, finetune: FinetuneConfig | None) -> list[str]:
    """The rules no one section can check alone, each broken one as `key: what is wrong (how to fix)`."""
    problems = []
    splits = params.data.splits
    tests = [s for s in splits if s not in ("train", "val")]
    missing = [s for s in params.evaluate.test_sets if s not in tests]
    if missing:
        problems.append(f"evaluate.test_sets: {missing} are not test splits of data.corpus {params.data.corpus!r} "
                        f"(its test splits: {tests}); list them under its splits, or pick among those")
    for key, split in (("export.parity_split", params.export.parity_split),
                       ("export.compare_split", params.export.compare_split)):
        if split is not None and split not in splits:
            problems.append(f"{key}: {split!r} is not a split of data.corpus {params.data.corpus!r} "
                            f"(its splits: {splits})")
    if params.model.tie_source and not params.vocab.joint:
        problems.append("model.tie_source: sharing the source and target embeddings needs one vocabulary: "
                        "set vocab.joint: true, or model.tie_source: false")
    if params.train.max_len > params.model.max_len:
        problems.append(f"train.max_len: {params.train.max_len} is longer than the model's positions "
                        f"(model.max_len: {params.model.max_len})")
    if finetune is not None:
        outside = [s for s in finetune.general_sets if s not in params.evaluate.test_sets]
        if outside:
            problems.append(f"finetune.general_sets: {outside} are not in evaluate.test_sets "
                            f"({list(params.evaluate.test_sets)}): the compare gate reads their scores")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nmt check-params", description=__doc__.split("\n\n")[1])
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE",
                        help="params files: params.yaml, general/params.yaml, pairs/<pair>.yaml, finetune/<data>.yaml")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    failed = 0
    for path in args.files:
        try:
            check(path)
        except ConfigError as exc:
            failed += 1
            log.error("%s", exc)
        else:
            log.info("%s: ok, every section and the rules across them", path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
