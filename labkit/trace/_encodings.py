"""Text hidden in simple encodings that a real model would read: runs of base64 that decode to readable text."""

from __future__ import annotations

import base64
import binascii
import re

__all__ = ["base64_texts"]

_BASE64 = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")


def base64_texts(text: str) -> list[str]:
    """Every run of 24+ base64 characters in `text` that decodes to printable UTF-8 (notebook 07)."""
    found = []
    for run in _BASE64.findall(text):
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if all(c.isprintable() or c.isspace() for c in decoded):
            found.append(decoded)
    return found
