"""GTO over this git repository for one model: its versions, the version at a stage, and the tags
that register, promote and roll back, all of a model's artifacts or none.

Versions and stages are read through GTO's API (`gto.api.show`, `find_versions_in_stage`), not
by parsing tag names. Every change is git tags that GTO creates (`NAME@v0.0.N` registers,
`NAME#prod#N` assigns the stage, `NAME#prod!#N` unassigns it); a change that fails half-way
deletes the tags it made, so the registry is as it was before: the torch model and the ONNX
package of a model never hold different versions at a stage.

A rollback unassigns the stage from the champion (so GTO, which reads the highest version holding
the stage, sees the one before it) and assigns it again to that earlier version (so `dvc
artifacts get --stage prod`, which reads the newest stage tag, fetches it too).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from flows.models import ArtifactsError, Model, declared_models
from flows.tools import git

log = logging.getLogger(__name__)


class RegistryError(RuntimeError):
    """The registry cannot do what was asked (no artifacts declared, no git, bad revision, nothing to roll back to)."""


def _git(repo: Path, *args: str) -> str:
    result = git(repo, *args)
    if result.returncode != 0:
        raise RegistryError(f"git {' '.join(args)} in {repo}: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.lstrip("v").split("."))


def models(repo: Path, dvcfile: str = "dvc.yaml") -> list[Model]:
    """The models `dvcfile` declares; a RegistryError when it declares none."""
    try:
        found = declared_models(repo, dvcfile)
    except ArtifactsError as exc:
        raise RegistryError(str(exc)) from None
    if not found:
        raise RegistryError(f"{Path(repo) / dvcfile} declares no `artifacts:`; nothing to register")
    return found


def _next_second() -> None:
    """Wait for the clock's next whole second: a tag made after it is newer than every tag made before."""
    time.sleep(1.01 - time.time() % 1)


