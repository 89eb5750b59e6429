"""Stage 10, drift: the training data's profile (the DVC stage `profile`) and the population-stability
report that compares served traffic with it (`flows/drift.py`). After serve: it reads the traffic
snapshots the server writes (`nmt.translate.traffic`)."""
