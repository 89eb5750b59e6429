"""`make gpu-check`, the half that runs here: the bundle a lent GPU needs, and its figures back.

    python -m bench.gpu_check bundle [--data data] [--out .gpu]     # here, after `dvc repro binarize`
    (device tool) run  command: python3 -m bench.gpu_device --part a --bundle .gpu --out "$OUT"
                       carry: [".gpu"], timeout_s: 420              # tests, MFU, first epochs, profile
    (device tool) run  command: python3 -m bench.gpu_device --part b --bundle .gpu --out "$OUT"
                       carry: [".gpu"], timeout_s: 420              # the presets, trained and scored
    python -m bench.gpu_check collect --from <files_at>             # here: into bench/results/

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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIB = 2**20
log = logging.getLogger("gpu_check")


class BundleError(Exception):
    """The bundle cannot be built: what is missing, and the command that makes it."""


def bundle(data: Path, params: Path, out: Path, test_set: str, limit_mib: float) -> dict:
    """Copy what the device part reads into `out` (replaced whole); return the manifest."""
    langs = ("de", "en")
    wanted = {"bin": data / "bin", "vocab": data / "vocab"}
    files = {f"validated/{test_set}.{lang}": data / "validated" / f"{test_set}.{lang}" for lang in langs}
    files.update({f"tokens/{test_set}.{lang}.tsv": data / "tokens" / f"{test_set}.{lang}.tsv" for lang in langs})
    files["params.yaml"] = params
    missing = [str(p) for p in [*wanted.values(), *files.values()] if not p.exists()]
    if missing:
        raise BundleError(f"missing {', '.join(missing)}: run the data stages first (`dvc repro binarize`; "
                          "offline, with NMT_DATA_MIRROR pointing at the mirrored corpora)")
    staged = out.with_name(out.name + ".tmp")
    shutil.rmtree(staged, ignore_errors=True)
    root = staged / "multi30k"
    for name, src in wanted.items():
        shutil.copytree(src, root / name)
    for name, src in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, root / name)
    sizes = {str(p.relative_to(staged)): p.stat().st_size for p in sorted(staged.rglob("*")) if p.is_file()}
    total = sum(sizes.values())
    if total > limit_mib * MIB:
        shutil.rmtree(staged)
        raise BundleError(f"the bundle would be {total / MIB:.1f} MiB, over {limit_mib:g} MiB (the device tool "
                          "carries 64 MiB with the source tree); lower --limit-mib only if the source is larger")
    manifest = {"test_set": test_set, "files": len(sizes), "bytes": total, "sizes": sizes}
    (staged / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    staged.replace(out)
    return manifest


def collect(src: Path, results: Path) -> list[Path]:
    """Copy the device's figures (gpu_*.json) and preset translations into `results`."""
    picked = sorted(src.glob("gpu_*.json"))
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
    c = sub.add_parser("collect", help="copy the device's figures into bench/results")
    c.add_argument("--from", dest="src", type=Path, required=True, help="the device call's files_at folder")
    c.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if args.command == "bundle":
            m = bundle(args.data, args.params, args.out, args.test_set, args.limit_mib)
            log.info("bundle %s: %d files, %.1f MiB; carry it as \".gpu\" (bench/gpu_check.py says how)",
                     args.out, m["files"], m["bytes"] / MIB)
        else:
            for path in collect(args.src, args.results):
                log.info("copied %s", path)
    except BundleError as exc:
        print(f"gpu_check: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
