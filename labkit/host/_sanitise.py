"""The host's sanitiser: what a learner cannot see in a tool result does not reach the model either."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["sanitise", "sanitise_data"]

# Whole terminal escape sequences, so none leaves its tail (`[31m`) behind: CSI (ESC [ or its C1 form),
# OSC, DCS/SOS/PM/APC strings up to their terminator, charset selections (ESC ( B) and two-character escapes.
_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]+[0-~]"
    r"|\x1b[0-~]?"
)
# C0 controls but tab and newline, DEL, C1 controls; zero-width characters, bidirectional marks, embeddings,
# overrides and isolates, and the tag characters that spell hidden ASCII.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\U000e0000-\U000e007f]"
)
_LINE_BREAKS = str.maketrans({"\u2028": "\n", "\u2029": "\n"})  # line breaks in disguise: shown as what they are


def sanitise(text: str) -> str:
    """`text` without escape sequences and invisible controls, its Unicode line separators as newlines (notebook 02)."""
    return _INVISIBLE.sub("", _ESCAPE.sub("", text)).translate(_LINE_BREAKS)


def sanitise_data(value: Any) -> Any:
    """Structured content with every string in it (keys too) sanitised."""
    if isinstance(value, str):
        return sanitise(value)
    if isinstance(value, dict):
        return {sanitise_data(key): sanitise_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [sanitise_data(item) for item in value]
    return value
