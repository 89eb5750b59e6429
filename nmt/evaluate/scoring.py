"""Translation quality numbers, each labelled with what it measures.

- sacreBLEU on detokenized, cased text against the raw references, with its signature:
  the number the field compares (Post 2018, "A Call for Clarity in Reporting BLEU Scores").
- chrF (sacreBLEU's implementation, with its signature).
- NLTK `corpus_bleu` on spaCy tokens: what the reference tutorials report; not comparable
  with published numbers, because it depends on the tokenization. Scaled to 0-100 here.
- Sentence BLEU (sacreBLEU, exponential smoothing) to rank samples, and corpus BLEU per
  source-length bucket.
All scores are on a 0-100 scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nmt.text.vocab import UNK

SACREBLEU_LABEL = "sacreBLEU, detokenized cased text vs raw references (13a tokenizer)"
CHRF_LABEL = "chrF (sacreBLEU), detokenized cased text vs raw references"
NLTK_LABEL = "NLTK corpus_bleu x 100 on spaCy tokens (the reference tutorials' number; tokenization-dependent)"
UNK_LABEL = "share of output tokens that are <unk> (words the target vocabulary cannot produce)"
LENGTH_LABEL = "hypothesis / reference length in sacreBLEU's 13a tokens (below 1: BLEU's brevity penalty applies)"

# Source-length buckets in tokens: (low, high) inclusive; None = no upper bound.
LENGTH_BUCKETS: tuple[tuple[int, int | None], ...] = ((1, 10), (11, 15), (16, 20), (21, 25), (26, None))


@dataclass(frozen=True)
class CorpusScores:
    sacrebleu: float  # 0-100
    sacrebleu_signature: str
    chrf: float  # 0-100
    chrf_signature: str
    nltk_bleu: float  # 0-100
    sentences: int
    length_ratio: float  # hypothesis / reference length (sacreBLEU's 13a tokens); BLEU's brevity penalty reads it
    unk_rate: float  # share of output tokens that are <unk> (0-1): words the vocabulary could not produce
    unk_sentences: int  # hypotheses with at least one <unk>


def corpus_scores(hypotheses: Sequence[str], references: Sequence[str], hyp_tokens: Sequence[Sequence[str]],
                  ref_tokens: Sequence[Sequence[str]]) -> CorpusScores:
    """Corpus-level scores; `*_tokens` are the spaCy tokens of the same lines (for NLTK)."""
    from nltk.translate.bleu_score import corpus_bleu
    from sacrebleu.metrics import BLEU, CHRF

    if not (len(hypotheses) == len(references) == len(hyp_tokens) == len(ref_tokens)):
        raise ValueError(f"{len(hypotheses)} hypotheses, {len(references)} references, {len(hyp_tokens)} "
                         f"hypothesis token lines, {len(ref_tokens)} reference token lines: must be equal")
    bleu, chrf = BLEU(), CHRF()
    b = bleu.corpus_score(list(hypotheses), [list(references)])
    c = chrf.corpus_score(list(hypotheses), [list(references)])
    nltk = corpus_bleu([[list(r)] for r in ref_tokens], [list(h) for h in hyp_tokens]) if hyp_tokens else 0.0
    unks = [sum(t == UNK for t in h) for h in hyp_tokens]
    return CorpusScores(round(b.score, 2), str(bleu.get_signature()), round(c.score, 2), str(chrf.get_signature()),
                        round(100.0 * nltk, 2), len(hypotheses), round(b.sys_len / max(b.ref_len, 1), 4),
                        round(sum(unks) / max(sum(len(h) for h in hyp_tokens), 1), 6), sum(n > 0 for n in unks))


def sentence_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
    """Smoothed sentence BLEU per line (for ranking samples, not for reporting a system)."""
    from sacrebleu.metrics import BLEU

    bleu = BLEU(effective_order=True)
    return [round(bleu.sentence_score(h, [r]).score, 2) for h, r in zip(hypotheses, references)]


def bucket_name(low: int, high: int | None) -> str:
    return f"{low}+" if high is None else f"{low}-{high}"


def bleu_by_length(hypotheses: Sequence[str], references: Sequence[str], src_lengths: Sequence[int]) -> list[dict]:
    """Corpus sacreBLEU per source-length bucket: [{bucket, sentences, sacrebleu}]; empty buckets omitted."""
    from sacrebleu.metrics import BLEU

    rows = []
    for low, high in LENGTH_BUCKETS:
        idx = [i for i, n in enumerate(src_lengths) if n >= low and (high is None or n <= high)]
        if not idx:
            continue
        score = BLEU().corpus_score([hypotheses[i] for i in idx], [[references[i] for i in idx]]).score
        rows.append({"bucket": bucket_name(low, high), "sentences": len(idx), "sacrebleu": round(score, 2)})
    return rows
