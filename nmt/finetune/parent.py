"""Fine-tune stage 1, parent: the parent model's vocabularies (and BPE merges) written as a vocab stage's
output (data/finetune/<name>/vocab), so the new corpus is binarized with the symbols the parent knows.

The parent is a model file or a training checkpoint (`--parent`). Before anything is written, the
fine-tune's params must fit it: `data.direction` is the parent's direction and `tokenize.lowercase` is
the parent's (a model trained on lowercased text learns nothing from cased text, and the reverse).
The gate records the parent's SHA-256, direction, vocabulary sizes, and the share of the new
corpus's validation tokens the parent's vocabulary covers without `<unk>`.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nmt.command import arg, stage_main
from nmt.config.data import DataConfig, TokenizeConfig
from nmt.data.vocab import oov_rate, save_vocabularies
from nmt.errors import ConfigError
from nmt.files.digest import sha256_file
from nmt.files.lines import split_file
from nmt.gates.gate import Gate
from nmt.model import checkpoint
from nmt.text.tokenizer import SUFFIX, read_tokenized, restore_text
from nmt.text.vocabularies import MANIFEST, Vocabularies

log = logging.getLogger(__name__)

REPORT_NAME = "finetune-parent"
MAX_UNK = 0.05  # gate: the parent's vocabulary leaves at most this share of the new val tokens <unk>


@dataclass(frozen=True)
class ParentParams:
    data: DataConfig  # the new corpus and its direction (must be the parent's)
    tokenize: TokenizeConfig  # must lowercase as the parent's training data was


@dataclass(frozen=True)
class ParentPaths:
    parent: Path = arg("the model file (models/.../model.pt) or training checkpoint to fine-tune")
    tokens: Path = arg("the new corpus's tokenize output (its val split is checked against the vocabulary)")
    out: Path = arg("vocabulary folder to write (data/finetune/<name>/vocab), read by binarize")
    reports: Path = arg("directory for the gate report")
    direction: str | None = arg("the direction to fine-tune, src-tgt: the parent's (default: data.direction)",
                                default=None)


def as_written(vocabs: Vocabularies) -> Vocabularies:
    """`vocabs` with a manifest naming the files `save_vocabularies` writes (src.vocab, tgt.vocab): a
    reversed direction's manifest names each side by the file of the vocab stage it came from."""
    m = vocabs.manifest
    manifest = {**m, "src": {**m["src"], "file": "src.vocab"}, "tgt": {**m["tgt"], "file": "tgt.vocab"}}
    if m.get("bpe"):
        manifest["bpe"] = {**m["bpe"], "file": "bpe.merges"}
    return Vocabularies(vocabs.src, vocabs.tgt, vocabs.bpe, manifest, vocabs.sp)


def check_params(state: dict, data: DataConfig, tokenize: TokenizeConfig, direction: str, path: Path) -> Vocabularies:
    """The parent's vocabularies, when the fine-tune's corpus, direction and casing fit it."""
    vocabs = checkpoint.vocabs_of(state)
    if set(data.direction.split("-")) != {vocabs.src_lang, vocabs.tgt_lang}:
        raise ConfigError(f"data.direction is {data.direction}: a corpus in other languages than {path}'s "
                          f"({vocabs.src_lang} and {vocabs.tgt_lang}); fine-tune it on a {vocabs.direction} corpus")
    if direction != vocabs.direction:
        raise ConfigError(f"the fine-tune's direction is {direction}, but {path} translates {vocabs.direction}; a "
                          f"fine-tune continues its parent's direction: pass --direction {vocabs.direction}")
    lowercase = state.get("text", {}).get("lowercase")
    if lowercase is not None and lowercase != tokenize.lowercase:
        raise ConfigError(f"tokenize.lowercase is {tokenize.lowercase}, but {path} was trained with lowercase: "
                          f"{lowercase}; set tokenize.lowercase: {str(lowercase).lower()}")
    return vocabs


def parent_stage(data: DataConfig, tokenize: TokenizeConfig, paths: ParentPaths) -> Gate:
    state = checkpoint.load(paths.parent)
    direction = data.direction if paths.direction is None else str(paths.direction)
    vocabs = as_written(check_params(state, data, tokenize, direction, paths.parent))
    gate = Gate(REPORT_NAME)
    gate.stats.update(parent=str(paths.parent), parent_sha256=sha256_file(paths.parent), direction=vocabs.direction,
                      src_size=len(vocabs.src), tgt_size=len(vocabs.tgt), bpe=vocabs.bpe is not None)
    for side, lang, vocab in (("src", vocabs.src_lang, vocabs.src), ("tgt", vocabs.tgt_lang, vocabs.tgt)):
        val = read_tokenized(split_file(paths.tokens, "val", lang, SUFFIX))
        rate = oov_rate(vocabs, vocab, [t for t, _ in val], [restore_text(t, f) for t, f in val])
        gate.check(f"{side} ({lang}): new val <unk> rate under the parent's vocabulary", rate <= MAX_UNK,
                   f"<= {MAX_UNK:g}", f"{rate:.4f}")
        gate.stats[f"{side}_val_unk_rate"] = round(rate, 6)
    gate.finish(paths.reports)
    save_vocabularies(vocabs, paths.out)
    log.info("%s: the parent's %s vocabularies (%d / %d symbols) written to %s (%s)", paths.parent, vocabs.direction,
             len(vocabs.src), len(vocabs.tgt), paths.out, MANIFEST)
    return gate


def run(params: ParentParams, paths: ParentPaths) -> Gate:
    return parent_stage(params.data, params.tokenize, paths)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("finetune-parent", __doc__.split("\n\n")[0], ParentPaths, ParentParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
