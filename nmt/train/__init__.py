"""Stage 5, train: token-budget batches (`batching`), label-smoothed KL (`loss`), Adam + Noam
(`schedule`), the loop (`loop`) with resume (`resume`), validation (`monitor`) and
torchrun (`distributed`); the stage itself, final model and gate, is `stage`."""