class Registry:
    """GTO over the git repository `repo` for one model: its artifacts get the same version on the
    same commit, and its metrics file decides (default: the first model of dvc.yaml)."""

    def __init__(self, repo: Path, model: Model | None = None, stage: str = "prod") -> None:
        self.repo, self.stage = Path(repo), stage
        self.model = model if model is not None else models(self.repo)[0]
        self.artifacts = list(self.model.artifacts)
        self.artifact = self.model.name  # the one whose versions are counted and shown
        _git(self.repo, "rev-parse", "--git-dir")  # GTO reads tags without git; refs, metrics, undo need it

    def holders(self, artifact: str | None = None) -> list[tuple[str, str]]:
        """(version, commit) of every version of `artifact` (default: the first) that holds the
        stage, newest first: the first is the one at the stage, the second the one a rollback
        goes back to; [] before the first promotion."""
        from gto.api import find_versions_in_stage
        from gto.exceptions import ArtifactNotFound

        try:
            found = find_versions_in_stage(str(self.repo), artifact or self.artifact, self.stage, versions_per_stage=-1)
        except ArtifactNotFound:  # nothing registered yet
            return []
        return [(v.version, v.commit_hexsha) for v in found or []]

    def prod(self) -> tuple[str, str] | None:
        """(version, commit) at the stage, or None before the first promotion."""
        held = self.holders()
        return held[0] if held else None

    def versions(self, artifact: str | None = None) -> list[str]:
        """Registered versions of `artifact` (default: the first), oldest first; deregistered ones
        too, as GTO will not register their numbers again."""
        from gto.api import show
        from gto.constants import VersionSort
        from gto.exceptions import ArtifactNotFound

        try:
            found = show(str(self.repo), artifact or self.artifact, registered_only=True, deprecated=True,
                         sort=VersionSort.SemVer)
        except ArtifactNotFound:  # nothing registered yet
            return []
        return sorted((v["version"] for v in found), key=_version_key)

    def _all_or_none(self, steps: Sequence[Callable[[], Any]]) -> None:
        """Run `steps` in order (a GTO call returns the event of the tag it made; others None);
        when one fails, delete the tags the earlier ones made, newest first, and raise."""
        made: list[str] = []
        try:
            for step in steps:
                event = step()
                if event is not None:
                    made.append(event.tag)
        except Exception:
            for tag in reversed(made):
                result = git(self.repo, "tag", "--delete", tag)
                if result.returncode != 0:
                    log.error("could not undo tag %s (%s): delete it by hand, `git tag --delete %s`", tag,
                              result.stderr.strip(), tag)
            raise

    def register(self, ref: str = "HEAD", message: str = "") -> str:
        """A new version of every artifact on `ref`, one above the highest of any of them (v0.0.1
        first); all of its tags or none."""
        from gto.api import register

        known = [v for name in self.artifacts for v in self.versions(name)]
        major, minor, patch = max(map(_version_key, known)) if known else (0, 0, 0)
        version = f"v{major}.{minor}.{patch + 1}"
        commit = self.commit(ref)
        self._all_or_none([partial(register, str(self.repo), name, commit, version=version, message=message or None)
                           for name in self.artifacts])
        return version

    def commit(self, ref: str = "HEAD") -> str:
        """The commit `ref` names (a RegistryError when it names none)."""
        return _git(self.repo, "rev-parse", "--verify", f"{ref}^{{commit}}").strip()

    def forget(self, version: str) -> None:
        """Delete every tag of `version` (its registration and assignments) of every artifact: the
        undo of a `register` whose promotion then failed."""
        from gto.api import deregister

        for name in self.artifacts:
            if version in self.versions(name):
                deregister(str(self.repo), name, version=version, delete=True)

    def promote(self, version: str, message: str = "") -> None:
        """Assign the stage to `version` of every artifact; all of the assignments or none."""
        from gto.api import assign

        self._all_or_none([partial(assign, str(self.repo), name, self.stage, version=version, message=message or None)
                           for name in self.artifacts])

    def rollback(self, message: str = "") -> tuple[str, str]:
        """Move the stage from the champion back to the version that held it before (the second of
        `holders()`), for every artifact, all or none: (champion, earlier version). A
        RegistryError when no earlier version holds the stage or the artifacts disagree."""
        from gto.api import assign, unassign

        held = [v for v, _ in self.holders()]
        if not held:
            raise RegistryError(f"{self.artifact}: no version is at {self.stage}; nothing to roll back")
        if len(held) < 2:
            raise RegistryError(f"{self.artifact}: {held[0]} is at {self.stage} and no earlier version is left to roll "
                                "back to")
        for name in self.artifacts[1:]:
            other = [v for v, _ in self.holders(name)]
            if other[:2] != held[:2]:
                raise RegistryError(f"{name} holds {self.stage} at {other[:2] or 'no version'}, {self.artifact} at "
                                    f"{held[:2]}: set it right by hand (`gto show`, `gto assign`)")
        champion, earlier = held[0], held[1]
        note = message or f"rollback of {self.stage}: {champion} -> {earlier}"
        repo = str(self.repo)
        self._all_or_none([*(partial(unassign, repo, name, version=champion, stage=self.stage, message=note)
                             for name in self.artifacts),
                           _next_second,  # DVC reads the newest stage tag by its time, in whole seconds
                           *(partial(assign, repo, name, self.stage, version=earlier, message=note, force=True)
                             for name in self.artifacts)])
        log.info("%s: %s moved back from %s to %s", ", ".join(self.artifacts), self.stage, champion, earlier)
        return champion, earlier

    def metrics_at(self, commit: str, path: str | None = None) -> dict[str, Any]:
        """The model's evaluate metrics (or the metrics file `path`) as committed in `commit` ({} when it has none)."""
        path = path or self.model.metrics
        try:
            return json.loads(_git(self.repo, "show", f"{commit}:{path}"))
        except RegistryError:
            return {}  # the run wrote no metrics: decide() says so
        except json.JSONDecodeError as exc:
            raise RegistryError(f"{path} at {commit[:8]}: not JSON: {exc}") from None
