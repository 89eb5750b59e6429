"""The in-browser translator beside the server (`nmt serve --browser-page SITE`): the static folder that
`node js/bin/build-page.js --package models/onnx --out SITE` writes (docs/export.md, "In JavaScript"),
served as files at `/browser/` and linked from the demo page as "translate in this browser". The server
does no work for it: the visitor's browser runs the model (onnxruntime-web, SentencePiece in WebAssembly)."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from nmt.errors import ConfigError

PREFIX = "/browser"
BUILD = "node js/bin/build-page.js --package models/onnx --out SITE (docs/export.md)"


def check_site(site: Path) -> Path:
    """`site`, if it is a page build-page.js wrote (index.html, app.js, the vendor files and a SentencePiece ONNX
    package in package/); else a ConfigError naming --browser-page and how to make one."""
    missing = [name for name in ("index.html", "app.js", "vendor", "package/model.json") if not (site / name).exists()]
    if missing:
        raise ConfigError(f"--browser-page {site}: not an in-browser translator page (no {', '.join(missing)}); "
                          f"write one with {BUILD}")
    try:
        card = json.loads((site / "package" / "model.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--browser-page {site}: package/model.json is unreadable ({exc}); write the page again "
                          f"with {BUILD}") from None
    if not isinstance(card, dict) or card.get("vocab", {}).get("kind") != "sentencepiece":
        raise ConfigError(f"--browser-page {site}: package/ is not an ONNX package of a SentencePiece model; the "
                          "page needs one (vocab.kind: sentencepiece)")
    return site


def browser_mount(site: Path) -> Mount:
    """The page's files at /browser/ (index.html for the folder itself); nothing outside `site` is reachable."""
    return Mount(PREFIX, app=StaticFiles(directory=check_site(site), html=True), name="browser")
