"""Decoding: the one greedy and beam search over a backend (`search`), finished-hypothesis
bookkeeping (`hypotheses`) and line handling (`lines`), all torch-free; the torch model as a
backend (`backend`) and text-to-text translation with a model file (`translator`)."""
