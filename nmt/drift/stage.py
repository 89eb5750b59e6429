"""The profile stage: the training data's profile (`nmt.drift.profile`), made with the package the
server serves, for the drift check (docs/lifecycle.md: Drift check).

A sample of the train split and one of the dev split of the validated corpus (`profile:` in
params.yaml: sizes, seed) are read through the package as `nmt serve --model` loads it
(`nmt.translate.models.open_model`, fp32): each sentence's source pieces and <unk> pieces exactly as the
server counts them (spans masked, the package's tokenizer and vocabulary, cut to what the model
takes), its language as the detector the data stages filter with names it (`nmt.text.langid`), and,
for the dev sample, the confidence of its translation, decoded as the server decodes
(`nmt.translate.decoding.translate_sentences`: the beam's n-best list and the loop guard). The counts
land in the buckets of the server's snapshots (`nmt.translate.traffic`); the profile, counts only, is
written atomically to `reports/profile.json`.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from nmt.command import arg, stage_main
from nmt.config.profile import ProfileConfig
from nmt.decode.lines import LineTranslator
from nmt.drift.profile import Profile, build_profile, sample
from nmt.files.atomic import atomic_write_text
from nmt.files.lines import read_lines, split_file
from nmt.text.langid import LanguageIdentifier
from nmt.text.vocab import UNK_ID
from nmt.translate.decoding import translate_sentences
from nmt.translate.models import Model, ModelOptions, open_model
from nmt.translate.spans import mask
from nmt.translate.traffic import Record

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProfileParams:
    """The params.yaml sections the profile stage reads (only these: nmt.config.loader.load_sections)."""

    profile: ProfileConfig  # the samples and their decoding


@dataclass(frozen=True)
class ProfilePaths:
    package: Path = arg("the package the server serves: ONNX package (models/onnx) or CTranslate2 model folder")
    data: Path = arg("validated corpus: the train and dev splits (data/validated)")
    out: Path = arg("the profile to write (reports/profile.json)")


def source_records(translator: LineTranslator, sentences: Sequence[str]) -> list[Record]:
    """Each sentence's source pieces (</s> included) and <unk> pieces as the server counts them
    (`translate_sentences`: spans masked, tokenized, cut to the model), without decoding."""
    masked = [mask(s).text for s in sentences]
    records = []
    for tokens, _ in translator.tokenize(masked):
        ids = translator.source_ids(tokens) if tokens else []
        records.append(Record(len(ids), ids.count(UNK_ID)))
    return records


def decoded_records(model: Model, sentences: Sequence[str]) -> list[Record]:
    """The same, with the confidence of each sentence's translation as the server answers it (its decode step)."""
    outputs, _ = translate_sentences(model.translator, list(sentences))
    return [Record(o.pieces, o.unknown, o.confidence) for o in outputs]


def with_languages(records: Sequence[Record], sentences: Sequence[str], detect: Callable[[str], str]) -> list[Record]:
    """`records` with the language `detect` names for each sentence."""
    return [record._replace(detected=detect(s)) for record, s in zip(records, sentences, strict=True)]


def profile_stage(cfg: ProfileConfig, paths: ProfilePaths) -> Profile:
    """Sample, count, decode the dev sample, and write the profile atomically."""
    model = open_model(paths.package, ModelOptions(device="cpu", threads=cfg.threads, batch_size=cfg.batch_size))
    source, _ = model.languages
    detector = LanguageIdentifier.for_languages(model.languages)

    def detect(text: str) -> str:
        return detector.detect(text).language

    samples = {}
    for role, split, n in (("train", cfg.train_split, cfg.train_sentences), ("dev", cfg.dev_split, cfg.dev_sentences)):
        lines = read_lines(split_file(paths.data, split, source))
        samples[role] = (split, len(lines), sample(lines, n, cfg.seed))
    train, dev = samples["train"][2], samples["dev"][2]
    log.info("%s: counting %d %s sentences; decoding %d %s sentences as the server does", model.direction,
             len(train), cfg.train_split, len(dev), cfg.dev_split)
    about = {"package": {"path": str(paths.package), "kind": model.kind, "sha256": model.digest},
             "seed": cfg.seed,
             "samples": {role: {"split": split, "lines": total, "sampled": len(picked)}
                         for role, (split, total, picked) in samples.items()}}
    profile = build_profile(model.direction, source,
                            with_languages(source_records(model.translator, train), train, detect),
                            with_languages(decoded_records(model, dev), dev, detect), about)
    atomic_write_text(paths.out, json.dumps(profile.to_json(), indent=1) + "\n")
    log.info("profile of %s written to %s", model.direction, paths.out)
    return profile


def run(params: ProfileParams, paths: ProfilePaths) -> Profile:
    return profile_stage(params.profile, paths)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("profile", __doc__.split("\n\n")[0], ProfilePaths, ProfileParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
