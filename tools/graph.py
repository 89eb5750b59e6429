"""Write every pipeline's dvc.yaml from the table of models and the stage graph, written once.

    python -m tools.graph            # (re)write dvc.yaml, general/dvc.yaml, pairs/dvc.yaml, finetune/dvc.yaml
    python -m tools.graph --check    # exit 1, naming the stale files, when one differs (make lint, the tests)

pipeline/models.yaml is the table (pipelines, corpora, models); pipeline/stages.yaml the stages, with `${name}`
placeholders for a model's or corpus's paths. A pipeline whose models (or corpora) have keys gets DVC's `foreach`
over them, so stage names stay `train@fr-en`; the default pipeline's stages are plain (`train`). Each stage's
code deps are the `nmt/` files its `python -m` module imports (tools/imports.py), listed file by file.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tools.imports import ROOT, closure  # ROOT: where nmt/ is, whose imports are read

TABLE = Path("pipeline/models.yaml")
STAGES = Path("pipeline/stages.yaml")
HEADER = ("# Written by `make graph` (tools/graph.py) from pipeline/models.yaml (the models) and pipeline/stages.yaml\n"
          "# (the stages): edit those, not this file. Paths are relative to the repository root (wdir).\n")
PLACEHOLDER = re.compile(r"\$\{([a-z_0-9]+)\}")
OPTIONAL = re.compile(r"\[([^\]]*)\]\s?")  # `[--params ${params}]`: left out in the default pipeline
ONNX_DESC = "the same model as its ONNX package (graphs, vocabularies, model.json card)"


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # a shared `meta` is written out twice, not as &id001
        return True


class TableError(ValueError):
    """pipeline/models.yaml or pipeline/stages.yaml names something that is not there."""


@dataclass(frozen=True)
class Unit:
    """One thing a stage runs once for: a model, a corpus, or the pipeline itself (`once`)."""
    key: str | None           # its foreach key (None: a plain stage)
    values: dict[str, Any]    # placeholder name -> value


def _join(*parts: str | None) -> str:
    return "/".join(p for p in parts if p)


def _load(root: Path) -> tuple[dict, dict]:
    table = yaml.safe_load((root / TABLE).read_text(encoding="utf-8"))
    stages = yaml.safe_load((root / STAGES).read_text(encoding="utf-8"))
    for name, model in table["models"].items():
        for field, among in (("pipeline", "pipelines"), ("data", "data")):
            if model.get(field) not in table[among]:
                raise TableError(f"{TABLE}: models.{name}.{field}: {model.get(field)!r} is not one of {among}: "
                                 f"{', '.join(table[among])}")
        if model.get("parent") is not None and model["parent"] not in table["models"]:
            raise TableError(f"{TABLE}: models.{name}.parent: {model['parent']!r} is not a model of the table")
    return table, stages


def _corpus_values(table: dict, name: str) -> dict[str, Any]:
    corpus = table["data"][name]
    root = table["pipelines"][corpus["pipeline"]]["root"]
    return {"params": corpus["params"], "unit": _join("data", root, corpus["key"]),
            "unit_reports": _join("reports", root, corpus["key"], "validation")}


def _model_values(table: dict, name: str) -> dict[str, Any]:
    model = table["models"][name]
    pipeline = table["pipelines"][model["pipeline"]]
    values = _corpus_values(table, model["data"]) | {"direction": model["direction"]}
    for folder in ("data", "models", "reports"):
        values[folder] = _join(folder, pipeline["root"], model["key"])
    values["vocab"] = f"{values['unit' if pipeline['vocab'] == 'data' else 'data']}/vocab"
    if model.get("parent"):
        parent = _model_values(table, model["parent"])
        values |= {f"parent_{k}": parent[k] for k in ("data", "models", "reports")}
    return values


def _units(table: dict, pipeline: str, each: str) -> list[Unit]:
    if each == "once":
        return [Unit(None, {})]
    rows = table["data"] if each == "data" else table["models"]
    values = _corpus_values if each == "data" else _model_values
    return [Unit(row["key"], values(table, name)) for name, row in rows.items() if row["pipeline"] == pipeline]


def _fill(value: Any, lookup: Any) -> Any:
    """`value` with each ${name} replaced by `lookup(name)`; a whole `${name}` may become a bool (`cache: true`,
    DVC's default, is left out)."""
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value)
        if whole:
            return lookup(whole.group(1))
        return PLACEHOLDER.sub(lambda m: str(lookup(m.group(1))), value)
    if isinstance(value, list):
        return [_fill(v, lookup) for v in value]
    if isinstance(value, dict):
        filled = {_fill(k, lookup): _fill(v, lookup) for k, v in value.items()}
        return {k: v for k, v in filled.items() if not (k == "cache" and v is True)}
    return value


