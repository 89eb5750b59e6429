"""A params file that names a recipe holds only what differs from it.

A file with a top-level ``recipe: ../params.yaml`` (a path from the file's own folder) is laid over that
file (a whole params file: tools/graph.py tracks one recipe per file): a section or key it states replaces the
recipe's, the rest is the recipe's. Where the value is a config dataclass (a section, or a block inside
one such as ``validate.clean``) the two are merged key by key; a catalogue of named config objects
(``data.corpora``, ``data.mixes``) gains the overlay's entries, each replacing the recipe's entry of that name
whole (so a fine-tune names a mix of the recipe's corpora without copying them); anything else (a number, a
list, a setting per name such as ``evaluate.min_bleu_by_set``) is replaced. A key the recipe lacks is a
mistake (a typo would otherwise be silently ignored; a catalogue's new entry is not a key): one
`ConfigError` names the overlay, the dotted key and the nearest keys the recipe has, e.g.
``pairs/xx-en.yaml: train.max_step: not a key of its recipe params.yaml (did you mean max_steps?)``.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections import abc
from collections.abc import Callable
from pathlib import Path
from typing import Any, Union

from nmt.errors import ConfigError

KEY = "recipe"  # the top-level key naming the recipe
OWN_SECTIONS = ("finetune",)  # sections an overlay may add that a whole recipe has not (nmt/config/finetune.py)


def apply(path: Path, data: dict[str, Any], cls: Any, read: Callable[[Path], dict[str, Any]],
          seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """`data` (the file at `path`) over its recipe, if it names one; `cls`: the dataclass of whole-file
    sections (its field types say where to merge); `read` parses a YAML file."""
    if KEY not in data:
        return data
    name = data[KEY]
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{path}: {KEY}: expected the path of a params file, got {name!r}")
    recipe = Path(path).parent / name
    if recipe.resolve() in seen or recipe.resolve() == Path(path).resolve():
        raise ConfigError(f"{path}: {KEY}: {name} leads back to a file that names it (a cycle of recipes)")
    if not recipe.is_file():
        raise ConfigError(f"{path}: {KEY}: {recipe} not found (a path from the folder of {path})")
    base = apply(recipe, read(recipe), cls, read, (*seen, Path(path).resolve()))
    top = {k: v for k, v in data.items() if k != KEY}
    return _merge(cls, base, top, "", str(path), str(recipe))


def _dataclass_of(tp: Any) -> Any:
    """The dataclass a field holds (also inside `X | None`), else None."""
    if dataclasses.is_dataclass(tp):
        return tp
    if typing.get_origin(tp) in (Union, types.UnionType):
        found = [a for a in typing.get_args(tp) if dataclasses.is_dataclass(a)]
        return found[0] if len(found) == 1 else None
    return None


def _is_catalogue(tp: Any) -> bool:
    """A named table of config objects (data.corpora, data.mixes), not a setting per name (evaluate.min_bleu_by_set,
    which is replaced: its names must be the overlay's test sets)."""
    args = typing.get_args(tp)
    return typing.get_origin(tp) in (dict, abc.Mapping) and len(args) == 2 and dataclasses.is_dataclass(args[1])


def _merge(cls: Any, base: dict[str, Any], top: dict[str, Any], key: str, source: str, recipe: str) -> dict[str, Any]:
    """`top` over `base` at `key`; `cls`: the dataclass there (None: a section no reader typed, known by the
    recipe's keys). A key of the dataclass that the recipe leaves at its default is a key too."""
    hints = typing.get_type_hints(cls) if cls is not None else {}
    known = list(base) + [n for n in hints if n not in base] + ([] if key else list(OWN_SECTIONS))
    merged = dict(base)
    for name, value in top.items():
        dotted = f"{key}.{name}" if key else str(name)
        if name not in known:
            near = difflib.get_close_matches(str(name), [str(k) for k in known], n=1)
            hint = f" (did you mean {near[0]}?)" if near else f" (its keys here: {', '.join(map(str, known))})"
            raise ConfigError(f"{source}: {dotted}: not a key of its recipe {recipe}{hint}")
        inner = _dataclass_of(hints.get(name))
        under = base.get(name, {})
        both = isinstance(value, dict) and isinstance(under, dict)
        if inner is not None and both:
            merged[name] = _merge(inner, under, value, dotted, source, recipe)
        elif both and _is_catalogue(hints.get(name)):
            merged[name] = {**under, **value}  # a catalogue: entries added, or replaced whole
        else:
            merged[name] = value
    return merged
