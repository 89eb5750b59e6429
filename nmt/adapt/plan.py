"""What `nmt adapt` will run: the parent, its recipe, the user's files cut into train / dev / test, and
the params file laid over the recipe (nmt/config/recipe.py) that every stage of the fine-tune reads.

The params file names the recipe the parent was trained with (tokenization, cleaning, batching and
decoding stay the parent's) and states only the fine-tune's own: a corpus of the user's files (fetched
from their file:// URLs, SHA-256 pinned, so an edited file is a new run), a mix of it with the recipe's
test sets that stand for what the parent could do (`general`), the fine-tune's schedule and budget, and
small-data gates (a user's file has hundreds of pairs, not a corpus's hundreds of thousands).
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from nmt.config.check import check
from nmt.config.loader import read_yaml
from nmt.config.params import Params
from nmt.errors import ConfigError, DataError
from nmt.files.atomic import atomic_open, atomic_write_text
from nmt.files.digest import sha256_file

log = logging.getLogger(__name__)

TABLE = Path("pipeline") / "models.yaml"  # the project's models: where a model file's recipe is found
HELD_OUT = 0.05  # share of the user's lines cut to dev (and to test) when none is given, by each line's digest
MIN_HELD_OUT = 10  # pairs a dev or test cut needs at least (validate.min_pairs of the adapt's params)
MIN_TRAIN = 50  # training pairs at least (validate.min_train_pairs of the adapt's params)
OWN, MIX = "own", "adapt"  # the user's corpus and the mix's names in the params file
FORMATS = {".tsv": "tsv", ".txt": "tsv", ".tmx": "tmx"}  # file suffix -> how it is read (nmt.data.formats)


@dataclass(frozen=True)
class AdaptRequest:
    """One `nmt adapt` run, as given on its command line."""

    model: Path  # the parent: a model file (model.pt), the folder holding one, or an ONNX package beside one
    train: Path  # the user's pairs: a TSV (a column per language) or a TMX
    out: Path  # the run's folder: params.yaml, input/, data/, models/, reports/
    dev: Path | None = None  # dev pairs (validation while fine-tuning); None: a share of `train` cut off
    test: Path | None = None  # the domain's test pairs for the comparison page; None: a share of `train` cut off
    general: tuple[str, ...] | None = None  # the recipe's test sets the parent must keep (None: all it scores)
    recipe: Path | None = None  # the params file the parent was trained with (None: from pipeline/models.yaml)
    columns: tuple[str, str] | None = None  # the languages of a TSV's first two columns (None: source, target)
    max_steps: int = 600  # updates of the fine-tune
    max_minutes: float | None = 15.0  # its clock (stops there, checkpointed, even before max_steps)
    lr: float = 1e-4  # peak learning rate (nmt/config/finetune.py)
    max_general_drop: float = 1.0  # sacreBLEU a general set may lose, or the compare gate fails
    max_dropped: float = 0.1  # share of each of the user's files that may be dropped (malformed, or by the rules)
    max_repeated: float = 0.2  # share of the user's training pairs that may repeat an earlier one (dropped)
    replay: Path | None = None  # the parent's binarized training pairs (its data/bin) to replay against forgetting
    export: bool = True  # write the ONNX package of the fine-tuned model (after the compare gate passed)


@dataclass(frozen=True)
class Plan:
    parent: Path  # the model file fine-tuned
    direction: str  # the parent's, src-tgt
    recipe: Path  # its params file
    replay: Path | None  # the parent's data/bin, when found
    params: Path  # the params file written for the run
    domain_sets: tuple[str, ...]  # the user's test set(s)
    general_sets: tuple[str, ...]  # the recipe's test sets the compare gate keeps


def parent_file(model: Path) -> Path:
    """The model file `model` names: itself, the model.pt in it, or the one its ONNX package came from."""
    if model.is_file():
        return model
    if (model / "model.pt").is_file():
        return model / "model.pt"
    if (model / "model.json").is_file() and (model.parent / "model.pt").is_file():
        log.info("%s is an ONNX package (no trainable weights): fine-tuning %s, the model file beside it", model,
                 model.parent / "model.pt")
        return model.parent / "model.pt"
    raise DataError(f"--model {model}: no model file; pass a model file (models/.../model.pt) or its folder (an ONNX "
                    "package holds no trainable weights: pass the model.pt it was exported from)")


def table_entry(parent: Path) -> tuple[Path, Path] | None:
    """(the recipe, the data folder) of the project model whose file is `parent` (pipeline/models.yaml)."""
    if not TABLE.is_file():
        return None
    table = read_yaml(TABLE)
    for row in table.get("models", {}).values():
        root = table["pipelines"][row["pipeline"]]["root"]
        parts = [p for p in (root, row.get("key")) if p]
        if (Path("models", *parts) / "model.pt").resolve() == parent.resolve():
            return Path(table["data"][row["data"]]["params"]), Path("data", *parts)
    return None


def cut(lines: list[bytes], share: float, salt: bytes) -> tuple[list[bytes], list[bytes]]:
    """(kept, cut): each line cut when its digest (BLAKE2b, `salt`) falls under `share`, so the cut is fixed by
    the text, not its position; at least MIN_HELD_OUT lines are cut when there are enough."""
    scored = [(int.from_bytes(hashlib.blake2b(line, digest_size=8, key=salt).digest(), "little") / 2**64, i)
              for i, line in enumerate(lines)]
    n = min(max(round(share * len(lines)), MIN_HELD_OUT), len(lines) // 4)
    chosen = {i for _, i in sorted(scored)[:n]}
    return [x for i, x in enumerate(lines) if i not in chosen], [x for i, x in enumerate(lines) if i in chosen]


def own_files(req: AdaptRequest, folder: Path) -> dict[str, Path]:
    """split -> the user's file for it: train, dev, test, the missing ones cut from train into `folder`."""
    files = {"train": req.train, "dev": req.dev, "test": req.test}
    for path in (p for p in files.values() if p is not None):
        if not path.is_file():
            raise DataError(f"{path}: no such file")
        if path.suffix.lower() not in FORMATS:
            raise DataError(f"{path}: expected a .tsv (a column per language) or a .tmx file")
    missing = [s for s in ("dev", "test") if files[s] is None]
    if not missing:
        return {s: p for s, p in files.items() if p is not None}
    if FORMATS[req.train.suffix.lower()] != "tsv":
        raise DataError(f"{req.train}: a TMX cannot be cut into {' and '.join(missing)}: pass --dev and --test")
    lines = [x for x in req.train.read_bytes().split(b"\n") if x.strip()]
    need = MIN_TRAIN + MIN_HELD_OUT * len(missing)
    if len(lines) < need * 4 // 3:  # a cut takes at most a quarter of the lines
        raise DataError(f"--train {req.train}: {len(lines)} lines; nmt adapt needs at least {need * 4 // 3} without "
                        f"--{' and --'.join(missing)} ({MIN_TRAIN} to train on, {MIN_HELD_OUT} for each cut), or "
                        "give them")
    out, counts = {}, {}
    for split in missing:
        lines, held = cut(lines, HELD_OUT, split.encode())
        out[split], counts[split] = _write(folder / f"{split}.tsv", held), len(held)
    out["train"], counts["train"] = _write(folder / "train.tsv", lines), len(lines)
    log.info("cut %s into %s: %s (the line numbers of the validate report are those of these files)", req.train,
             folder, ", ".join(f"{s} {n} lines" for s, n in counts.items()))
    return {**{s: p for s, p in files.items() if p is not None}, **out}