def _names(value: Any) -> set[str]:
    return set(PLACEHOLDER.findall(yaml.safe_dump(value)))


def _code(cmd: str) -> list[str]:
    module = re.match(r"python -m ([\w.]+)", cmd)
    if module is None:
        raise TableError(f"{STAGES}: stage command {cmd!r} does not run `python -m MODULE`")
    return list(_closure(module.group(1)))


@functools.cache
def _closure(module: str) -> tuple[str, ...]:
    return tuple(sorted(str(p.relative_to(ROOT)) for p in closure(module)))


def _chain(root: Path, params: str) -> list[str]:
    """The params files a stage reading `params` reads, the whole recipe first (nmt/config/recipe.py)."""
    files = [params]
    while True:
        data = _read(root / files[0])
        if "recipe" not in data:
            return files
        files.insert(0, os.path.normpath(Path(files[0]).parent / str(data["recipe"])))
        if len(files) > 2:
            raise TableError(f"{params}: its recipe {files[1]} names a recipe too; name a whole params file")


@functools.cache
def _read(path: Path) -> Any:  # a params file, for its recipe and the keys it states
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def _states(root: Path, file: str, key: str) -> bool:
    data: Any = _read(root / file)
    for part in key.split("."):
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def _params(template: dict, units: list[Unit], pipeline: str, root: Path) -> tuple[list, dict[str, dict]]:
    """The stage's `params:` and each unit's values for it. A key is tracked in the whole recipe, and also in an
    overlay that states it (with the overlay's `recipe:`); DVC cannot take a list of keys from a foreach item, so
    the overlay's keys are items of their own (tracked_1, ...), a shorter list repeating `recipe`."""
    keys, source = list(template["params"]), template.get("params_file", "${params}")
    if source != "${params}" or not units or all(len(_chain(root, u.values["params"])) == 1 for u in units):
        plain = pipeline == "default" and source in ("${params}", "params.yaml")
        return (keys if plain else [{source: keys}]), {}
    chains = {u.key: _chain(root, u.values["params"]) for u in units}
    if any(len(c) != 2 for c in chains.values()) or len({c[0] for c in chains.values()}) != 1:
        raise TableError(f"{[u.values['params'] for u in units]}: the files of one stage name one recipe, or all none")
    recipe = next(iter(chains.values()))[0]
    in_recipe = [k for k in keys if _states(root, recipe, k)]  # a key only overlays have (finetune.*) is theirs
    for chain in chains.values():
        missing = [k for k in keys if k not in in_recipe and not _states(root, chain[1], k)]
        if missing:
            raise TableError(f"{chain[1]}: {', '.join(missing)}: in neither it nor its recipe {recipe} (a stage "
                             "reads them)")
    stated = {key: ["recipe", *[k for k in keys if _states(root, c[1], k)]] for key, c in chains.items()}
    width = max(map(len, stated.values()))
    values = {key: {f"tracked_{i + 1}": (names + ["recipe"] * width)[i] for i in range(width)}
              for key, names in stated.items()}
    return [{recipe: in_recipe}, {"${params}": [f"${{tracked_{i + 1}}}" for i in range(width)]}], values


def _stage(template: dict, units: list[Unit], pipeline: str, table: dict, wdir: str | None, root: Path) -> dict:
    """One dvc.yaml stage: plain (one unit without a key) or a foreach over the units' keys."""
    shared = {"cache_attention": table["pipelines"][pipeline]["cache_attention"]}
    cmd = " ".join(template["cmd"].split())
    cmd = OPTIONAL.sub("" if pipeline == "default" else r"\1 ", cmd).strip()
    body: dict[str, Any] = {"wdir": wdir} if wdir else {}
    body["cmd"] = cmd
    body["deps"] = list(template.get("deps", [])) + _code(cmd)
    tracked: dict[str, dict] = {}
    if template.get("params"):
        body["params"], tracked = _params(template, units, pipeline, root)
    only = template.get("only", {})  # parts of the stage only some pipelines have, e.g. {plots: [default]}
    body |= {k: template[k] for k in ("outs", "metrics", "plots")
             if k in template and pipeline in only.get(k, [pipeline])}
    if len(units) == 1 and units[0].key is None:
        values = units[0].values | shared
        return _fill(body, lambda n: values[n] if n in values else _missing(n))
    used = sorted(_names(body) - set(shared))
    foreach = {u.key: {n: (u.values | tracked.get(u.key, {}))[n] if n in u.values or n in tracked.get(u.key, {})
                       else _missing(n) for n in used} for u in units}
    return {"foreach": foreach, "do": _fill(body, lambda n: shared[n] if n in shared else f"${{item.{n}}}")}


