"""Headless Chromium for tests that use a page as a person does (tools/browser.py drives it).

`chromium()` finds the browser as the report test does: skipped when missing, a failure when
NMT_REQUIRE_BROWSER is set (CI installs it); `Browser(profile)` starts it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools import browser
from tools.browser import FLAGS, Page

__all__ = ["FLAGS", "Browser", "Page", "chromium"]


def chromium() -> str:
    found = browser.find_chromium()
    if found is None:
        message = "headless Chromium not found (Debian: apt-get install chromium; or set NMT_CHROMIUM)"
        if os.environ.get("NMT_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    return found


class Browser(browser.Browser):
    """Headless Chromium with remote debugging on a free port of 127.0.0.1; skipped when it is not installed."""

    def __init__(self, profile: Path) -> None:
        super().__init__(profile, chromium())
