"""Typed, validated configuration from params.yaml.

`load_section(path, "data", DataConfig)` reads one section of params.yaml into a frozen
dataclass, checking every key against the dataclass's type hints. Anything wrong (missing
key, unknown key, wrong type, value out of range) raises one `ConfigError` naming the file
and the dotted key, e.g. ``params.yaml: vocab.min_freq: expected int, got str ('two')``.

Dataclasses check their own value ranges in ``__post_init__`` by raising `InvalidValue`,
which is re-raised here with the full key path.
"""

from __future__ import annotations

import dataclasses
from collections import abc
import types
import typing
from pathlib import Path
from typing import Any, Literal, TypeVar, Union

import yaml

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


def load_section(path: Path, section: str, cls: type[T]) -> T:
    """Load `section` of the YAML file at `path` into the frozen dataclass `cls`."""
    data = read_yaml(path)
    if section not in data:
        raise ConfigError(f"{path}: missing section '{section}:' (see params.yaml in the repository)")
    return from_dict(cls, data[section], key=section, source=str(path))


def from_dict(cls: type[T], data: Any, key: str, source: str = "params") -> T:
    """Build dataclass `cls` from a plain mapping, validating types recursively."""
    return _convert(cls, data, key, source)


def _fail(source: str, key: str, message: str) -> typing.NoReturn:
    raise ConfigError(f"{source}: {key}: {message}")


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _convert(tp: Any, value: Any, key: str, source: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if dataclasses.is_dataclass(tp):
        return _convert_dataclass(tp, value, key, source)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for arg in (a for a in args if a is not type(None)):
            try:
                return _convert(arg, value, key, source)
            except ConfigError:
                continue
        _fail(source, key, f"expected {_describe(tp)}, got {_type_name(value)} ({value!r})")
    if origin is Literal:
        if value not in args:
            _fail(source, key, f"must be one of {', '.join(map(repr, args))}, got {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            _fail(source, key, f"expected a list, got {_type_name(value)} ({value!r})")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, f"{key}[{i}]", source) for i, v in enumerate(value))
        if len(value) != len(args):
            _fail(source, key, f"expected a list of {len(args)} items, got {len(value)}")
        return tuple(_convert(a, v, f"{key}[{i}]", source) for i, (a, v) in enumerate(zip(args, value)))
    if origin in (dict, abc.Mapping):
        if not isinstance(value, dict):
            _fail(source, key, f"expected a mapping, got {_type_name(value)} ({value!r})")
        kt, vt = args
        return types.MappingProxyType(
            {_convert(kt, k, key, source): _convert(vt, v, f"{key}.{k}", source) for k, v in value.items()}
        )
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            _fail(source, key, f"expected a number, got {_type_name(value)} ({value!r})")
        return float(value)
    if tp in (int, str, bool):
        if not isinstance(value, tp) or (tp is int and isinstance(value, bool)):
            _fail(source, key, f"expected {tp.__name__}, got {_type_name(value)} ({value!r})")
        return value
    raise TypeError(f"unsupported config type {tp!r} at {key}")  # a bug in a config class


def _describe(tp: Any) -> str:
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    return "null" if tp is type(None) else getattr(tp, "__name__", str(tp))


def _convert_dataclass(cls: Any, value: Any, key: str, source: str) -> Any:
    if not isinstance(value, dict):
        _fail(source, key, f"expected a mapping, got {_type_name(value)} ({value!r})")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(value) - set(fields), key=str)  # YAML keys may be ints, bools or null
    if unknown:
        _fail(source, f"{key}.{unknown[0]}", f"unknown key (known keys: {', '.join(fields)})")
    kwargs = {}
    for name, field in fields.items():
        if name in value:
            kwargs[name] = _convert(hints[name], value[name], f"{key}.{name}", source)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            _fail(source, f"{key}.{name}", "missing required key")
    try:
        return cls(**kwargs)
    except InvalidValue as exc:
        _fail(source, f"{key}.{exc.key}", exc.message)
