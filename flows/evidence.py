"""Promotion by evidence: the challenger takes the stage
only when every test set shows it not worse than the champion by more than a margin, none shows
it significantly worse, and it is not much slower.

For each test set, `nmt.evaluate.paired.paired_bootstrap` scores both systems' translations
(sacreBLEU and chrF) on the same paired bootstrap resamples (Koehn 2004): a two-sided p-value and
a 95% percentile interval of the difference challenger - champion.

- Non-inferiority: on every set, for both sacreBLEU and chrF, the interval's lower end must be
  above -`bleu_margin` / -`chrf_margin` (metric points). "Not significantly worse" cannot tell "no
  difference" from "too few sentences to see one"; a lower bound above -margin can: the loss is
  shown to be smaller than the margin (a one-sided 97.5% bound per set and metric; requiring all
  of them together is an intersection-union test, which needs no multiplicity correction).
- Significantly worse: the sets' BLEU p-values are corrected together with Holm's step-down
  procedure (Holm 1979); a set is *significantly worse* when its Holm-adjusted p < alpha and the
  difference's point estimate < 0. Such a set refuses the challenger whatever the margin.
- Speed, only as a trade for a challenger that passed both: its speed ratio (challenger
  sentences/s / champion sentences/s) at least `min_speed_ratio`.

What this does not measure: the bootstrap resamples test sentences, so its intervals cover the
sampling of the test set only, for these two trained models. It says nothing about the spread
between training runs: another training seed (or only another batch order) of the same settings
moves `val` too (reports/experiments.md, "How much one run can tell: another seed" and "Late
epochs"). "Significantly better" here is a statement about these two
checkpoints, not about their settings; "no significant difference" is not evidence of equality.
Nor does it measure speed's noise: the speed ratio is one measurement each, compared as it is.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from nmt.config.promote import PromoteConfig
from nmt.evaluate.paired import DEFAULT_RESAMPLES, DEFAULT_SEED, holm, paired_bootstrap

log = logging.getLogger(__name__)

WORSE, BETTER, NO_DIFFERENCE = "significantly worse", "significantly better", "no significant difference"
NOT_MEASURED = ("the spread between training seeds (reports/experiments.md measures it): the intervals cover "
                "the test sentences' sampling only")

TestSet = tuple[Sequence[str], Sequence[str], Sequence[str]]  # references, champion, challenger hypotheses


@dataclass(frozen=True)
class SetEvidence:
    """The comparison on one test set."""

    test_set: str  # the set's name (the key of the evaluate metrics files)
    sentences: int  # lines in the set
    champion_bleu: float  # champion's corpus sacreBLEU, 0-100
    challenger_bleu: float  # challenger's corpus sacreBLEU, 0-100
    difference: float  # challenger - champion sacreBLEU: the point estimate
    low: float  # 95% percentile interval of the difference: lower end
    high: float  # 95% percentile interval of the difference: upper end
    p_value: float  # raw two-sided paired bootstrap p-value of the BLEU difference
    holm_p: float  # p_value after Holm's correction over all sets
    champion_chrf: float  # champion's chrF, 0-100 (gated by its margin, not by the Holm test)
    challenger_chrf: float  # challenger's chrF, 0-100
    chrf_difference: float  # challenger - champion chrF
    chrf_low: float  # 95% percentile interval of the chrF difference: lower end
    chrf_high: float  # 95% percentile interval of the chrF difference: upper end
    chrf_p_value: float  # raw two-sided p-value of the chrF difference (reported, not corrected)
    verdict: str  # WORSE, BETTER or NO_DIFFERENCE (BLEU, Holm-adjusted, at alpha)


@dataclass(frozen=True)
class EvidenceDecision:
    """Whether the challenger takes the stage, why, and the evidence per set."""

    promote: bool  # True: the challenger may take the stage
    reason: str  # one line saying why
    sets: tuple[SetEvidence, ...]  # one per test set, in the order given
    champion_sps: float  # champion's measured sentences per second
    challenger_sps: float  # challenger's measured sentences per second
    speed_ratio: float  # challenger_sps / champion_sps
    min_speed_ratio: float  # the least speed_ratio promoted
    alpha: float  # family-wise significance level of the Holm-corrected BLEU tests
    bleu_margin: float  # non-inferiority: each set's BLEU interval's lower end above -bleu_margin
    chrf_margin: float  # the same for chrF
    resamples: int  # paired bootstrap resamples per set
    seed: int  # seed of the resampling (the same for every set)
    bleu_signature: str  # sacreBLEU's BLEU signature, with bs and seed
    chrf_signature: str  # sacreBLEU's chrF signature, with bs and seed
    not_measured: str = NOT_MEASURED  # what the evidence does not cover


def _verdict(holm_p: float, difference: float, alpha: float) -> str:
    if holm_p < alpha and difference < 0:
        return WORSE
    if holm_p < alpha and difference > 0:
        return BETTER
    return NO_DIFFERENCE


def shortfalls(e: SetEvidence, bleu_margin: float, chrf_margin: float) -> list[str]:
    """Each metric of set `e` whose interval's lower end is not above -margin (the loss it may hide
    exceeds the margin), as "METRIC DIFF [LOW, HIGH] (lower end LOW <= -MARGIN)"; [] when both are."""
    out = []
    for metric, difference, low, high, margin in (("sacreBLEU", e.difference, e.low, e.high, bleu_margin),
                                                  ("chrF", e.chrf_difference, e.chrf_low, e.chrf_high, chrf_margin)):
        if not low > -margin:  # NaN included
            out.append(f"{metric} {_interval(difference, low, high)} (lower end {low:+.2f} <= -{margin:g})")
    return out


def _positive(name: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} {value} must be a positive finite number")


def decide_by_evidence(sets: Mapping[str, TestSet], champion_sps: float, challenger_sps: float,
                       alpha: float = 0.05, min_speed_ratio: float = 0.9, resamples: int = DEFAULT_RESAMPLES,
                       seed: int = DEFAULT_SEED, bleu_margin: float = PromoteConfig.bleu_margin,
                       chrf_margin: float = PromoteConfig.chrf_margin) -> EvidenceDecision:
    """Promote the challenger when, on every set in `sets` (name -> (references, champion
    hypotheses, challenger hypotheses), detokenized), the 95% intervals of the sacreBLEU and chrF
    differences have their lower ends above -bleu_margin and -chrf_margin, no set is significantly
    worse in sacreBLEU after Holm's correction at `alpha` (Holm 1979; paired bootstrap, Koehn
    2004), and challenger_sps / champion_sps >= min_speed_ratio."""
    if not sets:
        raise ValueError("no test sets to compare on")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha {alpha} must be between 0 and 1")
    for name, margin in (("bleu_margin", bleu_margin), ("chrf_margin", chrf_margin)):
        if not (math.isfinite(margin) and margin >= 0):
            raise ValueError(f"{name} {margin} must be a finite number >= 0 (metric points)")
    _positive("champion_sps", champion_sps)
    _positive("challenger_sps", challenger_sps)
    results = {name: paired_bootstrap(refs, champion, challenger, resamples, seed)
               for name, (refs, champion, challenger) in sets.items()}
    adjusted = holm([r.bleu.p_value for r in results.values()])
    evidence = tuple(
        SetEvidence(name, r.sentences, r.bleu.champion, r.bleu.challenger, r.bleu.difference, r.bleu.low, r.bleu.high,
                    r.bleu.p_value, p, r.chrf.champion, r.chrf.challenger, r.chrf.difference, r.chrf.low,
                    r.chrf.high, r.chrf.p_value, _verdict(p, r.bleu.difference, alpha))
        for (name, r), p in zip(results.items(), adjusted))
    ratio = challenger_sps / champion_sps
    problems = [f"significantly worse on {e.test_set} (sacreBLEU {e.difference:+.2f}, 95% interval "
                f"[{e.low:+.2f}, {e.high:+.2f}], Holm-adjusted p {e.holm_p:.4f} < {alpha:g})"
                for e in evidence if e.verdict == WORSE]
    problems += [f"not shown within the margin on {e.test_set}: {'; '.join(short)}"
                 for e in evidence if e.verdict != WORSE and (short := shortfalls(e, bleu_margin, chrf_margin))]
    if not ratio >= min_speed_ratio:
        problems.append(f"too slow: speed ratio {ratio:.3f} ({challenger_sps:.4g} / {champion_sps:.4g} sentences/s) "
                        f"below min_speed_ratio {min_speed_ratio:g}")
    if problems:
        reason = "; ".join(problems)
    else:
        better = [e.test_set for e in evidence if e.verdict == BETTER]
        reason = (f"not significantly worse on any of {', '.join(sets)} (Holm, alpha {alpha:g})"
                  + (f", significantly better on {', '.join(better)}" if better else "")
                  + f"; within the margins on all (95% lower ends above -{bleu_margin:g} sacreBLEU, "
                  f"-{chrf_margin:g} chrF); speed ratio {ratio:.3f} >= {min_speed_ratio:g}")
    first = next(iter(results.values()))
    decision = EvidenceDecision(not problems, reason, evidence, champion_sps, challenger_sps, ratio, min_speed_ratio,
                                alpha, bleu_margin, chrf_margin, resamples, seed, first.bleu.signature,
                                first.chrf.signature)
    log.info("%s: %s", "promote" if decision.promote else "do not promote", reason)
    return decision


def to_json(decision: EvidenceDecision) -> str:
    """The decision as a JSON document (every field; the sets as a list of objects)."""
    return json.dumps(asdict(decision), indent=2) + "\n"



def _interval(difference: float, low: float, high: float) -> str:
    return f"{difference:+.2f} [{low:+.2f}, {high:+.2f}]"


def markdown(decision: EvidenceDecision, title: str = "Promotion by evidence") -> str:
    """The decision as a Markdown page: the verdict, the reason, one table row per set."""
    state = "promoted" if decision.promote else "**not promoted**"
    lines = [f"# {title}: {state}", "", f"Reason: {decision.reason}.", "",
             f"Paired bootstrap (Koehn 2004), {decision.resamples} resamples, seed {decision.seed}; "
             f"BLEU p-values Holm-corrected (Holm 1979) at alpha {decision.alpha:g}. "
             f"Speed ratio {decision.speed_ratio:.3f} (challenger {decision.challenger_sps:.4g} / champion "
             f"{decision.champion_sps:.4g} sentences/s; at least {decision.min_speed_ratio:g} promoted). "
             f"Non-inferiority: every set's 95% lower ends above -{decision.bleu_margin:g} sacreBLEU and "
             f"-{decision.chrf_margin:g} chrF.", "",
             "| test set | sentences | champion BLEU | challenger BLEU | difference [95% interval] | p | Holm p "
             "| champion chrF | challenger chrF | chrF difference [95% interval] | verdict | within the margins |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    lines += [f"| {e.test_set} | {e.sentences} | {e.champion_bleu:.2f} | {e.challenger_bleu:.2f} | "
              f"{_interval(e.difference, e.low, e.high)} | {e.p_value:.4f} | {e.holm_p:.4f} | {e.champion_chrf:.2f} | "
              f"{e.challenger_chrf:.2f} | {_interval(e.chrf_difference, e.chrf_low, e.chrf_high)} | {e.verdict} | "
              f"{'no' if shortfalls(e, decision.bleu_margin, decision.chrf_margin) else 'yes'} |"
              for e in decision.sets]
    lines += ["", f"BLEU: `{decision.bleu_signature}`; chrF: `{decision.chrf_signature}`.", "",
              f"Not measured: {decision.not_measured}.", ""]
    return "\n".join(lines)

