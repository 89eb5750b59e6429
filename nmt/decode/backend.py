"""The torch model as a search backend, and greedy / beam search over it.

`TorchBackend` runs `nmt.model.incremental` (the code the ONNX graphs are exported from)
eagerly, on the model's device, and hands the search numpy arrays. `use_cache=False`
recomputes the whole prefix at every step (the reference tutorials' way); it exists to test
and benchmark the cache. `greedy()` and `beam_search()` take a (B, S) source tensor and run
`nmt.decode.search` over the backend, with its defaults (the paper's beam 4, alpha 0.6).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from nmt.decode import search
from nmt.model.incremental import DecoderStep, Encoder, best_next, empty_cache
from nmt.model.transformer import Transformer, padding_mask


class TorchBackend:
    """`nmt.decode.search.Backend` over a torch `Transformer` (eval mode)."""

    def __init__(self, model: Transformer, use_cache: bool = True) -> None:
        self.model, self.use_cache = model, use_cache
        self.max_len = model.cfg.max_len
        self.device = model.pe.device
        self.encoder, self.decoder = Encoder(model), DecoderStep(model)
        self.src_mask = torch.zeros(0, 0, dtype=torch.bool)
        self.cross: list[Tensor] = []
        self.cache: list[Tensor] = []
        self.memory = torch.zeros(0)
        self.prefix: Tensor | None = None  # uncached: every row's tokens so far, <s> first

    @torch.no_grad()
    def encode(self, src: np.ndarray) -> None:
        s = torch.as_tensor(src, device=self.device)
        self.src_mask = s != 0
        if self.use_cache:
            self.cross, self.cache = self.encoder(s), []
        else:
            self.memory, self.prefix = self.model.encode(s, padding_mask(s)), None

    @torch.no_grad()
    def step(self, tokens: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = torch.as_tensor(tokens, device=self.device)
        r = torch.as_tensor(rows, device=self.device)
        if self.use_cache:
            if not self.cache:  # first step: a cache of length 0 for every row
                self.cache = empty_cache(self.model, tokens.size, self.device)
            logp, ids, *self.cache = self.decoder(t, r, self.src_mask, *self.cache, *self.cross)
        else:
            logp, ids = self._step_without_cache(t, r)
        return logp.cpu().numpy(), ids.cpu().numpy()

    def _step_without_cache(self, tokens: Tensor, rows: Tensor) -> tuple[Tensor, Tensor]:
        b, K = tokens.shape
        new = tokens.reshape(-1, 1)  # <s> at the first step
        self.prefix = new if self.prefix is None else torch.cat([self.prefix.index_select(0, rows.reshape(-1)), new], 1)
        sentence = torch.arange(b, device=self.device).repeat_interleave(K)
        last = torch.zeros(self.prefix.shape, dtype=torch.bool, device=self.device)
        last[:, -1] = True  # the output projection only where it is needed, as the tutorials do
        logits = self.model.decode(self.prefix, self.memory[sentence], self.src_mask[sentence, None, None, :],
                                   keep=last)
        logp, ids = best_next(logits, 2 * K)
        return logp.reshape(b, K, 2 * K), ids.reshape(b, K, 2 * K)

    def keep(self, sentences: np.ndarray) -> None:
        index = torch.as_tensor(sentences, device=self.device)
        self.src_mask = self.src_mask.index_select(0, index)
        if self.use_cache:
            self.cross = [c.index_select(0, index) for c in self.cross]
        else:
            self.memory = self.memory.index_select(0, index)


def greedy(model: Transformer, src: Tensor, max_extra: int = 50, use_cache: bool = True) -> list[list[int]]:
    """Greedy decoding of a (B, S) source tensor -> B id lists (no <s> / </s>)."""
    return search.greedy(TorchBackend(model, use_cache), src.cpu().numpy(), max_extra)


def beam_search(model: Transformer, src: Tensor, beam_size: int = 4, alpha: float = 0.6, max_extra: int = 50,
                use_cache: bool = True) -> list[list[int]]:
    """Beam search of a (B, S) source tensor -> the best id list per sentence."""
    return search.beam_search(TorchBackend(model, use_cache), src.cpu().numpy(), beam_size, alpha, max_extra)
