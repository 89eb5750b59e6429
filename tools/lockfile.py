"""requirements.lock: the exact versions (with hashes) that `make install` installs, and its check.

`make lock` resolves pyproject.toml's `dev` and `bench` extras with pip-compile (torch pinned to this machine
kind's CPU wheel), then `python tools/lockfile.py stamp` writes the digest of pyproject.toml's
dependency tables into the lock's header. `python tools/lockfile.py check` (run by `make install`
and by tests/test_dependencies.py) fails with one line saying how to refresh when the tables
changed since, or when a locked version falls outside a range. Standard library only (it runs
before anything is installed); the range check uses `packaging` where it is importable.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
LOCK = ROOT / "requirements.lock"
STAMP = "# pyproject-dependencies-sha256: "
REFRESH = "refresh it with `make lock` (then `make install`) and commit both files"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def normalize(name: str) -> str:
    """PEP 503 name: `Ruamel.YAML` and `ruamel_yaml` are the same project."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(text: str) -> str:
    """`"sqlalchemy[asyncio]>=2.0,<2.1"` -> `"sqlalchemy"` (normalized)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", text)
    if match is None:
        raise ValueError(f"not a requirement: {text!r}")
    return normalize(match.group(1))


def dependency_tables(pyproject: Path = PYPROJECT) -> dict:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return {"requires-python": project.get("requires-python"), "dependencies": project.get("dependencies", []),
            "optional-dependencies": project.get("optional-dependencies", {})}


def digest(pyproject: Path = PYPROJECT) -> str:
    text = json.dumps(dependency_tables(pyproject), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def pins(lock: Path = LOCK) -> dict[str, str]:
    """{normalized name: version} of every `name==version` line of the lock."""
    found = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if match:
            found[normalize(match.group(1))] = match.group(2)
    return found


def stamp(lock: Path = LOCK, pyproject: Path = PYPROJECT) -> None:
    """Record pyproject.toml's digest in the lock's first line, and drop pip-compile's entry for the
    project itself (`nmt @ file:///...`, from the extras that name it: unhashable, a local path)."""
    own = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"] + " @ "
    kept, skipping = [], False
    for line in lock.read_text(encoding="utf-8").splitlines():
        if line.startswith(own):
            skipping = True
            while kept and kept[-1].startswith(("# WARNING: pip install will require", "# Consider using a hashable")):
                kept.pop()
            continue
        if skipping and line.startswith(" "):
            continue  # the entry's "# via" lines
        skipping = False
        if not line.startswith(STAMP):
            kept.append(line)
    lock.write_text("\n".join([STAMP + digest(pyproject), *kept]) + "\n", encoding="utf-8")


def requirements(pyproject: Path = PYPROJECT, extra: str = "dev") -> list[str]:
    """The requirement strings `pip install ".[extra]"` asks for, self-references followed."""
    tables = dependency_tables(pyproject)
    name = normalize(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"])
    wanted, todo, out = set(), [extra], list(tables["dependencies"])
    while todo:
        group = todo.pop()
        if group in wanted:
            continue
        wanted.add(group)
        for req in tables["optional-dependencies"].get(group, []):
            self_ref = re.match(rf"^{re.escape(name)}\[([^\]]+)\]", normalize(req.split(";")[0].strip()))
            if self_ref:
                todo.extend(e.strip() for e in self_ref.group(1).split(","))
            else:
                out.append(req)
    return out


def problems(lock: Path = LOCK, pyproject: Path = PYPROJECT) -> list[str]:
    """What is wrong with the lock, each as one line; empty when it matches pyproject.toml."""
    if not lock.is_file():
        return [f"{lock.name} is missing; {REFRESH}"]
    header = next((ln for ln in lock.read_text(encoding="utf-8").splitlines() if ln.startswith(STAMP)), None)
    found = []
    if header is None or header.removeprefix(STAMP).strip() != digest(pyproject):
        found.append(f"{lock.name} was resolved from other dependency ranges than {pyproject.name}'s; {REFRESH}")
    try:
        from packaging.requirements import Requirement
    except ImportError:  # a bare virtualenv: the digest alone decides
        return found
    locked = pins(lock)
    for text in requirements(pyproject):
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        version = locked.get(normalize(req.name))
        if version is None:
            found.append(f"{req.name} ({text}) is not in {lock.name}; {REFRESH}")
        elif not req.specifier.contains(version, prereleases=True):
            found.append(f"{lock.name} pins {req.name}=={version}, outside {pyproject.name}'s {text!r}; {REFRESH}")
    return found


def main(argv: list[str]) -> int:
    if argv == ["stamp"]:
        stamp()
        return 0
    if argv == ["check"]:
        found = problems()
        for line in found:
            print(f"lockfile: {line}", file=sys.stderr)
        return 1 if found else 0
    print("usage: python tools/lockfile.py check|stamp", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
