"""User text for translation: bytes -> lines, strictly UTF-8, errors naming the line.

Torch-free, shared by `nmt translate` with a model file (`nmt.translate`) and with an ONNX
package (`nmt.runtime`).
"""

from __future__ import annotations

from nmt.errors import DataError


def decode_lines(data: bytes, name: str) -> list[str]:
    """Input bytes -> lines (no terminators, a final newline optional); the error names the line."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for n, raw in enumerate(lines, start=1):
        try:
            out.append(raw.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as exc:
            raise DataError(f"{name}:{n}: invalid UTF-8 (byte {raw[exc.start]:#04x} at column {exc.start + 1}); "
                            "the input must be UTF-8 text, one sentence per line") from None
    return out
