"""Locust load for `nmt serve`, for people who use Locust (not a dependency of this project).

    pip install locust
    locust -f examples/locustfile.py --headless --csv serve -u 32 -r 8 -t 2m -H http://127.0.0.1:5000

Each user posts one German sentence at a time (LibreTranslate's JSON shape) and counts a 503 with
Retry-After (the server's backpressure) as a rejection, not a failure. Sentences come from
$NMT_LOAD_SENTENCES (one per line; default data/validated/test_2016_flickr.de). It imports nothing
of this project. `bench/serve_load.py` is the load test whose figures the docs quote.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from locust import HttpUser, constant, task

SOURCE = Path(os.environ.get("NMT_LOAD_SENTENCES",
                            Path(__file__).resolve().parents[1] / "data/validated/test_2016_flickr.de"))
SENTENCES = [line for line in SOURCE.read_text(encoding="utf-8").splitlines() if line.strip()]


class Translator(HttpUser):
    wait_time = constant(0)  # closed loop: the next request when the last is answered

    @task
    def translate(self) -> None:
        body = {"q": random.choice(SENTENCES), "source": "de", "target": "en"}
        with self.client.post("/translate", json=body, name="/translate", catch_response=True) as r:
            if r.status_code == 200 and "translatedText" in r.json():
                r.success()
            elif r.status_code == 503:
                r.failure(f"rejected (503, Retry-After {r.headers.get('Retry-After')})")
            else:
                r.failure(f"HTTP {r.status_code}: {r.text[:200]}")