def _write(path: Path, lines: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb", encoding=None) as fh:  # whole, or the previous file
        fh.write(b"".join(x + b"\n" for x in lines))
    return path


def corpus(files: dict[str, Path], langs: tuple[str, str], columns: tuple[str, str]) -> dict[str, Any]:
    """The `data.corpora` entry of the user's files, fetched from their file:// URLs."""
    entries, splits = [], {}
    for split, path in files.items():
        fmt = FORMATS[path.suffix.lower()]
        name = f"{split}.{'tmx' if fmt == 'tmx' else 'tsv'}"
        entries.append({"name": name, "url": path.resolve().as_uri(), "sha256": sha256_file(path)})
        splits[split] = {"format": fmt, "file": name, **({columns[0]: 0, columns[1]: 1} if fmt == "tsv" else {})}
    return {"languages": list(langs), "files": entries, "splits": splits, "requires_train": False,
            "licence": "the user's own data"}


def general_sources(recipe: Params, direction: str, wanted: tuple[str, ...] | None) -> list[dict[str, Any]]:
    """The mix sources of the recipe's test sets of `direction` named in `wanted` (None: all it scores)."""
    ev, data = recipe.evaluate, recipe.data
    scored = [s for s in ev.test_sets if ev.test_set_directions.get(s, direction) == direction]
    if data.mix is not None:
        known = {s.label: {"corpus": s.corpus, "split": s.split, "role": "test", "name": s.label}
                 for s in data.mix.sources if s.role == "test"}
    else:
        known = {s: {"corpus": data.corpus, "split": s, "role": "test", "name": s} for s in data.active.test_splits}
    names = scored if wanted is None else list(wanted)
    unknown = [s for s in names if s not in known]
    if unknown:
        raise ConfigError(f"--general: {unknown} are not test sets of the recipe (it has: {sorted(known)})")
    return [known[s] for s in names]


def params(req: AdaptRequest, plan_recipe: Path, direction: str, files: dict[str, Path], replay: bool
           ) -> tuple[dict[str, Any], list[str]]:
    """The params file of the run (laid over `plan_recipe`) and the general sets it keeps."""
    recipe = check(plan_recipe)[0]
    src, tgt = direction.split("-")
    general = general_sources(recipe, direction, req.general)
    own = {"corpus": OWN, "max_filtered_rate": req.max_dropped}
    sources = [{**own, "split": "train", "role": "train", "max_duplicate_rate": req.max_repeated},
               {**own, "split": "dev", "role": "dev"}, {**own, "split": "test", "role": "test", "name": "own_test"},
               *general]
    used = {s["corpus"] for s in general}
    corpora = {OWN: corpus(files, (src, tgt), req.columns or (src, tgt))}
    clean = {} if recipe.validate.clean.langid else {"langid": True, "langid_min_chars": 20}
    names = [s["name"] for s in general]
    steps = req.max_steps
    out = {
        "recipe": os.path.relpath(plan_recipe.resolve(), req.out.resolve()),
        "data": {"corpus": MIX, "direction": direction, "corpora": corpora,
                 "mixes": {MIX: {"languages": [src, tgt], "sources": sources,
                                 "licence_note": "Fine-tuned on the user's own data"}}},
        "validate": {"min_pairs": MIN_HELD_OUT, "min_train_pairs": 50, "clean": clean},
        "train": {"epochs": 1000, "cooldown": 0.0, "early_stop_metric": "val_loss", "patience": 1000},
        "finetune": {"lr": req.lr, "warmup": min(100, steps // 10), "cooldown": 0.3, "max_steps": steps,
                     "max_minutes": req.max_minutes, "replay": 0.3 if replay else 0.0, "general_sets": names,
                     "max_general_drop": req.max_general_drop},
        "evaluate": {"test_sets": ["own_test", *names], "test_set_directions": {}, "min_bleu": 0.0,
                     "min_bleu_by_set": {}},
        "export": {"ctranslate2": False, "parity_split": "own_test", "compare_split": "own_test"},
    }
    if not used <= set(recipe.data.corpora):
        raise ConfigError(f"--recipe {plan_recipe}: its corpora lack {sorted(used - set(recipe.data.corpora))}")
    return out, names


def make_plan(req: AdaptRequest) -> Plan:
    """Find the parent and its recipe, cut the user's files, write and check the run's params file."""
    from nmt.model import checkpoint  # torch: only when a run is planned

    parent = parent_file(req.model)
    manifest = checkpoint.vocabs_of(checkpoint.load(parent)).manifest
    direction = f"{manifest['src_lang']}-{manifest['tgt_lang']}"
    if req.columns is not None and set(req.columns) != set(direction.split("-")):
        raise DataError(f"--columns {','.join(req.columns)}: {parent} translates {direction}; name its two languages "
                        f"in the order of your file's columns, e.g. {direction.replace('-', ',')}")
    if req.replay is not None and not (req.replay / "manifest.json").is_file():
        raise DataError(f"--replay {req.replay}: no manifest.json; pass the model's binarized training data (the "
                        "binarize stage's output, data/.../bin)")
    found = table_entry(parent)
    recipe = req.recipe or (found[0] if found else None)
    if recipe is None or not recipe.is_file():
        raise ConfigError(f"--recipe: {recipe or 'not given'}; name the params file {parent} was trained with "
                          "(e.g. general/params.yaml): its tokenization and decoding are the fine-tune's")
    replay = req.replay or (found[1] / "bin" if found and (found[1] / "bin" / "manifest.json").is_file() else None)
    if replay is None:
        log.warning("no training data of %s to replay (--replay its data/bin): the fine-tune sees only your pairs "
                    "and may forget more of what the parent could do", parent)
    files = own_files(req, req.out / "input")
    body, names = params(req, recipe, direction, files, replay is not None)
    path = req.out / "params.yaml"
    atomic_write_text(path, "# Written by `nmt adapt` (nmt/adapt/plan.py): the fine-tune of "
                      f"{parent} on {req.train}\n" + yaml.safe_dump(body, sort_keys=False, allow_unicode=True))
    check(path)  # the whole file, as the stages will read it, before the first runs
    return Plan(parent, direction, recipe, replay, path, ("own_test",), tuple(names))
