"""Scratch projects of the other language pairs' pipeline (pairs/dvc.yaml) with the smoke model and tiny
corpora cut from Multi30k's French mirror, for the end-to-end DVC tests of pairs and of fine-tuning."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import yaml

from support.corpus import ROOT, sha256
from support.graphs import write_graph
from support.scratch import copy_code

FR_CS = ROOT.parent / "shared" / "data" / "multi30k-fr-cs"
SMOKE = ROOT / "tests" / "support" / "smoke_params.yaml"
# pairs/fr-en.yaml's tiny corpus: Multi30k val (1,014 pairs) as train, test_2016's first 150 pairs as val and
# the next 150 as test_2016_flickr: split -> (mirror file, first line, end)
TINY = {"train": ("val", 0, None), "val": ("test_2016_flickr", 0, 150),
        "test_2016_flickr": ("test_2016_flickr", 150, 300)}


def _lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()


def tiny_corpus(src: Path, cut: dict[str, tuple[str, int, int | None]] = TINY) -> dict:
    """A `data.corpora` entry of French-English files cut from the mirror (`cut`: split -> (mirror split,
    first line, end)), written to `src` and fetched from their file:// URLs."""
    src.mkdir(parents=True)
    files, splits = [], {}
    for split, (name, a, b) in cut.items():
        splits[split] = {}
        for lang in ("fr", "en"):
            data = gzip.compress("".join(s + "\n" for s in _lines(FR_CS / f"{name}.{lang}.gz")[a:b]).encode(), mtime=0)
            (src / f"{split}.{lang}.gz").write_bytes(data)
            files.append({"name": f"{split}.{lang}.gz", "url": (src / f"{split}.{lang}.gz").as_uri(),
                          "sha256": sha256(data)})
            splits[split][lang] = f"{split}.{lang}.gz"
    return {"languages": ["fr", "en"], "files": files, "splits": splits}


def smoke(params: dict) -> dict:
    """`params` with the smoke model and the tiny corpus's gates."""
    for section, values in yaml.safe_load(SMOKE.read_text()).items():
        params[section].update(values)
    params["validate"].update(min_pairs=50, min_train_pairs=500)
    params["vocab"].update(bpe_merges=300, min_size=100)
    params["export"].update(compare_sentences=64)
    return params


def build_pairs(root: Path, directions: tuple[str, ...]) -> Path:
    """A git repository at `root` with nmt/ and pairs/dvc.yaml for French-English only (`directions`): the
    table's rows of the pair, written by tools/graph.py (its publish stage left out); params.yaml, the recipe, in
    the smoke configuration, and pairs/fr-en.yaml laid over it: the pair's corpus, nothing else."""
    for name in (".dvcignore", ".gitignore"):
        shutil.copy(ROOT / name, root / name)
    copy_code(root)
    # the recipe: params.yaml in the smoke configuration; the pair: a short file laid over it, as a user writes one
    (root / "params.yaml").write_text(yaml.safe_dump(smoke(yaml.safe_load((ROOT / "params.yaml").read_text())),
                                                     sort_keys=False, allow_unicode=True))
    pair = {"recipe": "../params.yaml", "data": {"corpus": "multi30k-fr-cs", "direction": "fr-en",
                                                 "corpora": {"multi30k-fr-cs": tiny_corpus(root / "srv")}}}
    (root / "pairs").mkdir(exist_ok=True)
    (root / "pairs" / "fr-en.yaml").write_text(yaml.safe_dump(pair, sort_keys=False, default_flow_style=None))
    write_graph(root, "pairs", {"pairs/fr-en": {"pipeline": "pairs", "key": "fr-en", "params": "pairs/fr-en.yaml"}},
                {f"pairs:nmt-{d}": {"pipeline": "pairs", "data": "pairs/fr-en", "key": d, "direction": d,
                                    "labels": ["multi30k"], "desc": f"the {d} smoke model"} for d in directions})
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root
