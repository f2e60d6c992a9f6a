"""Text wrapped by display columns: a wide character (Chinese, East Asian Width W or F) takes two."""

from __future__ import annotations

import re
import textwrap
import unicodedata

__all__ = ["wrap_columns"]

# While wrapping, each wide character is followed by this filler, so textwrap's len() counts it twice.
_FILLER = "\x00"
_WIDE_PAIR = re.compile(f"(.{_FILLER})")
# The marks Chinese typesetting never begins a line with (避头点): one that would hangs at the end of the line before.
_NO_LINE_START = frozenset("：，。、；？！）》」』】…")


class _ColumnWrapper(textwrap.TextWrapper):
    """textwrap's rules, with every wide character (and its filler) a chunk of its own.

    A line may then break before any Chinese character, as Chinese is written, and a pair is never
    split by the long-word rule. Text with no wide character is wrapped exactly as textwrap does.
    """

    def _split(self, text: str) -> list[str]:
        return [piece for chunk in super()._split(text) for piece in _WIDE_PAIR.split(chunk) if piece]


def wrap_columns(text: str, width: int) -> list[str]:
    """`text` as lines at most `width` columns wide, long words broken; a closing mark (：，。) never begins a line but
    hangs past the end of the line before, as Chinese is set (the diagrams of notebook 00)."""
    padded = "".join(c + _FILLER if unicodedata.east_asian_width(c) in "WF" else c for c in text)
    wrapper = _ColumnWrapper(width, break_long_words=True)
    lines = [line.replace(_FILLER, "") for line in wrapper.wrap(padded)]
    for i in range(1, len(lines)):
        while lines[i][:1] in _NO_LINE_START and lines[i]:
            lines[i - 1], lines[i] = lines[i - 1] + lines[i][0], lines[i][1:].lstrip()
    return [line for line in lines if line]
