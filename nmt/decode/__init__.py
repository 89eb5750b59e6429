"""Decoding: greedy and beam search with the key/value cache (`search`, torch), the
backend-independent beam bookkeeping (`hypotheses`) and line handling (`lines`), both
torch-free, and text-to-text translation with a model file (`translator`)."""
