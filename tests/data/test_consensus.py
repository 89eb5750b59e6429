"""Target choice among systems' outputs (nmt.data.consensus): chrF as sacreBLEU computes it, the
consensus output (a cheap MBR), the top k, and every output."""

from __future__ import annotations

import random

import pytest
from sacrebleu.metrics import CHRF

from nmt import ranking
from nmt.data.consensus import choose, chrf, consensus_scores, pairwise_chrf

PAIRS = [("Der Hund bellt.", "Der Hund bellte laut."), ("a", "b"), ("", "x"), ("x", ""), ("Hello world", "Hello world"),
         ("ab", "abcdefgh ij"), ("Ünïcödé straße 12", "Unicode Strasse 12"), ("aaa aaa", "aa"),
         ("The man, who was tired, went home.", "The tired man went home early.")]


def random_text(rng: random.Random) -> str:
    words = ["der", "die", "Hund", "Katze", "läuft", "schnell", "über", "die", "Straße", "!", "12", "Haus", "ab"]
    return " ".join(rng.choice(words) for _ in range(rng.randint(0, 12)))


@pytest.mark.parametrize("hypothesis,reference", PAIRS)
def test_chrf_is_sacrebleus_sentence_chrf(hypothesis: str, reference: str) -> None:
    assert chrf(hypothesis, reference) == pytest.approx(CHRF().sentence_score(hypothesis, [reference]).score, abs=1e-9)


def test_pairwise_chrf_is_sacrebleus_for_every_ordered_pair() -> None:
    rng = random.Random(52)
    texts = [random_text(rng) for _ in range(9)]
    scores = pairwise_chrf(texts)
    metric = CHRF()
    for i, hyp in enumerate(texts):
        for j, ref in enumerate(texts):
            assert scores[i, j] == pytest.approx(metric.sentence_score(hyp, [ref]).score, abs=1e-9), (hyp, ref)


OUTPUTS = ["The cat sleeps on the sofa.",
           "The cat is sleeping on the sofa.",
           "I cannot translate this text.",  # a refusal: unlike the others
           "The cat sleeps on the couch.",
           "Die Katze schläft auf dem Sofa."]  # a copy of the source


def test_consensus_scores_are_mean_chrf_against_the_others() -> None:
    scores = consensus_scores(OUTPUTS)
    for i, out in enumerate(OUTPUTS):
        others = [o for j, o in enumerate(OUTPUTS) if j != i]
        assert scores[i] == pytest.approx(sum(chrf(out, o) for o in others) / len(others))


def test_identical_outputs_score_exactly_alike_so_the_first_wins_the_tie() -> None:
    """The same output at two places: the same chrF figures summed in another order; a plain sum
    differed in the last bit here (151.63037795874655 against ...58) and the later copy won."""
    same = "field over in with ball child"
    outputs = [same, "dog ball over red quickly ball", "child man dog", same, "runs in runs"]
    scores = consensus_scores(outputs)
    assert scores[0] == scores[3] == max(scores)
    assert choose(outputs, "consensus") == [0] and choose(outputs, "top_k", top_k=2) == [0, 3]


def test_consensus_chooses_the_output_most_like_the_others() -> None:
    scores = consensus_scores(OUTPUTS)
    assert choose(OUTPUTS, "consensus") == [ranking.best(range(len(OUTPUTS)), scores.__getitem__)]
    assert choose(OUTPUTS, "consensus") == [0]
    assert scores[2] < min(scores[0], scores[1], scores[3]) and scores[4] < min(scores[0], scores[1], scores[3])


def test_top_k_keeps_the_k_best_in_file_order() -> None:
    assert choose(OUTPUTS, "top_k", top_k=3) == [0, 1, 3]
    assert choose(OUTPUTS, "top_k", top_k=1) == choose(OUTPUTS, "consensus")


def test_all_keeps_every_output() -> None:
    assert choose(OUTPUTS, "all") == [0, 1, 2, 3, 4]


def test_agreeing_outputs_are_votes_and_a_tie_keeps_the_first() -> None:
    assert choose(["B a b", "A b c", "A b c", "B a b", "A b c"], "consensus") == [1]
    assert choose(["same", "same"], "consensus") == [0]
    assert choose(["only"], "consensus") == [0]
