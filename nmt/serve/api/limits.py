"""Who may call, and how much: api keys with per-key limits, and the admin token.

With `--api-keys FILE` every translate request needs a known `api_key` (403 otherwise); each key
may make `requests_per_minute` requests in any sliding minute and send `chars_per_request`
characters per request (429, as LibreTranslate's `--req-limit` / `--char-limit` do; a request over
the rate limit gets Retry-After). A key's entry may leave either out: the server's `--req-limit`
/ `--char-limit` apply, 0 meaning no limit. Keys are never logged, nor echoed in errors.

The file is a JSON object:

    {"3f1c...": {"requests_per_minute": 120, "chars_per_request": 20000}, "9ab2...": {}}
"""

from __future__ import annotations

import hmac
import json
import math
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from nmt.errors import DataError
from nmt.serve.api.protocol import HttpError

WINDOW_S = 60.0
FIELDS = ("requests_per_minute", "chars_per_request")


@dataclass(frozen=True)
class KeyLimits:
    requests_per_minute: int  # 0: no limit
    chars_per_request: int  # 0: no limit


def load_keys(path: Path, req_limit: int, char_limit: int) -> dict[str, KeyLimits]:
    """The keys of `path` with their limits (the defaults where an entry sets none)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"--api-keys {path}: not found; write a JSON object {{\"KEY\": {{}}}} there, or leave the "
                        "option out to serve without keys") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"--api-keys {path}: cannot read ({exc}); it must be a JSON object of keys") from None
    if not isinstance(data, dict) or not data:
        raise DataError(f"--api-keys {path}: must be a non-empty JSON object {{\"KEY\": {{...}}, ...}}")
    keys = {}
    for n, (key, entry) in enumerate(data.items(), start=1):
        where = f"--api-keys {path}: key number {n}"  # never the key itself
        if not isinstance(entry, dict) or set(entry) - set(FIELDS):
            raise DataError(f"{where}: its entry must be an object with at most {', '.join(FIELDS)}")
        values = {f: entry.get(f, default) for f, default in zip(FIELDS, (req_limit, char_limit))}
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values.values()):
            raise DataError(f"{where}: {', '.join(FIELDS)} must be whole numbers >= 0 (0: no limit)")
        if len(key) < 8:
            raise DataError(f"{where}: keys must be at least 8 characters (e.g. `openssl rand -hex 16`)")
        keys[key] = KeyLimits(**values)
    return keys


class KeyCheck:
    """The api keys (none: every request is let through) and each key's recent requests."""

    def __init__(self, keys: dict[str, KeyLimits] | None) -> None:
        self.keys = keys
        self.recent: dict[str, deque[float]] = {}

    def check(self, key: str | None, chars: int, now: float) -> None:
        """Admit a request of `chars` characters with `key`, or raise 403 / 429."""
        if self.keys is None:
            return
        limits = self.keys.get(key) if key is not None else None
        if limits is None:
            what = "missing" if key is None else "unknown"
            raise HttpError(403, f"Invalid API key ({what}); send the api_key field with a key this server knows",
                            "forbidden")
        if limits.chars_per_request and chars > limits.chars_per_request:
            raise HttpError(429, f"this request has {chars} characters; this key may send {limits.chars_per_request} "
                                 "per request: split it", "rate_limited")
        if not limits.requests_per_minute:
            return
        recent = self.recent.setdefault(cast(str, key), deque())
        while recent and now - recent[0] >= WINDOW_S:
            recent.popleft()
        if len(recent) >= limits.requests_per_minute:
            wait = max(1, math.ceil(recent[0] + WINDOW_S - now))
            raise HttpError(429, f"Too many requests: this key may make {limits.requests_per_minute} per minute; "
                                 f"retry in {wait} s", "rate_limited", retry_after=wait)
        recent.append(now)


def check_admin(authorization: str | None, token: str | None) -> None:
    """The admin token from `Authorization: Bearer TOKEN`, compared in constant time; 403 otherwise."""
    if token is None:
        raise HttpError(403, "reloading over HTTP is off: start the server with --admin-token (or "
                             "$NMT_SERVE_ADMIN_TOKEN), or send it SIGHUP", "forbidden")
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise HttpError(403, "missing or wrong admin token; send Authorization: Bearer TOKEN", "forbidden")
