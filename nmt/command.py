"""The command line of one pipeline stage, e.g. `python -m nmt.data.validate --raw data/raw ...`.

A stage module declares the paths it reads and writes as a frozen dataclass (`arg()` gives
each field its help text), the params.yaml sections it reads as another (one field per section),
and a `run(params, paths)` function. `stage_main()` builds the parser from the paths dataclass,
loads those sections of params.yaml (`load_sections`: only those), runs the stage, and turns
an `NmtError` into one line, `nmt STAGE: error: MESSAGE`, and exit status 1: never a
traceback. Paths live in dvc.yaml; the `nmt` command (`nmt.cli`) forwards to these.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from nmt.errors import ConfigError, NmtError
from nmt.files.runlock import held

if TYPE_CHECKING:
    from _typeshed import DataclassInstance
P = TypeVar("P", bound="DataclassInstance")  # a stage's paths
S = TypeVar("S")  # the params.yaml sections a stage reads
NOISY_LOGGERS = ("great_expectations", "urllib3", "filelock")
log = logging.getLogger("nmt.command")


def arg(help: str, default: Any = dataclasses.MISSING, flag: str | None = None) -> Any:
    """A paths-dataclass field: its help text, default (none: required) and option name."""
    return dataclasses.field(default=default, metadata={"help": help, "flag": flag})


def add_path_arguments(parser: argparse.ArgumentParser, paths_cls: type) -> None:
    """One option per field of `paths_cls`: `--name` (underscores as dashes) or its `flag`."""
    hints = typing.get_type_hints(paths_cls)
    for f in dataclasses.fields(paths_cls):
        flag = f.metadata.get("flag") or "--" + f.name.replace("_", "-")
        if hints[f.name] is bool:
            parser.add_argument(flag, dest=f.name, action="store_true", help=f.metadata["help"])
            continue
        required = f.default is dataclasses.MISSING
        default = None if required else f.default
        shown = "" if required or default is None else f" (default: {default})"
        parser.add_argument(flag, dest=f.name, type=Path, required=required, default=default,
                            help=f.metadata["help"] + shown)


def setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.WARNING)


def run_reporting_errors(command: str, func: Callable[[], object]) -> int:
    """Run `func`; an `NmtError` or Ctrl-C becomes one line on stderr and an exit status."""
    try:
        func()
    except NmtError as exc:
        print(f"nmt {command}: error: {exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:  # a runtime-only install (`nmt[runtime]`) running a pipeline command
        if (exc.name or "nmt").split(".")[0] == "nmt":
            raise
        print(f"nmt {command}: error: this command needs the pipeline dependencies ({exc.name} is not installed); "
              "install them with `pip install \"nmt[pipeline]\"`", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"nmt {command}: interrupted; outputs were not replaced", file=sys.stderr)
        return 130
    return 0


def stage_parser(name: str, description: str, paths_cls: type) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"nmt {name}", description=description)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"), help="params file (default: params.yaml)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    add_path_arguments(parser, paths_cls)
    return parser


def stage_main(name: str, description: str, paths_cls: type[P], params_cls: type[S], run: Callable[[S, P], object],
               argv: Sequence[str] | None = None) -> int:
    """Parse `argv`, load the stage's sections of params.yaml, run the stage; return the exit status."""
    args = stage_parser(name, description, paths_cls).parse_args(argv)
    setup_logging(args.verbose)
    paths = paths_cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(paths_cls)})
    files = [v for v in dataclasses.astuple(paths) if isinstance(v, Path) and not str(v).isdigit()]  # not --workers

    def locked() -> None:  # one run of this stage on these files at a time (nmt.files.runlock)
        with held(name, files):
            run_with_params(args.params, params_cls, lambda p: run(p, paths))
    return run_reporting_errors(name, locked)


def run_with_params(params_file: Path, params_cls: type[S], run: Callable[[S], object]) -> None:
    """Run a stage with its sections of `params_file` as they are now, logged (the values it ran
    with), and read them again when it is done: DVC records the file's values after the command
    exits, so an edit made while the stage ran would be recorded as built. Such an edit fails the
    stage (ConfigError naming the keys): DVC records nothing and the stage stays changed."""
    from nmt.config.loader import load_sections

    params = load_sections(params_file, params_cls)
    before = _flat(params)
    if before:
        log.info("%s: running with %s", params_file, ", ".join(f"{k}={_short(v)}" for k, v in before.items()))
    run(params)
    try:
        after = _flat(load_sections(params_file, params_cls))
    except NmtError as exc:
        raise ConfigError(f"{params_file} changed while the stage ran and no longer loads ({exc}); the outputs "
                          "were built with the values it started with: fix it and re-run `dvc repro`") from None
    changed = [f"{k}: {before.get(k)!r} -> {after.get(k)!r}" for k in dict.fromkeys([*before, *after])
               if before.get(k) != after.get(k)]
    if changed:
        raise ConfigError(f"{params_file} changed while the stage ran ({'; '.join(changed)}); its outputs were "
                          "built with the values it started with, so this run is not recorded: re-run `dvc repro`")


def _short(value: Any, most: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= most else text[: most - 3] + "..."


def _flat(tree: Any, key: str = "") -> dict[str, Any]:
    """{'train.lr_factor': 2.0, ...} from the sections' dataclasses and the mappings inside them."""
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        items = [(f.name, getattr(tree, f.name)) for f in dataclasses.fields(tree)]
    elif isinstance(tree, Mapping):
        items = list(tree.items())
    else:
        return {key: tree}
    return {k: v for name, sub in items for k, v in _flat(sub, f"{key}.{name}" if key else str(name)).items()}
