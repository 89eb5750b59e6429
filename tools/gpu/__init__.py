"""The GPU path's checks on a lent GPU (`make gpu-check`, docs/training.md): not benches, not run by `make bench`."""