def _missing(name: str) -> Any:
    raise TableError(f"{STAGES}: ${{{name}}} is not a value of this stage's unit (pipeline/models.yaml)")


def _publish(template: dict, table: dict, pipeline: str, wdir: str | None) -> dict:
    deps = list(template.get("deps", []))
    for each in ("model", "data"):
        for unit in _units(table, pipeline, each):
            deps += _fill(template.get(f"each_{each}", []), lambda n, u=unit: u.values[n])
    cmd = " ".join(template["cmd"].split())
    root = table["pipelines"][pipeline]["root"]
    body = ({"wdir": wdir} if wdir else {}) | {"cmd": cmd, "deps": deps + _code(cmd)}
    body["outs"] = [{_join("reports", root, "published.json"): {"cache": False, "persist": True}}]
    return body


def _artifacts(table: dict, pipeline: str, up: str) -> dict:
    found: dict[str, Any] = {}
    for name, model in table["models"].items():
        if model["pipeline"] != pipeline:
            continue
        values = _model_values(table, name)
        # the default model's direction is params.yaml's data.direction: its artifacts declare none
        meta = {} if model["key"] is None else {"direction": model["direction"],
                                                "metrics": f"{values['reports']}/metrics.json"}
        if model.get("parent"):
            meta |= {"parent": model["parent"], "parent_package": f"{values['parent_models']}/onnx",
                     "parent_metrics": f"{values['reports']}/parent/metrics.json",
                     "test_data": f"{values['unit']}/validated"}
        short = name.split(":")[-1]
        for suffix, path, desc, kind in (("", "model.pt", model["desc"], "torch"),
                                         ("-onnx", "onnx", ONNX_DESC, "onnx")):
            found[short + suffix] = {"path": f"{up}{values['models']}/{path}", "type": "model", "desc": desc,
                                     "labels": ["transformer", *model.get("labels", []), model["direction"], kind],
                                     **({"meta": meta} if meta else {})}
    return found


def graphs(root: Path = ROOT) -> dict[Path, str]:
    """Every pipeline's dvc.yaml text, by its path from the repository root."""
    _read.cache_clear()  # the params files are read once per call, and afresh on the next
    table, stages = _load(root)
    written: dict[Path, str] = {}
    for pipeline, spec in table["pipelines"].items():
        depth = len(Path(spec["file"]).parent.parts)
        wdir, up = ("/".join([".."] * depth), "../" * depth) if depth else (None, "")
        out: dict[str, Any] = {}
        for name, template in stages["stages"].items():
            if pipeline in template.get("in", table["pipelines"]):
                out[name] = _stage(template, _units(table, pipeline, template["each"]), pipeline, table, wdir, root)
        if pipeline in stages.get("publish", {}):
            out["publish"] = _publish(stages["publish"][pipeline], table, pipeline, wdir)
        document = {"artifacts": _artifacts(table, pipeline, up), "stages": out}
        written[Path(spec["file"])] = HEADER + yaml.dump(document, Dumper=_Dumper, sort_keys=False, width=120)
    return written


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.graph", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a dvc.yaml is out of step")
    args = parser.parse_args(argv)
    try:
        texts = graphs(root)
    except (TableError, KeyError, OSError, yaml.YAMLError) as exc:
        print(f"tools/graph.py: {exc}", file=sys.stderr)
        return 2
    stale = [p for p, text in texts.items() if not (root / p).is_file() or (root / p).read_text() != text]
    if args.check:
        if stale:
            print(f"out of step with pipeline/: {', '.join(map(str, stale))}; run `make graph` and commit",
                  file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        target = root / path
        temporary = target.with_name(f".{target.name}.tmp")
        temporary.write_text(texts[path], encoding="utf-8")
        temporary.replace(target)  # whole or not at all
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
