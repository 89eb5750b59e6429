"""What the benches share (result records, the load client and server, peer models, synthetic corpora); no bench."""
