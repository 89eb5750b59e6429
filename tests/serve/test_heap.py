"""The loaded models are frozen out of the cycle collector's full passes (`settle_heap`): once the
server has loaded them, and again after a reload, so that a full pass set off by a large document
walks that request's objects only (it holds the GIL, /livez's answer too, for as long as it runs)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from nmt.serve.api import server
from support.serve import TOKEN, ThreadServer, config

pytestmark = pytest.mark.network


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the suite collects as before


def test_serve_freezes_what_it_loaded_before_it_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, int] = {}
    loaded = [object() for _ in range(1000)]  # stands for the sessions and vocabularies
    sock = SimpleNamespace(getsockname=lambda: ("127.0.0.1", 5000))
    monkeypatch.setattr(server, "load_models", lambda cfg: [])
    monkeypatch.setattr(server, "make_state", lambda cfg, models: loaded)
    monkeypatch.setattr(server, "bind", lambda host, port: seen.setdefault("frozen", gc.get_freeze_count()) and sock)
    monkeypatch.setattr(server, "uvicorn_config", lambda state: None)
    monkeypatch.setattr(server.DrainingServer, "__init__", lambda self, cfg, state: None)
    monkeypatch.setattr(server.DrainingServer, "run", lambda self, sockets=None: None)
    server.serve(server.ServeConfig(model=(Path("unused"),)))
    assert seen["frozen"] >= len(loaded)  # frozen before the socket was bound


def test_a_reload_freezes_the_new_model(package: Path) -> None:
    served = ThreadServer(config(package, admin_token=TOKEN))
    try:
        assert gc.get_freeze_count() == 0  # the test server does not go through serve()
        r = httpx.post(f"{served.url}/admin/reload", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
        assert r.status_code == 200
        assert gc.get_freeze_count() > 0
    finally:
        served.close()
