"""The `evaluate` section of params.yaml: which test sets, how to decode, the BLEU floor.

Its decoding settings (`Decoding`) are also the defaults the export stage writes to the
ONNX model card, so the BLEU the card records is what a consumer gets with the defaults.
`Decoding()` is the one source of the default decoding settings: `EvaluateConfig`'s defaults,
`Translator.from_file`, `LineTranslator` and `nmt translate` on a model file use it, and a test
holds it equal to params.yaml's evaluate section (tests/decode/test_defaults.py). No code the
training runs (nmt/train, nmt/model, the search in nmt/decode) reads these settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from nmt.config.loader import require

MAX_BEAM_SIZE = 32  # beyond this, memory grows (rows = batch x beam) for no gain in BLEU


@dataclass(frozen=True)
class Decoding:
    """Beam search settings (paper, section 6.1); checked wherever they come from (params, a
    model card, the command line)."""

    beam_size: int = 16  # beam width; 1 = greedy (paper: 4; 16 is tuned on val, reports/experiments.md)
    alpha: float = 2.2  # GNMT length penalty (paper: 0.6; 2.2 is tuned on val with beam 16)
    max_extra: int = 50  # output length limit: source length + this (paper: 50)

    def __post_init__(self) -> None:
        require(1 <= self.beam_size <= MAX_BEAM_SIZE, "beam_size", f"must be 1 (greedy) to {MAX_BEAM_SIZE}")
        require(self.alpha >= 0.0, "alpha", "must be >= 0")
        require(self.max_extra >= 1, "max_extra", "must be >= 1")


DEFAULT_DECODING = Decoding()  # the defaults, for the fields that repeat them below


@dataclass(frozen=True)
class EvaluateConfig:
    test_sets: tuple[str, ...] = ("test_2016_flickr",)  # corpus splits to translate and score
    beam_size: int = DEFAULT_DECODING.beam_size  # beam width; 1 = greedy
    alpha: float = DEFAULT_DECODING.alpha  # GNMT length penalty
    max_extra: int = DEFAULT_DECODING.max_extra  # outputs may be this many symbols longer than the source
    batch_size: int = 64  # sentences decoded together
    min_bleu: float = 20.0  # gate: sacreBLEU floor (0-100) for every test set
    max_unk_rate: float = 0.0  # gate: largest share of <unk> among the output tokens of every test set
    samples: int = 5  # best and worst sentences (by sentence BLEU) shown in the report
    attention_samples: int = 3  # sentences that get an attention page
    attention_max_tokens: int = 16  # attention samples are picked among sources no longer than this
    # a test set listed here is scored in that direction only (an English-original news set: en-de);
    # the others in every direction
    test_set_directions: Mapping[str, str] = field(default_factory=dict)
    min_bleu_by_set: Mapping[str, float] = field(default_factory=dict)  # gate: a set's own floor instead of min_bleu

    def test_sets_for(self, direction: str) -> tuple[str, ...]:
        """The test sets a model of `direction` ("src-tgt") translates and is scored on."""
        return tuple(s for s in self.test_sets if self.test_set_directions.get(s, direction) == direction)

    def floor(self, test_set: str) -> float:
        return self.min_bleu_by_set.get(test_set, self.min_bleu)

    def __post_init__(self) -> None:
        require(len(self.test_sets) > 0, "test_sets", "must name at least one split")
        for key in ("test_set_directions", "min_bleu_by_set"):  # plain dicts: asdict() copies them into cards
            object.__setattr__(self, key, dict(getattr(self, key)))
        for key in ("test_set_directions", "min_bleu_by_set"):
            unknown = sorted(set(getattr(self, key)) - set(self.test_sets))
            require(not unknown, key, f"{unknown} are not in test_sets")
        for name, direction in self.test_set_directions.items():
            require(len(direction.split("-")) == 2, f"test_set_directions.{name}", "expected 'src-tgt' like 'en-de'")
        for name, floor in self.min_bleu_by_set.items():
            require(0.0 <= floor <= 100.0, f"min_bleu_by_set.{name}", "must be between 0 and 100")
        require(len(set(self.test_sets)) == len(self.test_sets), "test_sets", "must not repeat a split")
        Decoding(self.beam_size, self.alpha, self.max_extra)  # the same ranges, named by key
        require(self.batch_size >= 1, "batch_size", "must be >= 1")
        require(0.0 <= self.min_bleu <= 100.0, "min_bleu", "must be between 0 and 100")
        require(0.0 <= self.max_unk_rate <= 1.0, "max_unk_rate", "must be between 0 and 1")
        require(self.samples >= 0, "samples", "must be >= 0")
        require(self.attention_samples >= 0, "attention_samples", "must be >= 0")
        require(self.attention_max_tokens >= 1, "attention_max_tokens", "must be >= 1")

    @property
    def decoding(self) -> Decoding:
        return Decoding(self.beam_size, self.alpha, self.max_extra)
