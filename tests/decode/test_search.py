"""Greedy and beam search: cache equivalence, beam 1 = greedy, length limits, early exit."""

from __future__ import annotations

import pytest
import torch

from nmt.config.model import ModelConfig
from nmt.decode.hypotheses import length_penalty
from nmt.decode import search
from nmt.decode.backend import TorchBackend, beam_search, greedy
from nmt.model.transformer import build_model
from nmt.text.vocab import PAD_ID, SPECIALS, Vocabulary

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
