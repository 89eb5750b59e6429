"""What the server observes, no text kept: the Prometheus metrics registry, the per-direction traffic
counts (`nmt.translate.traffic`) and their snapshots, the opt-in input samples. Imports nothing else of the server."""
