"""`make gpu-check`, the half that runs here: the bundle a lent GPU needs, and its figures back.

    python -m tools.gpu.check bundle [--data data] [--out .gpu]     # here, after `dvc repro binarize`
    (device tool) run  command: python3 -m tools.gpu.device --part a --bundle .gpu --out "$OUT"
                       carry: [".gpu"], timeout_s: 420              # tests, MFU, first epochs, profile
    (device tool) run  command: python3 -m tools.gpu.device --part b --bundle .gpu --out "$OUT"
                       carry: [".gpu"], timeout_s: 420              # the presets, trained and scored
    python -m tools.gpu.check collect --from <files_at>             # here: into bench/results/

The bundle (`.gpu/`, git-ignored; at most `--limit-mib`, the device tool carries 64 MiB with the
source): the binarised Multi30k (data/bin), its vocabularies (data/vocab), the test set's raw
lines (data/validated) and spaCy tokens (data/tokens: the GPU image has no spaCy), params.yaml,
and a manifest. The GPU image has torch, numpy, PyYAML, tqdm, matplotlib, sacrebleu and pytest,
so no wheels travel; DVCLive is optional in the train stage (nmt/train/live.py).

`collect` copies the gpu_*.json files and the preset translations the device wrote into
bench/results/ (`--results`), where docs/training.md's figures are read from.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MIB = 2**20
log = logging.getLogger("gpu_check")


class BundleError(Exception):
    """The bundle cannot be built: what is missing, and the command that makes it."""


def _general_files(data: Path, reports: Path, direction: str, blind: Path, staged: Path) -> tuple[dict, dict, dict]:
    """What `general-<direction>/` holds: the direction's binarised mix, the shared vocabularies, each
    test set it was scored on (raw lines and spaCy tokens) and its blind sources, tokenized here (the GPU
    image has no spaCy); returns (folders, files, the corpus's manifest entry)."""
    from nmt.text.tokenizer import format_line, make_tokenizer

    src, tgt = direction.split("-")
    metrics = reports / direction / "metrics.json"
    if not metrics.is_file():
        raise BundleError(f"{metrics} not found: evaluate the general {direction} model once here "
                          f"(`dvc repro general/dvc.yaml:evaluate@{direction}`), its test sets are the bundle's")
    test_sets = list(json.loads(metrics.read_text(encoding="utf-8")))
    folders = {"bin": data / direction / "bin", "vocab": data / "vocab"}
    files = {f"{kind}/{name}.{lang}{ext}": data / kind / f"{name}.{lang}{ext}" for name in test_sets
             for lang in (src, tgt) for kind, ext in (("validated", ""), ("tokens", ".tsv"))}
    blinds = sorted(p for p in blind.glob(f"{direction}.*.{src}")) if blind.is_dir() else []
    tokenize = make_tokenizer(src, lowercase=False)
    for path in blinds:  # blind/<name>.<src> as a split of its own, tokenized as the tokenize stage does
        name = f"blind-{path.name.removesuffix('.' + src)}"
        files[f"validated/{name}.{src}"] = path
        tokens = staged / "tokens-here" / f"{name}.{src}.tsv"
        tokens.parent.mkdir(parents=True, exist_ok=True)
        lines = path.read_text(encoding="utf-8").splitlines()
        tokens.write_text("".join(format_line(*t) + "\n" for t in tokenize(lines)), encoding="utf-8")
        files[f"tokens/{name}.{src}.tsv"] = tokens
    entry = {"direction": direction, "test_sets": test_sets,
             "blind": [f"blind-{p.name.removesuffix('.' + src)}" for p in blinds]}
    return folders, files, entry


def bundle(data: Path, params: Path, out: Path, test_set: str, limit_mib: float, general: Sequence[str] = (),
           general_data: Path = ROOT / "data" / "general", general_params: Path = ROOT / "general" / "params.yaml",
           blind: Path = ROOT.parent / "shared" / "data" / "blind",
           general_reports: Path = ROOT / "reports" / "general") -> dict:
    """Copy what the device part reads into `out` (replaced whole); return the manifest. `general`: the
    general configuration's directions to carry too (`general-<direction>/`, for part c)."""
    langs = ("de", "en")
    staged = out.with_name(out.name + ".tmp")
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    m30k = {f"{kind}/{test_set}.{lang}{ext}": data / kind / f"{test_set}.{lang}{ext}" for lang in langs
            for kind, ext in (("validated", ""), ("tokens", ".tsv"))}
    layout = {"multi30k": ({"bin": data / "bin", "vocab": data / "vocab"}, {**m30k, "params.yaml": params})}
    corpora: dict[str, dict] = {"multi30k": {"test_sets": [test_set]}}
    try:
        for direction in general:
            folders, files, corpora[f"general-{direction}"] = _general_files(general_data, general_reports, direction,
                                                                             blind, staged)
            layout[f"general-{direction}"] = (folders, {**files, "params.yaml": general_params})
        missing = [str(p) for folders, files in layout.values() for p in [*folders.values(), *files.values()]
                   if not p.exists()]
        if missing:
            raise BundleError(f"missing {', '.join(missing[:6])}: run the data stages first (`dvc repro binarize`; "
                              "for a general direction `dvc repro general/dvc.yaml:binarize@<direction>`; offline, "
                              "with NMT_DATA_MIRROR pointing at the mirrored corpora)")
    except BundleError:
        shutil.rmtree(staged)
        raise
    for corpus, (folders, files) in layout.items():
        root = staged / corpus
        for name, src in folders.items():
            shutil.copytree(src, root / name)
        for name, src in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / name)
    shutil.rmtree(staged / "tokens-here", ignore_errors=True)
    sizes = {str(p.relative_to(staged)): p.stat().st_size for p in sorted(staged.rglob("*")) if p.is_file()}
    total = sum(sizes.values())
    if total > limit_mib * MIB:
        shutil.rmtree(staged)
        raise BundleError(f"the bundle would be {total / MIB:.1f} MiB, over {limit_mib:g} MiB (the device tool "
                          "carries 64 MiB with the source tree); lower --limit-mib only if the source is larger")
    manifest = {"test_set": test_set, "corpora": corpora, "files": len(sizes), "bytes": total, "sizes": sizes}
    (staged / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    staged.replace(out)
    return manifest


def collect(src: Path, results: Path, blind_out: Path = ROOT / "reports" / "blind" / "gpu") -> list[Path]:
    """Copy the device's figures (gpu_*.json) and preset translations into `results`; part c's blind
    translations into `blind_out` (<set>.<target language>, one line out per line in), its other
    translations stay where the device call left them."""
    picked = sorted(p for p in src.glob("gpu_*.json") if p.name != "gpu_general_translations.json")
    if not picked:
        raise BundleError(f"no gpu_*.json in {src}: is it the device call's files_at folder?")
    manifest = {p.name for p in picked}
    presets = json.loads((src / "gpu_presets.json").read_text()) if "gpu_presets.json" in manifest else {}
    translations = [src / e["translations"] for e in presets.get("presets", {}).values() if "translations" in e]
    results.mkdir(parents=True, exist_ok=True)
    copied = []
    for path in [*picked, *translations]:
        target = results / (path.name if path.suffix == ".json" else f"gpu_translations.{path.name}")
        shutil.copyfile(path, target)
        copied.append(target)
    if (src / "gpu_general_translations.json").is_file() and "gpu_general.json" in manifest:
        general = json.loads((src / "gpu_general.json").read_text(encoding="utf-8"))
        lines = json.loads((src / "gpu_general_translations.json").read_text(encoding="utf-8"))["translations"]
        blind_out.mkdir(parents=True, exist_ok=True)
        for entry in general["presets"].values():
            for name, figures in entry.get("blind", {}).items():
                target = blind_out / f"{name.removeprefix('blind-')}.{figures['lang']}"
                target.write_text("".join(line + "\n" for line in lines[name]), encoding="utf-8")
                copied.append(target)
    return copied


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bundle", help="build the carried bundle from the data stages' outputs")
    b.add_argument("--data", type=Path, default=ROOT / "data", help="the pipeline's data folder (default data/)")
    b.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    b.add_argument("--out", type=Path, default=ROOT / ".gpu", help="bundle folder (default .gpu, git-ignored)")
    b.add_argument("--test-set", default="test_2016_flickr", help="the set the presets are scored on")
    b.add_argument("--limit-mib", type=float, default=48.0, help="largest bundle (default 48 MiB)")
    b.add_argument("--general", nargs="*", default=[], choices=("de-en", "en-de"), metavar="DIRECTION",
                   help="also carry the general configuration's DIRECTION (binarised mix, test sets, blind "
                        "sources tokenized here) for part c; after `dvc repro general/dvc.yaml:evaluate@DIRECTION`")
    b.add_argument("--general-data", type=Path, default=ROOT / "data" / "general")
    b.add_argument("--general-reports", type=Path, default=ROOT / "reports" / "general",
                   help="where each general direction's metrics.json names its test sets")
    b.add_argument("--blind", type=Path, default=ROOT.parent / "shared" / "data" / "blind",
                   help="the blind sources (no references) part c translates")
    c = sub.add_parser("collect", help="copy the device's figures into bench/results")
    c.add_argument("--from", dest="src", type=Path, required=True, help="the device call's files_at folder")
    c.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    c.add_argument("--blind-out", type=Path, default=ROOT / "reports" / "blind" / "gpu",
                   help="where part c's blind translations go (default reports/blind/gpu)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if args.command == "bundle":
            m = bundle(args.data, args.params, args.out, args.test_set, args.limit_mib, args.general,
                       args.general_data, blind=args.blind, general_reports=args.general_reports)
            log.info("bundle %s: %d files, %.1f MiB; carry it as \".gpu\" (tools/gpu/check.py says how)",
                     args.out, m["files"], m["bytes"] / MIB)
        else:
            for path in collect(args.src, args.results, args.blind_out):
                log.info("copied %s", path)
    except BundleError as exc:
        print(f"gpu_check: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
