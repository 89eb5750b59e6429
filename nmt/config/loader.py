"""Turning YAML into typed, validated, frozen dataclasses.

`from_dict(cls, data, key)` builds dataclass `cls`, checking every key against its type
hints. Anything wrong (missing key, unknown key, wrong type, value out of range) raises one
`ConfigError` naming the file and the dotted key, e.g.
``params.yaml: vocab.min_freq: expected int, got str ('two')``. With `complete=True` every
key of the file's sections must be given (params.yaml states every key; dataclass defaults serve the Python API).

Dataclasses check their own value ranges in ``__post_init__`` by raising `InvalidValue`,
which is re-raised here with the full key path.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections import abc
from pathlib import Path
from typing import Any, Literal, TypeVar, Union

import yaml

from nmt.config import recipe
from nmt.errors import ConfigError

T = TypeVar("T")


class InvalidValue(ValueError):
    """Raised by a config dataclass's ``__post_init__``: `key` (relative) has a bad value."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


def require(condition: bool, key: str, message: str) -> None:
    """Raise `InvalidValue(key, message)` unless `condition` holds."""
    if not condition:
        raise InvalidValue(key, message)


def read_yaml(path: Path) -> dict[str, Any]:
    """Parse a YAML mapping, turning I/O and syntax errors into `ConfigError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found (run from the project root, or pass --params)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}:{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of sections at the top level")
    return data


def read_params(path: Path, cls: Any) -> dict[str, Any]:
    """The params file at `path` as a mapping, laid over the recipe it names, if any (nmt/config/recipe.py);
    `cls`: the dataclass of the sections read (its field types say where the two are merged)."""
    return recipe.apply(Path(path), read_yaml(path), cls, read_yaml)


def from_dict(cls: type[T], data: Any, key: str = "", source: str = "params", complete: bool = False) -> T:
    """Build dataclass `cls` from a plain mapping, validating types recursively; `key` is the
    dotted path of `data` in the file ("" for the whole file)."""
    return _Converter(source, complete).convert(cls, data, key)


def load_sections(path: Path, cls: type[T]) -> T:
    """Read the params file at `path` into `cls`: a dataclass with one field per section a stage
    reads (e.g. the train stage's model, train and tokenize). Only those sections are read, each in
    full (every key stated), so another stage's section, a new one included, is no concern of this
    stage: DVC does not re-run it and a mistake there does not stop it. `load_params`
    (nmt/config/params.py) checks the whole file."""
    data = read_params(path, cls)
    wanted = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return from_dict(cls, {k: v for k, v in data.items() if k in wanted}, source=str(path), complete=True)


def _fail(source: str, key: str, message: str) -> typing.NoReturn:
    raise ConfigError(f"{source}: {key}: {message}" if key else f"{source}: {message}")


def _join(key: str, name: object) -> str:
    return f"{key}.{name}" if key else str(name)


def _is_section(key: str) -> bool:
    """The whole file ("") or one of its sections ("vocab"), not something nested deeper."""
    return "." not in key and "[" not in key


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _describe(tp: Any) -> str:
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    return "null" if tp is type(None) else getattr(tp, "__name__", str(tp))


class _Converter:
    """Converts one document; knows its file name (for errors) and whether keys may be omitted."""

    def __init__(self, source: str, complete: bool) -> None:
        self.source, self.complete = source, complete

    def fail(self, key: str, message: str) -> typing.NoReturn:
        _fail(self.source, key, message)

    def convert(self, tp: Any, value: Any, key: str) -> Any:
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if dataclasses.is_dataclass(tp):
            return self.dataclass(tp, value, key)
        if tp is Any:
            return value
        if origin in (Union, types.UnionType):
            return self.union(tp, args, value, key)
        if origin is Literal:
            if value not in args:
                self.fail(key, f"must be one of {', '.join(map(repr, args))}, got {value!r}")
            return value
        if origin is tuple:
            return self.sequence(args, value, key)
        if origin in (dict, abc.Mapping):
            return self.mapping(args, value, key)
        return self.scalar(tp, value, key)

    def union(self, tp: Any, args: tuple[Any, ...], value: Any, key: str) -> Any:
        if value is None and type(None) in args:
            return None
        for arg in (a for a in args if a is not type(None)):
            try:
                return self.convert(arg, value, key)
            except ConfigError:
                continue
        self.fail(key, f"expected {_describe(tp)}, got {_type_name(value)} ({value!r})")

    def mapping(self, args: tuple[Any, ...], value: Any, key: str) -> types.MappingProxyType:
        if not isinstance(value, dict):
            self.fail(key, f"expected a mapping, got {_type_name(value)} ({value!r})")
        kt, vt = args
        return types.MappingProxyType(
            {self.convert(kt, k, key): self.convert(vt, v, _join(key, k)) for k, v in value.items()})

    def scalar(self, tp: Any, value: Any, key: str) -> Any:
        if tp is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.fail(key, f"expected a number, got {_type_name(value)} ({value!r})")
            return float(value)
        if tp in (int, str, bool):
            if not isinstance(value, tp) or (tp is int and isinstance(value, bool)):
                self.fail(key, f"expected {tp.__name__}, got {_type_name(value)} ({value!r})")
            return value
        raise TypeError(f"unsupported config type {tp!r} at {key}")  # a bug in a config class

    def sequence(self, args: tuple[Any, ...], value: Any, key: str) -> tuple[Any, ...]:
        if not isinstance(value, (list, tuple)):
            self.fail(key, f"expected a list, got {_type_name(value)} ({value!r})")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(self.convert(args[0], v, f"{key}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            self.fail(key, f"expected a list of {len(args)} items, got {len(value)}")
        return tuple(self.convert(a, v, f"{key}[{i}]") for i, (a, v) in enumerate(zip(args, value)))

    def dataclass(self, cls: Any, value: Any, key: str) -> Any:
        if not isinstance(value, dict):
            self.fail(key, f"expected a mapping, got {_type_name(value)} ({value!r})")
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
        unknown = sorted(set(value) - set(fields), key=str)  # YAML keys may be ints, bools or null
        if unknown:
            what = "key" if key else "section"
            near = difflib.get_close_matches(str(unknown[0]), list(fields), n=1)
            hint = f"did you mean {near[0]}? " if near else ""
            self.fail(_join(key, unknown[0]), f"unknown {what} ({hint}known {what}s: {', '.join(fields)})")
        kwargs = {}
        for name, field in fields.items():
            if name in value:
                kwargs[name] = self.convert(hints[name], value[name], _join(key, name))
            elif (self.complete and _is_section(key)) or (field.default is dataclasses.MISSING
                                                          and field.default_factory is dataclasses.MISSING):
                if not key:
                    self.fail("", f"missing section '{name}:' (see params.yaml in the repository)")
                self.fail(_join(key, name), "missing required key (params.yaml states every key; copy it "
                                            "from the repository's params.yaml)")
        try:
            return cls(**kwargs)
        except InvalidValue as exc:
            self.fail(_join(key, exc.key), exc.message)
