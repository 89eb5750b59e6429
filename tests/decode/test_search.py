"""Greedy and beam search: cache equivalence, beam 1 = greedy, length limits, early exit."""

from __future__ import annotations

import math

import pytest
import torch

from nmt.config.model import ModelConfig
from nmt.decode import search
from nmt.decode.backend import TorchBackend, beam_search, greedy
from nmt.decode.hypotheses import length_penalty
from nmt.model.transformer import build_model
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID, SPECIALS, Vocabulary

VOCAB = Vocabulary(list(SPECIALS) + [f"w{i}" for i in range(30)])


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(3)
    m = build_model(ModelConfig(n_layers=2, d_model=32, n_heads=4, d_ff=64, max_len=128), VOCAB, VOCAB).eval()
    with torch.no_grad():  # a random model rarely says </s>: make it likely enough to end early
        m.generator.weight[3] += 0.4 * m.generator.weight[4:].mean(0)
    return m


def sources(seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, len(VOCAB), (6, 12), generator=g)
    for row, length in enumerate([12, 3, 7, 1, 10, 5]):
        src[row, length:] = PAD_ID
    return src


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cached_and_uncached_decoding_agree(model, seed: int) -> None:
    src = sources(seed)
    assert greedy(model, src, max_extra=8) == greedy(model, src, max_extra=8, use_cache=False)
    assert beam_search(model, src, 3, max_extra=8) == beam_search(model, src, 3, max_extra=8, use_cache=False)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beam_of_one_is_greedy(model, seed: int) -> None:
    src = sources(seed)
    assert beam_search(model, src, beam_size=1, max_extra=8) == greedy(model, src, max_extra=8)


def test_outputs_respect_the_length_limit(model) -> None:
    src = sources()
    lengths = (src != PAD_ID).sum(1).tolist()
    for out in (greedy(model, src, max_extra=2), beam_search(model, src, 4, max_extra=2)):
        assert all(len(o) <= n + 2 for o, n in zip(out, lengths))
        assert all(3 not in o and 2 not in o for o in out)  # no </s> or <s> inside


def test_batched_equals_one_by_one(model) -> None:
    src = sources(1)
    together = beam_search(model, src, 4, max_extra=6)
    alone = [beam_search(model, src[i:i + 1, : int((src[i] != PAD_ID).sum())], 4, max_extra=6)[0]
             for i in range(len(src))]
    assert together == alone


class Recording(TorchBackend):
    """The torch backend, noting the rows of every step."""

    def __init__(self, model) -> None:
        super().__init__(model)
        self.rows: list[int] = []

    def step(self, tokens, rows):
        self.rows.append(tokens.size)
        return super().step(tokens, rows)


@pytest.mark.parametrize("kind", ["greedy", "beam"])
def test_finished_sentences_leave_the_batch(model, kind: str) -> None:
    backend = Recording(model)
    src = sources().numpy()
    if kind == "greedy":
        search.greedy(backend, src, max_extra=0)
    else:
        search.beam_search(backend, src, 2, max_extra=0)
    k = 1 if kind == "greedy" else 2
    assert backend.rows[0] == 6 * k
    assert backend.rows == sorted(backend.rows, reverse=True) and backend.rows[-1] < backend.rows[0]
    assert len(backend.rows) == 12  # the longest source sets the number of steps


def test_gnmt_length_penalty() -> None:
    assert length_penalty(1, 0.6) == pytest.approx(1.0)
    assert length_penalty(7, 0.6) == pytest.approx(2.0**0.6)
    assert length_penalty(7, 0.0) == 1.0


def _teacher_forced(model, src: torch.Tensor, ids: list[int], ended: bool) -> float:
    """The model's log-probability of `ids` (then </s> when `ended`) for one source row, in one forward pass."""
    src = src[None, : int((src != PAD_ID).sum())]
    tgt = torch.tensor([[BOS_ID] + ids])
    with torch.no_grad():
        logp = torch.log_softmax(model(src, tgt).float(), dim=-1)[0]  # (T, V)
    wanted = ids + [EOS_ID] if ended else ids
    return float(sum(logp[t, tok] for t, tok in enumerate(wanted)))


@pytest.mark.parametrize("kind", ["greedy", "beam"])
def test_hypotheses_carry_the_models_log_probability(model, kind: str) -> None:
    """A hypothesis' logprob is the sum the model gives its tokens (teacher-forced, </s> included when
    it ended in one), and its confidence the geometric mean of those probabilities."""
    src = sources(2)
    backend = TorchBackend(model)
    with torch.no_grad():
        found = (search.greedy_scored(backend, src.numpy(), max_extra=6) if kind == "greedy"
                 else [h for hyps in search.beam_search_n(backend, src.numpy(), 3, 3, max_extra=6) for h in hyps[:1]])
    assert [h.ids for h in found] == (greedy(model, src, max_extra=6) if kind == "greedy"
                                      else beam_search(model, src, 3, max_extra=6))
    lengths = (src != PAD_ID).sum(1).tolist()
    for row, hyp in enumerate(found):
        ended = hyp.steps == len(hyp.ids) + 1
        assert ended or len(hyp.ids) == lengths[row] + 6  # cut at the limit: no </s> counted
        assert hyp.logprob == pytest.approx(_teacher_forced(model, src[row], hyp.ids, ended), abs=1e-3)
        assert 0.0 < hyp.confidence <= 1.0
        assert hyp.confidence == pytest.approx(math.exp(hyp.logprob / hyp.steps))


def test_every_hypothesis_of_the_n_best_list_is_scored(model) -> None:
    src = sources(0)
    with torch.no_grad():
        nbest = search.beam_search_n(TorchBackend(model), src.numpy(), 3, 4, max_extra=6)
    for row, hyps in enumerate(nbest):
        for hyp in hyps:
            ended = hyp.steps == len(hyp.ids) + 1
            assert hyp.logprob == pytest.approx(_teacher_forced(model, src[row], hyp.ids, ended), abs=1e-3)
